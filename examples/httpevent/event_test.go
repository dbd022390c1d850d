package httpevent_test

import (
	"context"
	"encoding/base64"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/lambdaidem/lambdaidem/examples/httpevent"
)

func translator(t *testing.T) *httpevent.Translator {
	t.Helper()
	routes, err := httpevent.NewRoutes("POST /payments", "GET /payments/{id}")
	if err != nil {
		t.Fatal(err)
	}
	return &httpevent.Translator{
		Routes: routes,
		Now:    func() time.Time { return time.Date(2025, 3, 9, 14, 5, 6, 0, time.UTC) },
		Claims: func(r *http.Request) map[string]string {
			if tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer "); ok {
				return map[string]string{"sub": tok}
			}
			return nil
		},
	}
}

func TestEventOfAJSONPost(t *testing.T) {
	r := httptest.NewRequest("POST", "http://127.0.0.1:8080/payments?dry_run=false&tag=a&tag=b", strings.NewReader(`{"amount":1250}`))
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set("Idempotency-Key", "k-1")
	r.Header.Add("X-Multi", "one")
	r.Header.Add("X-Multi", "two")
	r.Header.Set("Cookie", "b=2; a=1")
	r.Header.Set("Authorization", "Bearer alice")
	e, err := translator(t).Event(r)
	if err != nil {
		t.Fatal(err)
	}
	checks := []struct {
		name      string
		got, want any
	}{
		{"version", e.Version, "2.0"},
		{"routeKey", e.RouteKey, "POST /payments"},
		{"requestContext.routeKey", e.RequestContext.RouteKey, "POST /payments"},
		{"rawPath", e.RawPath, "/payments"},
		{"rawQueryString", e.RawQueryString, "dry_run=false&tag=a&tag=b"},
		{"queryStringParameters.tag", e.QueryStringParameters["tag"], "a,b"},
		{"header idempotency-key", e.Headers["idempotency-key"], "k-1"},
		{"header x-multi", e.Headers["x-multi"], "one,two"},
		{"header host", e.Headers["host"], "127.0.0.1:8080"},
		{"no cookie header", e.Headers["cookie"], ""},
		{"cookies", strings.Join(e.Cookies, ";"), "b=2;a=1"},
		{"method", e.RequestContext.HTTP.Method, "POST"},
		{"path", e.RequestContext.HTTP.Path, "/payments"},
		{"sourceIp", e.RequestContext.HTTP.SourceIP, "192.0.2.1"},
		{"time", e.RequestContext.Time, "09/Mar/2025:14:05:06 +0000"},
		{"timeEpoch", e.RequestContext.TimeEpoch, int64(1741529106000)},
		{"stage", e.RequestContext.Stage, "$default"},
		{"jwt sub", e.RequestContext.Authorizer.JWT.Claims["sub"], "alice"},
		{"body", e.Body, `{"amount":1250}`},
		{"isBase64Encoded", e.IsBase64Encoded, false},
	}
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("%s = %v, want %v", c.name, c.got, c.want)
		}
	}
	if len(e.RequestContext.RequestID) != 32 {
		t.Errorf("requestId %q", e.RequestContext.RequestID)
	}
}

func TestEventPathParametersAndNoAuthorizer(t *testing.T) {
	e, err := translator(t).Event(httptest.NewRequest("GET", "/payments/pay_123", nil))
	if err != nil {
		t.Fatal(err)
	}
	if e.RouteKey != "GET /payments/{id}" || e.PathParameters["id"] != "pay_123" || e.RequestContext.Authorizer != nil || e.Body != "" {
		t.Errorf("event %+v", e)
	}
}

func TestBinaryBodyIsBase64(t *testing.T) {
	raw := []byte{0x89, 'P', 'N', 'G', 0, 1, 2}
	r := httptest.NewRequest("POST", "/payments", strings.NewReader(string(raw)))
	r.Header.Set("Content-Type", "application/octet-stream")
	e, err := translator(t).Event(r)
	if err != nil {
		t.Fatal(err)
	}
	if !e.IsBase64Encoded || e.Body != base64.StdEncoding.EncodeToString(raw) {
		t.Errorf("body %q base64=%v", e.Body, e.IsBase64Encoded)
	}
}

func TestNoRoute(t *testing.T) {
	if _, err := translator(t).Event(httptest.NewRequest("DELETE", "/payments", nil)); err != httpevent.ErrNoRoute {
		t.Errorf("err = %v", err)
	}
}

func TestWriteResponse(t *testing.T) {
	w := httptest.NewRecorder()
	err := httpevent.WriteResponse(w, events.APIGatewayV2HTTPResponse{
		StatusCode:        201,
		Headers:           map[string]string{"Content-Type": "image/png", "Idempotent-Replayed": "true"},
		MultiValueHeaders: map[string][]string{"Vary": {"Accept", "Origin"}},
		Cookies:           []string{"a=1; HttpOnly", "b=2"},
		Body:              base64.StdEncoding.EncodeToString([]byte{1, 2, 3}),
		IsBase64Encoded:   true,
	})
	if err != nil {
		t.Fatal(err)
	}
	res := w.Result()
	body, _ := io.ReadAll(res.Body)
	if res.StatusCode != 201 || string(body) != "\x01\x02\x03" || res.Header.Get("Idempotent-Replayed") != "true" ||
		len(res.Header.Values("Set-Cookie")) != 2 || len(res.Header.Values("Vary")) != 2 {
		t.Errorf("got %d %q %v", res.StatusCode, body, res.Header)
	}
	if err := httpevent.WriteResponse(httptest.NewRecorder(), events.APIGatewayV2HTTPResponse{Body: "!!", IsBase64Encoded: true}); err == nil {
		t.Error("a body that is not base64 was written")
	}
}

func TestHandlerRoundTrip(t *testing.T) {
	h := httpevent.Handler(translator(t), func(_ context.Context, e events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error) {
		return events.APIGatewayV2HTTPResponse{StatusCode: 200, Headers: map[string]string{"Content-Type": "text/plain"},
			Body: e.RouteKey + " " + e.PathParameters["id"] + " " + e.RequestContext.Authorizer.JWT.Claims["sub"]}, nil
	})
	srv := httptest.NewServer(h)
	defer srv.Close()
	req, _ := http.NewRequest("GET", srv.URL+"/payments/pay_9", nil)
	req.Header.Set("Authorization", "Bearer bob")
	res, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if string(body) != "GET /payments/{id} pay_9 bob" {
		t.Errorf("body %q", body)
	}
	res, err = srv.Client().Get(srv.URL + "/nowhere")
	if err != nil {
		t.Fatal(err)
	}
	body, _ = io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != 404 || string(body) != `{"message":"Not Found"}` {
		t.Errorf("no route: %d %s", res.StatusCode, body)
	}
}
