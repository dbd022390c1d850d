package apigw

import (
	"encoding/base64"
	"net/http"
	"net/url"
)

// Request is the adapter's view of an event, the same for REST (v1), HTTP
// API (v2) and Function URL events. An [Options.Scope] function receives
// it; it must not modify it.
type Request struct {
	// Method is the HTTP method, upper case.
	Method string
	// Route is the method and the matched route: the HTTP API's route key
	// ("POST /payments/{id}"), the REST API's method and resource, or, where
	// there is no route (a Function URL, the $default route), the method and
	// the normalized path, so that "/payments/", "//payments",
	// "/a/../payments" and "/%70ayments" are one route "/payments". The
	// normalization decodes percent-encoded unreserved characters (letters,
	// digits, '-', '.', '_', '~') and upper-cases the hex digits of other
	// escapes (an encoded '/' stays encoded), drops empty segments (so a
	// trailing '/' too), and resolves "." and ".." segments, never above the
	// root (RFC 3986 §6.2.2 and §5.2.4). Letter case is kept.
	Route string
	// Path is the request path, as sent.
	Path string
	// PathParameters are the route's path parameters.
	PathParameters map[string]string
	// Query is the query string, parsed. A raw query string that does not
	// parse (a stray '%', a ';') keeps the pairs that do; the fingerprint
	// then hashes the raw string instead.
	Query url.Values
	// Header holds the request headers, canonical names.
	Header http.Header
	// Body is the request body, base64-decoded where the event encoded it.
	Body []byte
	// Principal is the authenticated caller the event names, with a prefix
	// saying where it came from: "jwt:<iss>|<sub>" (HTTP API JWT authorizer
	// or REST Cognito user pool authorizer), "lambda:<principalId>" (Lambda
	// authorizer), "iam:<user ARN>" (IAM authorization), "cognito:<identity
	// id>", or "apikey:<API key id>". It is empty for an anonymous request:
	// then every anonymous caller shares one scope, so set [Options.Scope] if
	// anonymous callers can use the API.
	Principal string
	// Event is the original event: an *events.APIGatewayProxyRequest, an
	// *events.APIGatewayV2HTTPRequest or an *events.LambdaFunctionURLRequest.
	Event any

	// unparsedQuery is the raw query string when it does not parse.
	unparsedQuery string
}

// decodeBody returns the body of an event, base64-decoded if it says so.
func decodeBody(body string, isBase64 bool) ([]byte, error) {
	if !isBase64 {
		return []byte(body), nil
	}
	return base64.StdEncoding.DecodeString(body)
}
