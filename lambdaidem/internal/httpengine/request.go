package httpengine

import (
	"net/http"
	"net/url"
)

// Request is a front door's request in the engine's terms: what the key,
// the scope and the fingerprint are read from.
type Request struct {
	// Method is the HTTP method, upper case.
	Method string
	// Route is the method and the matched route, or the method and the
	// normalized path (see [NormalizePath]) where there is no route.
	Route string
	// Path is the request path, as sent.
	Path string
	// PathParameters are the route's path parameters.
	PathParameters map[string]string
	// Query is the query string, parsed.
	Query url.Values
	// UnparsedQuery is the raw query string when it does not parse; the
	// fingerprint then hashes it as written.
	UnparsedQuery string
	// Header holds the request headers, canonical names.
	Header http.Header
	// Body is the request body, decoded.
	Body []byte
	// Caller is what the request says about who sent it.
	Caller Caller
	// Source is the front door's own request (an event, an *http.Request),
	// for the callbacks that map the engine's request back onto it.
	Source any
}

// ParseQuery reads a raw query string, or, if it is empty, parsed
// parameters (hand-built and some emulated events carry only those). A raw
// string that does not parse yields the pairs that do, and itself as
// unparsed, for the fingerprint to hash as written: API Gateway's parsed
// map joins repeated names with commas, so it cannot tell "x=1&x=2" from
// "x=1,2".
func ParseQuery(raw string, parsed map[string]string) (q url.Values, unparsed string) {
	if raw == "" && len(parsed) > 0 {
		q = url.Values{}
		for k, v := range parsed {
			q.Set(k, v)
		}
		return q, ""
	}
	q, err := url.ParseQuery(raw)
	if err != nil {
		return q, raw
	}
	return q, ""
}
