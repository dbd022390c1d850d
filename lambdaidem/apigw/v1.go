package apigw

import (
	"context"
	"net/url"
	"strings"

	"github.com/aws/aws-lambda-go/events"

	"github.com/lambdaidem/lambdaidem/lambdaidem/internal/httpengine"
)

// WrapV1 returns h, a REST API (Lambda proxy integration, payload format
// 1.0) handler, made idempotent, with h's own signature. The key header is
// read from headers and multiValueHeaders alike. It cannot fail: a nil h gives a
// handler whose every call returns an error.
func (a *Adapter) WrapV1(h func(context.Context, events.APIGatewayProxyRequest) (events.APIGatewayProxyResponse, error)) func(context.Context, events.APIGatewayProxyRequest) (events.APIGatewayProxyResponse, error) {
	if h == nil {
		h = func(context.Context, events.APIGatewayProxyRequest) (events.APIGatewayProxyResponse, error) {
			return events.APIGatewayProxyResponse{}, errNilHandler
		}
	}
	return func(ctx context.Context, e events.APIGatewayProxyRequest) (events.APIGatewayProxyResponse, error) {
		r, refusal := requestV1(&e, a.engine)
		return serve(ctx, a, r, refusal, flavorV1, func(ctx context.Context) (events.APIGatewayProxyResponse, error) { return h(ctx, e) })
	}
}

func requestV1(e *events.APIGatewayProxyRequest, eng *httpengine.Engine) (*httpengine.Request, *Problem) {
	method := strings.ToUpper(e.HTTPMethod)
	resource := e.Resource
	if resource == "" {
		resource = e.Path
	}
	query := url.Values{}
	for k, vs := range e.MultiValueQueryStringParameters {
		query[k] = append([]string(nil), vs...)
	}
	for k, v := range e.QueryStringParameters {
		if _, ok := query[k]; !ok {
			query.Set(k, v)
		}
	}
	r := &httpengine.Request{
		Method:         method,
		Route:          method + " " + resource,
		Path:           e.Path,
		PathParameters: e.PathParameters,
		Query:          query,
		Header:         mergeHeaders(e.Headers, e.MultiValueHeaders),
		Source:         e,
	}
	r.Caller = eng.CallerV1(&e.RequestContext)
	return r, setBody(r, e.Body, e.IsBase64Encoded)
}

var flavorV1 = flavor[events.APIGatewayProxyResponse]{
	toResponse: func(r events.APIGatewayProxyResponse) httpengine.Response {
		return httpengine.Response{Status: r.StatusCode, Header: mergeHeaders(r.Headers, r.MultiValueHeaders), Body: r.Body, Base64: r.IsBase64Encoded}
	},
	fromResponse: func(r httpengine.Response) events.APIGatewayProxyResponse {
		out := events.APIGatewayProxyResponse{StatusCode: r.Status, Body: r.Body, IsBase64Encoded: r.Base64}
		out.Headers = make(map[string]string, len(r.Header))
		for name, values := range r.Header {
			if len(values) == 1 {
				out.Headers[name] = values[0]
				continue
			}
			if out.MultiValueHeaders == nil {
				out.MultiValueHeaders = map[string][]string{}
			}
			out.MultiValueHeaders[name] = append([]string(nil), values...)
		}
		return out
	},
}
