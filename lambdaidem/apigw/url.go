package apigw

import (
	"context"
	"strings"

	"github.com/aws/aws-lambda-go/events"

	"github.com/lambdaidem/lambdaidem/lambdaidem/internal/httpengine"
)

// WrapURL returns h, a Lambda Function URL handler, made idempotent, with
// h's own signature. A Function URL has no routes: the route is the method
// and the normalized path (see [Request.Route]). It cannot fail: a nil h gives a
// handler whose every call returns an error.
func (a *Adapter) WrapURL(h func(context.Context, events.LambdaFunctionURLRequest) (events.LambdaFunctionURLResponse, error)) func(context.Context, events.LambdaFunctionURLRequest) (events.LambdaFunctionURLResponse, error) {
	if h == nil {
		h = func(context.Context, events.LambdaFunctionURLRequest) (events.LambdaFunctionURLResponse, error) {
			return events.LambdaFunctionURLResponse{}, errNilHandler
		}
	}
	return func(ctx context.Context, e events.LambdaFunctionURLRequest) (events.LambdaFunctionURLResponse, error) {
		r, refusal := requestURL(&e, a.engine)
		return serve(ctx, a, r, refusal, flavorURL, func(ctx context.Context) (events.LambdaFunctionURLResponse, error) { return h(ctx, e) })
	}
}

func requestURL(e *events.LambdaFunctionURLRequest, eng *httpengine.Engine) (*httpengine.Request, *Problem) {
	method := strings.ToUpper(e.RequestContext.HTTP.Method)
	path := e.RawPath
	if path == "" {
		path = e.RequestContext.HTTP.Path
	}
	query, unparsed := httpengine.ParseQuery(e.RawQueryString, e.QueryStringParameters)
	r := &httpengine.Request{
		Method:        method,
		Route:         method + " " + httpengine.NormalizePath(path),
		Path:          path,
		Query:         query,
		Header:        mergeHeaders(e.Headers, nil),
		Source:        e,
		UnparsedQuery: unparsed,
	}
	r.Caller = eng.CallerURL(&e.RequestContext)
	return r, setBody(r, e.Body, e.IsBase64Encoded)
}

var flavorURL = flavor[events.LambdaFunctionURLResponse]{
	toResponse: func(r events.LambdaFunctionURLResponse) httpengine.Response {
		return httpengine.Response{Status: r.StatusCode, Header: mergeHeaders(r.Headers, nil), Body: r.Body, Base64: r.IsBase64Encoded}
	},
	fromResponse: func(r httpengine.Response) events.LambdaFunctionURLResponse {
		return events.LambdaFunctionURLResponse{StatusCode: r.Status, Headers: single(r.Header), Body: r.Body, IsBase64Encoded: r.Base64}
	},
}
