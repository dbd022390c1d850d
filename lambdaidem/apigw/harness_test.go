package apigw_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/aws/aws-lambda-go/events"

	"github.com/lambdaidem/lambdaidem/lambdaidem/apigw"
)

// reply is a response in terms common to the three event kinds.
type reply struct {
	Status  int
	Header  http.Header
	Body    string
	Base64  bool
	Cookies []string
}

// edit changes a fixture event before it is sent.
type edit struct {
	method    string            // replaces the method
	setHeader map[string]string // header name (as written) → value
	delHeader []string          // header names, any case
	multiOnly bool              // v1: set headers in multiValueHeaders only
	body      *string           // replaces the body
	base64    bool              // sends body base64-encoded
	badBase64 bool              // marks the body base64 without encoding it
	principal string            // replaces the authenticated principal's id
	query     string            // replaces the raw query string
}

// handler is a test handler, in terms common to the three event kinds.
type handler func(ctx context.Context, body []byte) (reply, error)

// kind drives one event kind through a wrapped handler.
type kind struct {
	name    string
	fixture string
	// send delivers the fixture, changed by e, to a.WrapXxx(h).
	send func(t *testing.T, a *apigw.Adapter, ctx context.Context, e edit, h handler) (reply, error)
}

var kinds = []kind{
	{name: "v1", fixture: "v1-rest-lambda-authorizer.json", send: sendV1},
	{name: "v2", fixture: "v2-http-jwt.json", send: sendV2},
	{name: "url", fixture: "url-iam.json", send: sendURL},
}

func forEachKind(t *testing.T, test func(t *testing.T, k kind)) {
	for _, k := range kinds {
		t.Run(k.name, func(t *testing.T) { test(t, k) })
	}
}

func load[E any](t *testing.T, name string) E {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	var e E
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&e); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return e
}

// decodedBody returns the body an event carries, decoded.
func decodedBody(t *testing.T, body string, isBase64 bool) []byte {
	t.Helper()
	if !isBase64 {
		return []byte(body)
	}
	b, err := base64.StdEncoding.DecodeString(body)
	if err != nil {
		t.Fatalf("handler got a bad base64 body: %v", err)
	}
	return b
}

func encodeBody(e edit, current string) (string, bool) {
	b := current
	if e.body != nil {
		b = *e.body
	}
	if e.base64 {
		return base64.StdEncoding.EncodeToString([]byte(b)), true
	}
	if e.badBase64 {
		return b, true
	}
	return b, false
}

func sendV1(t *testing.T, a *apigw.Adapter, ctx context.Context, e edit, h handler) (reply, error) {
	ev := load[events.APIGatewayProxyRequest](t, "v1-rest-lambda-authorizer.json")
	if e.method != "" {
		ev.HTTPMethod, ev.RequestContext.HTTPMethod = e.method, e.method
	}
	for _, name := range e.delHeader {
		for k := range ev.Headers {
			if http.CanonicalHeaderKey(k) == http.CanonicalHeaderKey(name) {
				delete(ev.Headers, k)
				delete(ev.MultiValueHeaders, k)
			}
		}
	}
	for k, v := range e.setHeader {
		if !e.multiOnly {
			ev.Headers[k] = v
		}
		ev.MultiValueHeaders[k] = []string{v}
	}
	ev.Body, ev.IsBase64Encoded = encodeBody(e, ev.Body)
	if e.principal != "" {
		ev.RequestContext.Authorizer["principalId"] = e.principal
	}
	if e.query != "" {
		ev.QueryStringParameters = map[string]string{"q": e.query}
		ev.MultiValueQueryStringParameters = map[string][]string{"q": {e.query}}
	}
	wrapped := a.WrapV1(func(ctx context.Context, in events.APIGatewayProxyRequest) (events.APIGatewayProxyResponse, error) {
		r, err := h(ctx, decodedBody(t, in.Body, in.IsBase64Encoded))
		out := events.APIGatewayProxyResponse{StatusCode: r.Status, Body: r.Body, IsBase64Encoded: r.Base64, MultiValueHeaders: r.Header}
		if len(r.Cookies) > 0 {
			out.MultiValueHeaders = r.Header.Clone()
			out.MultiValueHeaders["Set-Cookie"] = r.Cookies
		}
		return out, err
	})
	out, err := wrapped(ctx, ev)
	h2 := http.Header{}
	for k, v := range out.Headers {
		h2.Set(k, v)
	}
	for k, vs := range out.MultiValueHeaders {
		h2[http.CanonicalHeaderKey(k)] = vs
	}
	return reply{Status: out.StatusCode, Header: h2, Body: out.Body, Base64: out.IsBase64Encoded, Cookies: h2.Values("Set-Cookie")}, err
}

