package frontdoor

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-lambda-go/lambdaurl"
)

// The fixed parts of every event: an account, a Region, a Function URL's
// domain, a stage, a source address.
const (
	account    = "123456789012"
	region     = "us-east-1"
	urlDomain  = "abcdefghijklmnopqrstuvwxyz012345.lambda-url." + region + ".on.aws"
	apiDomain  = "abcdef1234.execute-api." + region + ".amazonaws.com"
	sourceIP   = "192.0.2.10"
	userAgent  = "frontdoor"
	requestID  = "c6af9ac6-7b61-11e6-9a41-93e8deadbeef"
	restStage  = "test"
	httpStage  = "$default"
	defaultKey = "Idempotency-Key"
)

// Request is an HTTP request to send through a front door. Build it with
// [NewRequest]; set the fields or use the With methods.
type Request struct {
	// Method is the HTTP method ("POST").
	Method string
	// Target is the path, with its query if any ("/orders/o-1?expand=1").
	Target string
	// Route is the route the request matched: a REST API's resource
	// ("/orders/{id}"), an HTTP API's route path (its route key is Method
	// and Route). Empty: a REST API's resource is the path, an HTTP API's
	// route key "$default".
	Route string
	// PathParameters are the route's parameters ({"id": "o-1"}).
	PathParameters map[string]string
	// Header holds the request's headers.
	Header http.Header
	// Body is the request body, sent as text.
	Body string
	// Caller is who sends it.
	Caller Caller
}

// NewRequest returns a request of method to target (a path, with its query
// if any) with body; a non-empty body is sent as application/json.
func NewRequest(method, target, body string) Request {
	r := Request{Method: method, Target: target, Body: body, Header: http.Header{}}
	if body != "" {
		r.Header.Set("Content-Type", "application/json")
	}
	return r
}

// WithKey returns r with the Idempotency-Key header set to key.
func (r Request) WithKey(key string) Request { return r.WithHeader(defaultKey, key) }

// WithHeader returns r with the header name set to value.
func (r Request) WithHeader(name, value string) Request {
	r.Header = r.Header.Clone()
	if r.Header == nil {
		r.Header = http.Header{}
	}
	r.Header.Set(name, value)
	return r
}

// WithRoute returns r matched by route (a REST resource or HTTP API route
// path, "/orders/{id}") with these path parameters (name, value pairs).
func (r Request) WithRoute(route string, params ...string) Request {
	r.Route = route
	r.PathParameters = map[string]string{}
	for i := 0; i+1 < len(params); i += 2 {
		r.PathParameters[params[i]] = params[i+1]
	}
	return r
}

// As returns r sent by c.
func (r Request) As(c Caller) Request { r.Caller = c; return r }

// Response is a front door's answer.
type Response struct {
	// Status is the HTTP status.
	Status int
	// Header holds the response's headers.
	Header http.Header
	// Body is the response body, decoded if the event carried it in base64.
	Body string
	// Cookies are the Set-Cookie values of an HTTP API or Function URL
	// response.
	Cookies []string
}

// Replayed reports whether the response is a stored one replayed to a
// duplicate (the Idempotent-Replayed header).
func (r Response) Replayed() bool { return r.Header.Get("Idempotent-Replayed") == "true" }

// parts are the pieces of r the events share.
type parts struct {
	path, rawQuery string
	query          url.Values
	headers        map[string]string   // canonical names, values joined by ","
	multi          map[string][]string // canonical names
	lower          map[string]string   // lower-case names (HTTP API, Function URL)
	cookies        []string
}

func (r Request) parts() (parts, error) {
	if r.Method == "" {
		return parts{}, errors.New("frontdoor: request without a method")
	}
	u, err := url.Parse(r.Target)
	if err != nil || u.Path == "" || !strings.HasPrefix(u.Path, "/") || u.Host != "" {
		return parts{}, fmt.Errorf("frontdoor: target %q is not a path (with an optional query)", r.Target)
	}
	p := parts{path: u.EscapedPath(), rawQuery: u.RawQuery, query: u.Query(),
		headers: map[string]string{}, multi: map[string][]string{}, lower: map[string]string{}}
	for name, values := range r.Header {
		if strings.EqualFold(name, "Cookie") {
			for _, v := range values {
				for c := range strings.SplitSeq(v, ";") {
					if c = strings.TrimSpace(c); c != "" {
						p.cookies = append(p.cookies, c)
					}
				}
			}
		}
		name = http.CanonicalHeaderKey(name)
		p.headers[name] = strings.Join(values, ",")
		p.multi[name] = slices.Clone(values)
		p.lower[strings.ToLower(name)] = strings.Join(values, ",")
	}
	return p, nil
}

// single is the first value of each query parameter, as API Gateway's
// queryStringParameters (v1); v2 joins them with commas.
func single(q url.Values, join bool) map[string]string {
	if len(q) == 0 {
		return nil
	}
	out := make(map[string]string, len(q))
	for k, v := range q {
		if join {
			out[k] = strings.Join(v, ",")
		} else {
			out[k] = v[len(v)-1]
		}
	}
	return out
}

