package httpengine

import (
	"net/http"
	"net/textproto"
	"net/url"
	"slices"
	"strings"
)

// Response is a front door's response in the engine's terms, the same for
// every event kind and for net/http; it is the stored outcome (its JSON
// encoding is the record format). Cookies are never part of a stored one.
// Body holds the bytes as a string, base64-encoded when Base64 is set.
type Response struct {
	Status int         `json:"status"`
	Header http.Header `json:"header,omitempty"`
	Body   string      `json:"body,omitempty"`
	Base64 bool        `json:"base64,omitempty"`
}

// ReplayedHeader marks a replayed response.
const ReplayedHeader = "Idempotent-Replayed"

// replayed lists the response headers stored and replayed by default: those
// that describe the stored representation (RFC 9110 §8, RFC 9111 §5), not
// the session, the connection or the moment of the first response.
var replayed = []string{
	"Content-Type", "Content-Encoding", "Content-Language", "Content-Disposition",
	"Location", "Content-Location",
	"Cache-Control", "Expires", "ETag", "Last-Modified", "Vary",
}

// never lists the response headers that are not stored even when a
// deployment names them: cookies, credentials and authentication
// exchanges, the hop-by-hop headers of RFC 9110 §7.6.1, Content-Length
// (API Gateway and net/http compute it) and the replay marker.
var never = []string{
	"Set-Cookie", "Set-Cookie2",
	"Authorization", "Proxy-Authorization", "Proxy-Authenticate", "WWW-Authenticate", "Authentication-Info", "Proxy-Authentication-Info",
	"Connection", "Keep-Alive", "Proxy-Connection", "Te", "Trailer", "Transfer-Encoding", "Upgrade",
	"Content-Length", ReplayedHeader,
}

// credentialWords mark a header name as carrying a credential.
var credentialWords = []string{"token", "secret", "password", "api-key", "apikey", "access-key", "accesskey", "credential", "session", "signature", "auth"}

// storable returns the headers of h that are stored for replay: those in
// [replayed] and those the deployment adds, minus those it omits, those in
// [never], those whose names contain a credential word, and a Location or
// Content-Location that carries user info, a query, a fragment or path
// parameters (see [plainURL]). Everything else (CORS, Date,
// request and trace ids, authentication challenges, any header not listed)
// goes to the first client only.
func storable(h http.Header, add, omit []string) http.Header {
	keep := map[string]bool{}
	for _, name := range slices.Concat(replayed, add) {
		keep[textproto.CanonicalMIMEHeaderKey(name)] = true
	}
	for _, name := range slices.Concat(never, omit) {
		delete(keep, textproto.CanonicalMIMEHeaderKey(name))
	}
	out := http.Header{}
	for name, values := range h {
		name = textproto.CanonicalMIMEHeaderKey(name)
		if !keep[name] || hasCredentialWord(name) {
			continue
		}
		for _, v := range values {
			if (name == "Location" || name == "Content-Location") && !plainURL(v) {
				continue
			}
			out[name] = append(out[name], v)
		}
	}
	return out
}

// plainURL reports whether v is a URI reference without user info, a
// query, a fragment or path parameters: one that can name a resource to
// every client without lending any of them a credential. A presigned URL
// carries its credential in the query, an OAuth implicit-grant callback in
// the fragment (#access_token=…), a servlet session in a path parameter
// (;jsessionid=…); a percent-encoded ';' or '#' is part of a segment.
func plainURL(v string) bool {
	u, err := url.Parse(strings.TrimSpace(v))
	return err == nil && u.User == nil && u.RawQuery == "" && !u.ForceQuery && !strings.ContainsAny(v, "#;")
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
