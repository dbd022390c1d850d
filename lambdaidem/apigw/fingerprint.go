package apigw

import (
	"mime"
	"strings"
	"unicode/utf8"

	"github.com/lambdaidem/lambdaidem/lambdaidem"
)

// intent is what a fingerprint covers; a part left out of Options.Parts
// stays empty.
type intent struct {
	Method         string            `json:"method,omitempty"`
	Route          string            `json:"route,omitempty"`
	PathParameters map[string]string `json:"path,omitempty"`
	Query          string            `json:"query,omitempty"`
	Body           string            `json:"body,omitempty"`
}

// fingerprint hashes the parts of r that define its intent. A JSON body is
// canonicalized first (key order and spacing do not matter); any other body,
// a JSON body that does not parse, or one that is not valid UTF-8 (decoding
// it would replace the invalid bytes, so bodies differing only there would
// meet), is hashed as bytes.
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
		in.Query = r.Query.Encode() // sorted by name
	}
	if parts&PartBody != 0 {
		in.Body = bodyFingerprint(r.Header.Get("Content-Type"), r.Body)
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
