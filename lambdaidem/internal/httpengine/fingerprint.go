package httpengine

import (
	"mime"
	"strings"
	"unicode/utf8"

	"github.com/lambdaidem/lambdaidem/lambdaidem"
)

// Parts is a set of request parts that make up a fingerprint.
type Parts uint8

// The request parts a fingerprint can cover.
const (
	PartMethod Parts = 1 << iota
	PartRoute
	PartPathParameters
	PartQuery
	PartBody

	// AllParts is every part: method, route, path parameters, query and body.
	AllParts = PartMethod | PartRoute | PartPathParameters | PartQuery | PartBody
)

// intent is what a fingerprint covers; a part left out of Options.Parts
// stays empty.
type intent struct {
	Method         string            `json:"method,omitempty"`
	Route          string            `json:"route,omitempty"`
	PathParameters map[string]string `json:"path,omitempty"`
	Query          string            `json:"query,omitempty"`
	MediaType      string            `json:"type,omitempty"`
	Body           string            `json:"body,omitempty"`
}

// fingerprint hashes the parts of r that define its intent: whatever the
// handler would read differently fingerprints differently.
//
// The query is its parsed form, sorted by name; a raw query string that does
// not parse is hashed as written (API Gateway's parsed map would make
// "x=1&x=2" and "x=1,2" one). The body comes with its media type (an
// "application/json" body and a "text/plain" one are different requests). A
// JSON body is canonicalized by [lambdaidem.FingerprintJSON] (key order and
// spacing do not matter; a body with a duplicate name, exact or case-folded,
// or one larger than [lambdaidem.MaxCanonicalJSON], is hashed as its bytes);
// any other body, a JSON body that does not parse, or one that is not valid
// UTF-8 (decoding it would replace the invalid bytes, so bodies differing
// only there would meet), is hashed as bytes.
func fingerprint(r *Request, parts Parts) (string, error) {
	var in intent
	if parts&PartMethod != 0 {
		in.Method = r.Method
	}
	if parts&PartRoute != 0 {
		in.Route = r.Route
	}
	if parts&PartPathParameters != 0 {
		in.PathParameters = r.PathParameters
	}
	if parts&PartQuery != 0 {
		in.Query = "parsed:" + r.Query.Encode() // sorted by name
		if r.UnparsedQuery != "" {
			in.Query = "raw:" + r.UnparsedQuery
		}
	}
	if parts&PartBody != 0 {
		contentType := strings.Join(r.Header.Values("Content-Type"), ", ")
		in.MediaType = mediaType(contentType)
		in.Body = bodyFingerprint(contentType, r.Body)
	}
	return lambdaidem.Fingerprint(in)
}

func bodyFingerprint(contentType string, body []byte) string {
	if isJSON(contentType) && utf8.Valid(body) {
		if fp, err := lambdaidem.FingerprintJSON(body); err == nil {
			return "json:" + fp
		}
	}
	return "bytes:" + lambdaidem.FingerprintBytes(body)
}

// isJSON reports whether a Content-Type names JSON: application/json or a
// +json type such as application/merge-patch+json.
func isJSON(contentType string) bool {
	mt, _, err := mime.ParseMediaType(contentType)
	if err != nil {
		return false
	}
	return mt == "application/json" || strings.HasSuffix(mt, "+json")
}

// mediaType is a Content-Type in a canonical form: type, subtype and
// parameter names in lower case, parameters sorted, the charset's value in
// lower case (charset names are case-insensitive, RFC 9110 §8.3.2). A value
// that does not parse (or several Content-Type headers) is kept as sent.
func mediaType(contentType string) string {
	mt, params, err := mime.ParseMediaType(contentType)
	if err != nil {
		return contentType
	}
	if cs, ok := params["charset"]; ok {
		params["charset"] = strings.ToLower(cs)
	}
	return mime.FormatMediaType(mt, params)
}