// REST returns r as a REST API (v1) proxy integration event.
func (r Request) REST() (events.APIGatewayProxyRequest, error) {
	p, err := r.parts()
	if err != nil {
		return events.APIGatewayProxyRequest{}, err
	}
	resource := r.Route
	if resource == "" {
		resource = p.path
	}
	rc := events.APIGatewayProxyRequestContext{
		AccountID: account, ResourceID: "abc123", Stage: restStage, RequestID: requestID,
		ResourcePath: resource, HTTPMethod: r.Method, Path: "/" + restStage + p.path, APIID: "abcdef1234", Protocol: "HTTP/1.1",
		DomainName: apiDomain,
		Identity:   events.APIGatewayRequestIdentity{SourceIP: sourceIP, UserAgent: userAgent},
	}
	switch c := r.Caller; c.kind {
	case kindJWT:
		claims := make(map[string]any, len(c.claims))
		for k, v := range c.claims {
			claims[k] = v
		}
		rc.Authorizer = map[string]any{"claims": claims}
	case kindLambda:
		rc.Authorizer = maps.Clone(c.context)
	case kindIAM:
		rc.Identity.UserArn, rc.Identity.AccessKey, rc.Identity.AccountID = c.arn, "ASIAEXAMPLE", account
		rc.Identity.Caller = callerID(c.arn)
	case kindAPIKey:
		rc.Identity.APIKeyID, rc.Identity.APIKey = c.keyID, "key-of-"+c.keyID
	}
	return events.APIGatewayProxyRequest{
		Resource: resource, Path: p.path, HTTPMethod: r.Method,
		Headers: p.headers, MultiValueHeaders: p.multi,
		QueryStringParameters: single(p.query, false), MultiValueQueryStringParameters: p.query,
		PathParameters: maps.Clone(r.PathParameters), RequestContext: rc, Body: r.Body,
	}, nil
}

// callerID is the caller id IAM gives a principal: its user id, here made
// from the ARN's last part.
func callerID(arn string) string {
	return "AIDAEXAMPLE:" + arn[strings.LastIndexAny(arn, "/:")+1:]
}

// HTTPAPI returns r as an HTTP API (v2) event.
func (r Request) HTTPAPI() (events.APIGatewayV2HTTPRequest, error) {
	p, err := r.parts()
	if err != nil {
		return events.APIGatewayV2HTTPRequest{}, err
	}
	routeKey := "$default"
	if r.Route != "" {
		routeKey = r.Method + " " + r.Route
	}
	rc := events.APIGatewayV2HTTPRequestContext{
		RouteKey: routeKey, AccountID: account, Stage: httpStage, RequestID: requestID, APIID: "abcdef1234",
		DomainName: apiDomain, DomainPrefix: "abcdef1234",
		HTTP: events.APIGatewayV2HTTPRequestContextHTTPDescription{Method: r.Method, Path: p.path, Protocol: "HTTP/1.1", SourceIP: sourceIP, UserAgent: userAgent},
	}
	switch c := r.Caller; c.kind {
	case kindJWT:
		rc.Authorizer = &events.APIGatewayV2HTTPRequestContextAuthorizerDescription{
			JWT: &events.APIGatewayV2HTTPRequestContextAuthorizerJWTDescription{Claims: maps.Clone(c.claims)}}
	case kindLambda:
		rc.Authorizer = &events.APIGatewayV2HTTPRequestContextAuthorizerDescription{Lambda: maps.Clone(c.context)}
	case kindIAM:
		rc.Authorizer = &events.APIGatewayV2HTTPRequestContextAuthorizerDescription{
			IAM: &events.APIGatewayV2HTTPRequestContextAuthorizerIAMDescription{
				UserARN: c.arn, CallerID: callerID(c.arn), AccessKey: "ASIAEXAMPLE", AccountID: account}}
	case kindAPIKey:
		return events.APIGatewayV2HTTPRequest{}, errors.New("frontdoor: an HTTP API has no API keys (a REST API's usage plans do): send the request with REST")
	}
	return events.APIGatewayV2HTTPRequest{
		Version: "2.0", RouteKey: routeKey, RawPath: p.path, RawQueryString: p.rawQuery, Cookies: p.cookies,
		Headers: p.lower, QueryStringParameters: single(p.query, true), PathParameters: maps.Clone(r.PathParameters),
		RequestContext: rc, Body: r.Body,
	}, nil
}

