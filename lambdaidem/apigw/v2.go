package apigw

import (
	"context"
	"net/http"
	"net/url"
	"strings"

	"github.com/aws/aws-lambda-go/events"
)

// WrapV2 returns h, an HTTP API (payload format 2.0) handler, made
// idempotent, with h's own signature. It cannot fail: a nil h gives a
// handler whose every call returns an error.
func (a *Adapter) WrapV2(h func(context.Context, events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error)) func(context.Context, events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error) {
	if h == nil {
		h = func(context.Context, events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error) {
			return events.APIGatewayV2HTTPResponse{}, errNilHandler
		}
	}
	return func(ctx context.Context, e events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error) {
		r, refusal := requestV2(&e, a.keys)
		return serve(ctx, a, r, refusal, flavorV2, func(ctx context.Context) (events.APIGatewayV2HTTPResponse, error) { return h(ctx, e) })
	}
}

func requestV2(e *events.APIGatewayV2HTTPRequest, keys identityKeys) (*Request, *Problem) {
	method := strings.ToUpper(e.RequestContext.HTTP.Method)
	path := e.RawPath
	if path == "" {
		path = e.RequestContext.HTTP.Path
	}
	route := e.RouteKey
	if route == "" || route == "$default" {
		route = method + " " + normalizePath(path)
	}
	query, unparsed := parseQuery(e.RawQueryString, e.QueryStringParameters)
	r := &Request{
		Method:         method,
		Route:          route,
		Path:           path,
		PathParameters: e.PathParameters,
		Query:          query,
		Header:         mergeHeaders(e.Headers, nil),
		Event:          e,
		unparsedQuery:  unparsed,
	}
	r.setCaller(principalV2(&e.RequestContext, keys))
	return r, r.setBody(e.Body, e.IsBase64Encoded)
}

var flavorV2 = flavor[events.APIGatewayV2HTTPResponse]{
	toResponse: func(r events.APIGatewayV2HTTPResponse) response {
		return response{Status: r.StatusCode, Header: mergeHeaders(r.Headers, r.MultiValueHeaders), Body: r.Body, Base64: r.IsBase64Encoded}
	},
	fromResponse: func(r response) events.APIGatewayV2HTTPResponse {
		return events.APIGatewayV2HTTPResponse{StatusCode: r.Status, Headers: single(r.Header), Body: r.Body, IsBase64Encoded: r.Base64}
	},
}

// parseQuery reads a raw query string, or, if it is empty, the event's
// parsed parameters (hand-built and some emulated events carry only those).
// A raw string that does not parse yields the pairs that do, and itself as
// unparsed, for the fingerprint to hash as written: API Gateway's parsed map
// joins repeated names with commas, so it cannot tell "x=1&x=2" from
// "x=1,2".
func parseQuery(raw string, parsed map[string]string) (q url.Values, unparsed string) {
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

// setBody decodes an event's body into r, or returns the problem that
// refuses a body that does not decode.
func (r *Request) setBody(body string, isBase64 bool) *Problem {
	b, err := decodeBody(body, isBase64)
	if err != nil {
		return problem(http.StatusBadRequest, ProblemMalformedRequest, "Malformed request", "the body is marked base64 but does not decode")
	}
	r.Body = b
	return nil
}