func sendV2(t *testing.T, a *apigw.Adapter, ctx context.Context, e edit, h handler) (reply, error) {
	ev := load[events.APIGatewayV2HTTPRequest](t, "v2-http-jwt.json")
	if e.method != "" {
		ev.RequestContext.HTTP.Method = e.method
		ev.RouteKey = e.method + " /payments"
		ev.RequestContext.RouteKey = ev.RouteKey
	}
	editLower(ev.Headers, e)
	ev.Body, ev.IsBase64Encoded = encodeBody(e, ev.Body)
	if e.principal != "" {
		ev.RequestContext.Authorizer.JWT.Claims["sub"] = e.principal
	}
	if e.query != "" {
		ev.RawQueryString = "q=" + e.query
	}
	wrapped := a.WrapV2(func(ctx context.Context, in events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error) {
		r, err := h(ctx, decodedBody(t, in.Body, in.IsBase64Encoded))
		return events.APIGatewayV2HTTPResponse{StatusCode: r.Status, Headers: flat(r.Header), Body: r.Body, IsBase64Encoded: r.Base64, Cookies: r.Cookies}, err
	})
	out, err := wrapped(ctx, ev)
	return reply{Status: out.StatusCode, Header: unflat(out.Headers), Body: out.Body, Base64: out.IsBase64Encoded, Cookies: out.Cookies}, err
}

func sendURL(t *testing.T, a *apigw.Adapter, ctx context.Context, e edit, h handler) (reply, error) {
	ev := load[events.LambdaFunctionURLRequest](t, "url-iam.json")
	if e.method != "" {
		ev.RequestContext.HTTP.Method = e.method
	}
	editLower(ev.Headers, e)
	ev.Body, ev.IsBase64Encoded = encodeBody(e, ev.Body)
	if e.principal != "" {
		ev.RequestContext.Authorizer.IAM.UserARN = "arn:aws:iam::123456789012:user/" + e.principal
	}
	if e.query != "" {
		ev.RawQueryString = "q=" + e.query
	}
	wrapped := a.WrapURL(func(ctx context.Context, in events.LambdaFunctionURLRequest) (events.LambdaFunctionURLResponse, error) {
		r, err := h(ctx, decodedBody(t, in.Body, in.IsBase64Encoded))
		return events.LambdaFunctionURLResponse{StatusCode: r.Status, Headers: flat(r.Header), Body: r.Body, IsBase64Encoded: r.Base64, Cookies: r.Cookies}, err
	})
	out, err := wrapped(ctx, ev)
	return reply{Status: out.StatusCode, Header: unflat(out.Headers), Body: out.Body, Base64: out.IsBase64Encoded, Cookies: out.Cookies}, err
}

// editLower applies e's header edits the way HTTP APIs and Function URLs
// deliver headers: as given (they lower-case them; tests may not).
func editLower(h map[string]string, e edit) {
	for _, name := range e.delHeader {
		for k := range h {
			if http.CanonicalHeaderKey(k) == http.CanonicalHeaderKey(name) {
				delete(h, k)
			}
		}
	}
	for k, v := range e.setHeader {
		h[k] = v
	}
}

func flat(h http.Header) map[string]string {
	m := map[string]string{}
	for k, vs := range h {
		if len(vs) > 0 {
			m[k] = vs[0]
		}
	}
	return m
}

func unflat(m map[string]string) http.Header {
	h := http.Header{}
	for k, v := range m {
		h.Set(k, v)
	}
	return h
}

// TestFixturesRoundTrip checks that every fixture is shaped like the event
// type it stands for: no field unknown to aws-lambda-go, and the event
// survives an encode and decode unchanged.
func TestFixturesRoundTrip(t *testing.T) {
	check := func(t *testing.T, name string, decode func([]byte) (any, error), first any) {
		b, err := json.Marshal(first)
		if err != nil {
			t.Fatal(err)
		}
		second, err := decode(b)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(first, second) {
			t.Errorf("%s does not survive a round trip", name)
		}
	}
	files, _ := filepath.Glob("testdata/*.json")
	if len(files) == 0 {
		t.Fatal("no fixtures")
	}
	for _, f := range files {
		name := filepath.Base(f)
		t.Run(name, func(t *testing.T) {
			switch {
			case bytes.HasPrefix([]byte(name), []byte("v1-")):
				check(t, name, decoder[events.APIGatewayProxyRequest], load[events.APIGatewayProxyRequest](t, name))
			case bytes.HasPrefix([]byte(name), []byte("v2-")):
				check(t, name, decoder[events.APIGatewayV2HTTPRequest], load[events.APIGatewayV2HTTPRequest](t, name))
			case bytes.HasPrefix([]byte(name), []byte("url-")):
				check(t, name, decoder[events.LambdaFunctionURLRequest], load[events.LambdaFunctionURLRequest](t, name))
			default:
				t.Fatalf("fixture %s has no known prefix", name)
			}
		})
	}
}

func decoder[E any](b []byte) (any, error) {
	var e E
	err := json.Unmarshal(b, &e)
	return e, err
}