// FunctionURL returns r as a Function URL event. A Function URL knows an
// IAM caller (AuthType AWS_IAM) or none (AuthType NONE): another caller is
// an error.
func (r Request) FunctionURL() (events.LambdaFunctionURLRequest, error) {
	p, err := r.parts()
	if err != nil {
		return events.LambdaFunctionURLRequest{}, err
	}
	rc := events.LambdaFunctionURLRequestContext{
		AccountID: account, RequestID: requestID, APIID: "abcdefghijklmnopqrstuvwxyz012345",
		DomainName: urlDomain, DomainPrefix: "abcdefghijklmnopqrstuvwxyz012345",
		HTTP: events.LambdaFunctionURLRequestContextHTTPDescription{Method: r.Method, Path: p.path, Protocol: "HTTP/1.1", SourceIP: sourceIP, UserAgent: userAgent},
	}
	switch c := r.Caller; c.kind {
	case "":
	case kindIAM:
		rc.Authorizer = &events.LambdaFunctionURLRequestContextAuthorizerDescription{
			IAM: &events.LambdaFunctionURLRequestContextAuthorizerIAMDescription{
				UserARN: c.arn, CallerID: callerID(c.arn), AccessKey: "ASIAEXAMPLE", AccountID: account}}
	default:
		return events.LambdaFunctionURLRequest{}, fmt.Errorf("frontdoor: a Function URL has no %s (its AuthType is AWS_IAM or NONE): send it as IAM or Anonymous", c.kind)
	}
	return events.LambdaFunctionURLRequest{
		Version: "2.0", RawPath: p.path, RawQueryString: p.rawQuery, Cookies: p.cookies,
		Headers: p.lower, QueryStringParameters: single(p.query, true), RequestContext: rc, Body: r.Body,
	}, nil
}

// REST sends r to h, a REST API (v1) handler (apigw.Adapter.WrapV1), and
// returns its response. The error is the event's (a bad request) or h's.
func REST(ctx context.Context, h func(context.Context, events.APIGatewayProxyRequest) (events.APIGatewayProxyResponse, error), r Request) (Response, error) {
	e, err := r.REST()
	if err != nil {
		return Response{}, err
	}
	out, err := h(ctx, e)
	if err != nil {
		return Response{}, err
	}
	return response(out.StatusCode, out.Headers, out.MultiValueHeaders, out.Body, out.IsBase64Encoded, nil)
}

// HTTPAPI sends r to h, an HTTP API (v2) handler (apigw.Adapter.WrapV2).
func HTTPAPI(ctx context.Context, h func(context.Context, events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error), r Request) (Response, error) {
	e, err := r.HTTPAPI()
	if err != nil {
		return Response{}, err
	}
	out, err := h(ctx, e)
	if err != nil {
		return Response{}, err
	}
	return response(out.StatusCode, out.Headers, out.MultiValueHeaders, out.Body, out.IsBase64Encoded, out.Cookies)
}

// FunctionURL sends r to h, a Function URL handler of events
// (apigw.Adapter.WrapURL).
func FunctionURL(ctx context.Context, h func(context.Context, events.LambdaFunctionURLRequest) (events.LambdaFunctionURLResponse, error), r Request) (Response, error) {
	e, err := r.FunctionURL()
	if err != nil {
		return Response{}, err
	}
	out, err := h(ctx, e)
	if err != nil {
		return Response{}, err
	}
	return response(out.StatusCode, out.Headers, nil, out.Body, out.IsBase64Encoded, out.Cookies)
}

// LambdaURL sends r as a Function URL event through lambdaurl.Wrap to h,
// an http.Handler (a mux with httpidem's middleware), as lambdaurl.Start
// runs it in Lambda, and reads the streamed response to its end. The
// handler sees the event in its context (lambdaurl.RequestFromContext), so
// httpidem reads the caller from it: the test sets no Options.Scope.
func LambdaURL(ctx context.Context, h http.Handler, r Request) (Response, error) {
	e, err := r.FunctionURL()
	if err != nil {
		return Response{}, err
	}
	out, err := lambdaurl.Wrap(h)(ctx, &e)
	if err != nil {
		return Response{}, err
	}
	var body []byte
	if out.Body != nil {
		if body, err = io.ReadAll(out.Body); err != nil {
			return Response{}, fmt.Errorf("frontdoor: reading the streamed body: %w", err)
		}
	}
	resp := Response{Status: out.StatusCode, Header: http.Header{}, Body: string(body), Cookies: out.Cookies}
	for k, v := range out.Headers {
		resp.Header.Set(k, v)
	}
	return resp, nil
}

// response is an event response as a Response.
func response(status int, headers map[string]string, multi map[string][]string, body string, isBase64 bool, cookies []string) (Response, error) {
	resp := Response{Status: status, Header: http.Header{}, Body: body, Cookies: cookies}
	for k, v := range headers {
		resp.Header.Set(k, v)
	}
	for k, vs := range multi {
		resp.Header.Del(k)
		for _, v := range vs {
			resp.Header.Add(k, v)
		}
	}
	if isBase64 {
		b, err := base64.StdEncoding.DecodeString(body)
		if err != nil {
			return Response{}, fmt.Errorf("frontdoor: the response's base64 body: %w", err)
		}
		resp.Body = string(b)
	}
	return resp, nil
}
