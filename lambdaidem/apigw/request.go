package apigw

import (
	"encoding/base64"
	"net/http"
	"net/url"

	"github.com/lambdaidem/lambdaidem/lambdaidem/internal/httpengine"
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
	// saying where it came from:
	//
	//   - "jwt:<iss>|<sub>": an HTTP API JWT authorizer or a REST Cognito user
	//     pool authorizer, from the token's subject; for a token without
	//     "sub", "jwt-claim:<iss>|<name>|<value>" from the first claim named
	//     in [Options.IdentityClaims] that it holds;
	//   - "lambda:<principalId>": a Lambda authorizer's principalId (REST) or
	//     its context's "principalId" or "sub" value; else
	//     "lambda-context:<key>|<value>" from the first context key named in
	//     [Options.IdentityContextKeys] that it holds (a string, or an integer
	//     up to 2^53);
	//   - "cognito:<identity id>": a Cognito identity pool identity (REST IAM
	//     authorization, or an HTTP API IAM caller with a Cognito identity),
	//     before the IAM caller, whose role session all identities share;
	//   - "iam:<user ARN or caller id>": IAM authorization (REST, HTTP API,
	//     Function URL with AWS_IAM), except Cognito's shared role session;
	//   - "apikey:<API key id>": a REST API key, when nothing else is shown.
	//
	// It is empty when the event names no caller: then Authorizer says
	// whether it shows an authorizer (the request is refused, see
	// [ProblemUnidentifiedCaller]) or none (an anonymous request).
	Principal string
	// Authorizer is the kind of authorizer the event shows (AuthorizerJWT,
	// AuthorizerLambda, …), or empty for an event that shows none: a route
	// without authorization, a Function URL with AuthType NONE. A Lambda
	// authorizer that returns no context may leave no trace in an HTTP API
	// event: set [Options.RefuseAnonymous] on such a route.
	Authorizer string
	// Event is the original event: an *events.APIGatewayProxyRequest, an
	// *events.APIGatewayV2HTTPRequest or an *events.LambdaFunctionURLRequest.
	Event any
}

// view is the Request the options' functions see of r.
func view(r *httpengine.Request) *Request {
	return &Request{
		Method:         r.Method,
		Route:          r.Route,
		Path:           r.Path,
		PathParameters: r.PathParameters,
		Query:          r.Query,
		Header:         r.Header,
		Body:           r.Body,
		Principal:      r.Caller.Principal,
		Authorizer:     r.Caller.Authorizer,
		Event:          r.Source,
	}
}

// decodeBody returns the body of an event, base64-decoded if it says so.
func decodeBody(body string, isBase64 bool) ([]byte, error) {
	if !isBase64 {
		return []byte(body), nil
	}
	return base64.StdEncoding.DecodeString(body)
}

// setBody decodes an event's body into r, or returns the problem that
// refuses a body that does not decode.
func setBody(r *httpengine.Request, body string, isBase64 bool) *Problem {
	b, err := decodeBody(body, isBase64)
	if err != nil {
		return httpengine.NewProblem(http.StatusBadRequest, ProblemMalformedRequest, "Malformed request", "the body is marked base64 but does not decode")
	}
	r.Body = b
	return nil
}
