package apigw

import (
	"context"
	"strings"

	"github.com/aws/aws-lambda-go/events"

	"github.com/lambdaidem/lambdaidem/lambdaidem/internal/httpengine"
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
		r, refusal := requestV2(&e, a.engine)
		return serve(ctx, a, r, refusal, flavorV2, func(ctx context.Context) (events.APIGatewayV2HTTPResponse, error) { return h(ctx, e) })
	}
}

func requestV2(e *events.APIGatewayV2HTTPRequest, eng *httpengine.Engine) (*httpengine.Request, *Problem) {
	method := strings.ToUpper(e.RequestContext.HTTP.Method)
	path := e.RawPath
	if path == "" {
		path = e.RequestContext.HTTP.Path
	}
	route := e.RouteKey
	if route == "" || route == "$default" {
		route = method + " " + httpengine.NormalizePath(path)
	}
	query, unparsed := httpengine.ParseQuery(e.RawQueryString, e.QueryStringParameters)
	r := &httpengine.Request{
		Method:         method,
		Route:          route,
		Path:           path,
		PathParameters: e.PathParameters,
		Query:          query,
		Header:         mergeHeaders(e.Headers, nil),
		Source:         e,
		UnparsedQuery:  unparsed,
	}
	r.Caller = eng.CallerV2(&e.RequestContext)
	return r, setBody(r, e.Body, e.IsBase64Encoded)
}

var flavorV2 = flavor[events.APIGatewayV2HTTPResponse]{
	toResponse: func(r events.APIGatewayV2HTTPResponse) httpengine.Response {
		return httpengine.Response{Status: r.StatusCode, Header: mergeHeaders(r.Headers, r.MultiValueHeaders), Body: r.Body, Base64: r.IsBase64Encoded}
	},
	fromResponse: func(r httpengine.Response) events.APIGatewayV2HTTPResponse {
		return events.APIGatewayV2HTTPResponse{StatusCode: r.Status, Headers: single(r.Header), Body: r.Body, IsBase64Encoded: r.Base64}
	},
}
