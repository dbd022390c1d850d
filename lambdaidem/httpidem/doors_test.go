package httpidem_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/textproto"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/aws/aws-lambda-go/events"

	"github.com/lambdaidem/lambdaidem/lambdaidem"
	"github.com/lambdaidem/lambdaidem/lambdaidem/apigw"
	"github.com/lambdaidem/lambdaidem/lambdaidem/httpidem"
)

// The front doors the HTTP table runs through: apigw's HTTP API wrapper
// and the net/http middleware, which read one request the same way and
// must answer it with the same status, headers and body.

// request is one HTTP API request, in terms both doors can send.
type request struct {
	method string            // default POST
	path   string            // default /payments
	query  string            // the raw query string
	header map[string]string // default: the key "k-1" and a JSON body
	body   string            // default `{"amount":100}`
	sub    string            // the JWT subject; default "alice"; "-" for a token without one
}

const issuer = "https://idp.example.com/"

func (r request) filled() request {
	if r.method == "" {
		r.method = http.MethodPost
	}
	if r.path == "" {
		r.path = "/payments"
	}
	if r.header == nil {
		r.header = map[string]string{"Idempotency-Key": "k-1", "Content-Type": "application/json"}
	}
	if r.body == "" {
		r.body = `{"amount":100}`
	}
	if r.sub == "" {
		r.sub = "alice"
	}
	return r
}

// requestContext is the HTTP API request context of r: a JWT authorizer's
// claims and the route key.
func (r request) requestContext() events.APIGatewayV2HTTPRequestContext {
	claims := map[string]string{"iss": issuer, "sub": r.sub}
	if r.sub == "-" {
		delete(claims, "sub")
	}
	route := r.method + " " + r.path
	return events.APIGatewayV2HTTPRequestContext{
		RouteKey:   route,
		Authorizer: &events.APIGatewayV2HTTPRequestContextAuthorizerDescription{JWT: &events.APIGatewayV2HTTPRequestContextAuthorizerJWTDescription{Claims: claims}},
		HTTP:       events.APIGatewayV2HTTPRequestContextHTTPDescription{Method: r.method, Path: r.path},
	}
}

// reply is a response as a client reads it.
type reply struct {
	status int
	header http.Header
	body   string
}

// handler is a test handler in terms both doors can run: it reads the
// body and answers with a reply. ctx is the attempt's.
type handler func(ctx context.Context, body string) reply

// door builds a front door over g for h and returns how to send it a
// request.
type door struct {
	name  string
	build func(t *testing.T, g *lambdaidem.Guard, h handler) func(request) reply
}

var doors = []door{
	{name: "apigw", build: buildAPIGW},
	{name: "httpidem", build: buildMiddleware},
}

func buildAPIGW(t *testing.T, g *lambdaidem.Guard, h handler) func(request) reply {
	a, err := apigw.New(g, "CreatePayment", func(o *apigw.Options) { o.Logger = discard })
	if err != nil {
		t.Fatal(err)
	}
	wrapped := a.WrapV2(func(ctx context.Context, e events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error) {
		r := h(ctx, e.Body)
		out := events.APIGatewayV2HTTPResponse{StatusCode: r.status, Body: r.body, Headers: map[string]string{}}
		for name, values := range r.header {
			if name == "Set-Cookie" {
				out.Cookies = values
				continue
			}
			out.Headers[name] = strings.Join(values, ", ")
		}
		return out, nil
	})
	return func(r request) reply {
		r = r.filled()
		e := events.APIGatewayV2HTTPRequest{
			RouteKey:       r.method + " " + r.path,
			RawPath:        r.path,
			RawQueryString: r.query,
			Headers:        map[string]string{},
			Body:           r.body,
			RequestContext: r.requestContext(),
		}
		for k, v := range r.header {
			e.Headers[strings.ToLower(k)] = v // as HTTP APIs deliver them
		}
		out, err := wrapped(context.Background(), e)
		if err != nil {
			t.Fatalf("apigw: %v", err)
		}
		rep := reply{status: out.StatusCode, header: http.Header{}, body: out.Body}
		for k, v := range out.Headers {
			rep.header.Set(k, v)
		}
		for _, c := range out.Cookies {
			rep.header.Add("Set-Cookie", c)
		}
		return rep
	}
}

// v2Context carries an HTTP API request context, as
// aws-lambda-go-api-proxy's core.GetAPIGatewayV2ContextFromContext hands it
// over.
type v2Context struct{}

func v2FromContext(ctx context.Context) (events.APIGatewayV2HTTPRequestContext, bool) {
	rc, ok := ctx.Value(v2Context{}).(events.APIGatewayV2HTTPRequestContext)
	return rc, ok
}

func buildMiddleware(t *testing.T, g *lambdaidem.Guard, h handler) func(request) reply {
	mw, err := httpidem.New(g, "CreatePayment", func(o *httpidem.Options) {
		o.APIGatewayV2 = v2FromContext
		o.Logger = discard
	})
	if err != nil {
		t.Fatal(err)
	}
	wrapped := mw(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, err := io.ReadAll(r.Body)
		if err != nil {
			t.Errorf("reading the body: %v", err)
		}
		rep := h(r.Context(), string(b))
		for k, vs := range rep.header {
			w.Header()[k] = vs
		}
		w.WriteHeader(rep.status)
		_, _ = w.Write([]byte(rep.body))
	}))
	return func(r request) reply {
		r = r.filled()
		target := r.path
		if r.query != "" {
			target += "?" + r.query
		}
		req := httptest.NewRequest(r.method, target, strings.NewReader(r.body))
		for k, v := range r.header {
			req.Header.Set(k, v)
		}
		req = req.WithContext(context.WithValue(req.Context(), v2Context{}, r.requestContext()))
		rec := httptest.NewRecorder()
		wrapped.ServeHTTP(rec, req)
		res := rec.Result()
		res.Header.Del("Content-Length") // net/http's; API Gateway computes its own
		return reply{status: res.StatusCode, header: res.Header, body: rec.Body.String()}
	}
}

// payment is the handler most rows use: 201 with the representation
// headers a replay keeps and the session headers it drops, a body naming
// the run.
func payment(runs *atomic.Int32) handler {
	return func(_ context.Context, body string) reply {
		return paymentReply(runs.Add(1), body)
	}
}

func paymentReply(n int32, body string) reply {
	return reply{
		status: http.StatusCreated,
		header: http.Header{
			"Content-Type": {"application/json"},
			"Location":     {"/payments/pay_1"},
			"Etag":         {`"v1"`},
			"X-Request-Id": {"req-" + string(rune('0'+n))},
			"Set-Cookie":   {"session=s3cr3t"},
		},
		body: `{"id":"pay_1","run":` + string(rune('0'+n)) + `,"request":` + body + `}`,
	}
}

// headerOf reads one header of a reply as a client would.
func headerOf(r reply, name string) string {
	return strings.Join(r.header.Values(textproto.CanonicalMIMEHeaderKey(name)), ", ")
}
