package apigw

import (
	"net/http"
	"net/textproto"
	"slices"
	"strings"
)

// response is the adapter's view of a handler's response, the same for the
// three event kinds; it is the stored outcome. Cookies are never part of it.
type response struct {
	Status int         `json:"status"`
	Header http.Header `json:"header,omitempty"`
	Body   string      `json:"body,omitempty"`
	Base64 bool        `json:"base64,omitempty"`
}

// replayedHeader marks a replayed response.
const replayedHeader = "Idempotent-Replayed"

// omitted lists the response headers that are neither stored nor replayed:
// cookies, credentials, the hop-by-hop headers of RFC 9110 §7.6.1, and
// Content-Length, which API Gateway computes.
var omitted = []string{
	"Set-Cookie", "Set-Cookie2",
	"Authorization", "Proxy-Authorization", "Proxy-Authenticate",
	"Connection", "Keep-Alive", "Proxy-Connection", "Te", "Trailer", "Transfer-Encoding", "Upgrade",
	"Content-Length", replayedHeader,
}

// credentialWords mark a header name as carrying a credential.
var credentialWords = []string{"token", "secret", "password", "api-key", "apikey", "credential"}

// storable returns h without the headers that must not be stored: those in
// [omitted], those named in extra, those the Connection header names, and
// those whose names contain a credential word (X-Auth-Token, X-Api-Key, …).
func storable(h http.Header, extra []string) http.Header {
	drop := map[string]bool{}
	for _, name := range slices.Concat(omitted, extra) {
		drop[textproto.CanonicalMIMEHeaderKey(name)] = true
	}
	for _, v := range h.Values("Connection") {
		for name := range strings.SplitSeq(v, ",") {
			drop[textproto.CanonicalMIMEHeaderKey(strings.TrimSpace(name))] = true
		}
	}
	out := http.Header{}
	for name, values := range h {
		name = textproto.CanonicalMIMEHeaderKey(name)
		if drop[name] || hasCredentialWord(name) {
			continue
		}
		out[name] = append(out[name], values...)
	}
	return out
}

func hasCredentialWord(name string) bool {
	lower := strings.ToLower(name)
	for _, w := range credentialWords {
		if strings.Contains(lower, w) {
			return true
		}
	}
	return false
}

// mergeHeaders joins single- and multi-valued header maps the way API
// Gateway does: a name in both keeps the multi-valued list. Names that
// differ only in case are one header: their values are kept together, so
// a header sent twice under two spellings still shows twice.
func mergeHeaders(single map[string]string, multi map[string][]string) http.Header {
	h := http.Header{}
	for name, values := range multi {
		k := textproto.CanonicalMIMEHeaderKey(name)
		h[k] = append(h[k], values...)
	}
	inMulti := make(map[string]bool, len(h))
	for k := range h {
		inMulti[k] = true
	}
	for name, v := range single {
		if k := textproto.CanonicalMIMEHeaderKey(name); !inMulti[k] {
			h[k] = append(h[k], v)
		}
	}
	return h
}

// single flattens h into one value per name, joining repeats with ", ".
func single(h http.Header) map[string]string {
	m := make(map[string]string, len(h))
	for name, values := range h {
		m[name] = strings.Join(values, ", ")
	}
	return m
}
