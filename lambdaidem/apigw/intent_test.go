package apigw_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/aws/aws-lambda-go/events"

	"github.com/lambdaidem/lambdaidem/lambdaidem/memstore"
)

// second sends first and then second, with one key, through a fresh adapter
// and names what the second got: "replay" (the first's stored response),
// "refused" (422, key reused with a different request) or "fresh" (a run of
// its own: another scope).
func second(t *testing.T, first, second events.APIGatewayV2HTTPRequest) string {
	t.Helper()
	a := newAdapter(t, memstore.New(), nil)
	h := a.WrapV2(func(ctx context.Context, e events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error) {
		return events.APIGatewayV2HTTPResponse{StatusCode: http.StatusCreated, Body: "ran"}, nil
	})
	if r, err := h(context.Background(), first); err != nil || r.StatusCode != http.StatusCreated || r.Headers["Idempotent-Replayed"] != "" {
		t.Fatalf("first request: %d %v %v", r.StatusCode, r.Headers, err)
	}
	r, err := h(context.Background(), second)
	switch {
	case err != nil:
		t.Fatal(err)
	case r.StatusCode == http.StatusCreated && r.Headers["Idempotent-Replayed"] == "true":
		return "replay"
	case r.StatusCode == http.StatusCreated:
		return "fresh"
	case r.StatusCode == http.StatusUnprocessableEntity:
		return "refused"
	}
	t.Fatalf("second request: %d %q", r.StatusCode, r.Body)
	return ""
}

// with returns a copy of the review event changed by fn.
func with(body string, fn func(e *events.APIGatewayV2HTTPRequest)) events.APIGatewayV2HTTPRequest {
	e := reviewV2Event(body, false)
	e.Headers = map[string]string{"content-type": "application/json", "idempotency-key": "k-1"}
	fn(&e)
	return e
}

func unchanged(*events.APIGatewayV2HTTPRequest) {}

// Whatever a handler would read differently fingerprints differently;
// spellings it reads alike replay.
func TestFingerprintFollowsWhatTheHandlerReads(t *testing.T) {
	contentType := func(ct string) func(*events.APIGatewayV2HTTPRequest) {
		return func(e *events.APIGatewayV2HTTPRequest) { e.Headers["content-type"] = ct }
	}
	query := func(raw string, parsed map[string]string) func(*events.APIGatewayV2HTTPRequest) {
		return func(e *events.APIGatewayV2HTTPRequest) { e.RawQueryString, e.QueryStringParameters = raw, parsed }
	}
	payment := `{"amount":1000,"currency":"EUR","reference":"r1"}`
	cases := []struct {
		name          string
		first, second events.APIGatewayV2HTTPRequest
		want          string
	}{
		{"a duplicate name whose last value is null",
			with(`{"amount":1000,"currency":"EUR","reference":"r1","currency":null}`, unchanged),
			with(`{"amount":1000,"currency":"USD","reference":"r1","currency":null}`, unchanged), "refused"},
		{"names that differ in case, in swapped order",
			with(`{"amount":1000,"Currency":"EUR","currency":"USD"}`, unchanged),
			with(`{"amount":1000,"currency":"USD","Currency":"EUR"}`, unchanged), "refused"},
		{"key order and spacing",
			with(payment, unchanged),
			with("{ \"reference\": \"r1\",\n \"currency\": \"EUR\", \"amount\": 1000 }", unchanged), "replay"},
		{"another media type, the same bytes",
			with(payment, unchanged),
			with(payment, contentType("text/plain")), "refused"},
		{"another charset",
			with(payment, contentType("application/json; charset=utf-8")),
			with(payment, contentType("application/json; charset=iso-8859-1")), "refused"},
		{"the media type spelled otherwise",
			with(payment, contentType("application/json; charset=utf-8")),
			with(payment, contentType("Application/JSON;charset=UTF-8")), "replay"},
		{"an unparseable query whose parsed map is the same",
			with(payment, query("x=1&x=2&y=%zz", map[string]string{"x": "1,2"})),
			with(payment, query("x=1,2&y=%zz", map[string]string{"x": "1,2"})), "refused"},
		{"unparseable queries that parse to the same pairs",
			with(payment, query("amount=1;x", nil)),
			with(payment, query("amount=1000;x", nil)), "refused"},
		{"an unparseable query sent again",
			with(payment, query("x=1;y=2", map[string]string{"x": "1"})),
			with(payment, query("x=1;y=2", map[string]string{"x": "1"})), "replay"},
		{"a parsed query in another order",
			with(payment, query("a=1&b=2", nil)),
			with(payment, query("b=2&a=%31", nil)), "replay"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := second(t, c.first, c.second); got != c.want {
				t.Errorf("second request: %s, want %s", got, c.want)
			}
		})
	}
}

// Without a route key ($default, Function URLs), requests are scoped by
// the normalized path: spellings of one path meet, other paths do not.
func TestDefaultRouteIsScopedByTheNormalizedPath(t *testing.T) {
	at := func(path string) events.APIGatewayV2HTTPRequest {
		return with(`{"amount":1}`, func(e *events.APIGatewayV2HTTPRequest) {
			e.RouteKey, e.RequestContext.RouteKey = "$default", "$default"
			e.RawPath, e.RequestContext.HTTP.Path = path, path
		})
	}
	cases := []struct {
		path, want string
	}{
		{"/payments", "replay"},
		{"/payments/", "replay"},
		{"//payments", "replay"},
		{"/%70ayments", "replay"},
		{"/%70ayments/%2e/", "replay"},
		{"/refunds/../payments", "replay"},
		{"/../../payments", "replay"},
		{"/Payments", "fresh"},
		{"/payments/1", "fresh"},
		{"/payments%2F", "fresh"},
	}
	for _, c := range cases {
		t.Run(c.path, func(t *testing.T) {
			if got := second(t, at("/payments"), at(c.path)); got != c.want {
				t.Errorf("%s after /payments: %s, want %s", c.path, got, c.want)
			}
		})
	}
	// The route key, where there is one, is the route: the path is not.
	keyed := func(path string) events.APIGatewayV2HTTPRequest {
		return with(`{"amount":1}`, func(e *events.APIGatewayV2HTTPRequest) { e.RawPath, e.RequestContext.HTTP.Path = path, path })
	}
	if got := second(t, keyed("/payments"), keyed("/payments/")); got != "replay" {
		t.Errorf("route key POST /payments, another path spelling: %s, want replay", got)
	}
}

func TestFunctionURLIsScopedByTheNormalizedPath(t *testing.T) {
	a := newAdapter(t, memstore.New(), nil)
	runs := 0
	h := a.WrapURL(func(ctx context.Context, e events.LambdaFunctionURLRequest) (events.LambdaFunctionURLResponse, error) {
		runs++
		return events.LambdaFunctionURLResponse{StatusCode: http.StatusCreated}, nil
	})
	for _, path := range []string{"/payments", "/payments/", "//payments", "/%70ayments"} {
		e := load[events.LambdaFunctionURLRequest](t, "url-iam.json")
		e.RawPath, e.RequestContext.HTTP.Path = path, path
		if r, err := h(context.Background(), e); err != nil || r.StatusCode != http.StatusCreated {
			t.Fatalf("%s: %d %v", path, r.StatusCode, err)
		}
	}
	if runs != 1 {
		t.Errorf("four spellings of /payments ran %d times, want 1", runs)
	}
}

// The key grammar is visible ASCII; only SP and HTAB around it are
// ignored, as around any field value (RFC 9110 §5.6.3).
func TestKeyTrimsOnlySpaceAndTab(t *testing.T) {
	keyed := func(key string) events.APIGatewayV2HTTPRequest {
		return with(`{}`, func(e *events.APIGatewayV2HTTPRequest) { e.Headers["idempotency-key"] = key })
	}
	if got := second(t, keyed("k-1"), keyed(" \tk-1\t ")); got != "replay" {
		t.Errorf("the key with SP and HTAB around it: %s, want replay", got)
	}
	a := newAdapter(t, memstore.New(), nil)
	h := a.WrapV2(func(context.Context, events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error) {
		t.Error("the handler ran")
		return events.APIGatewayV2HTTPResponse{StatusCode: http.StatusCreated}, nil
	})
	for _, key := range []string{"\u00a0k-1", "k-1\u3000", "\u2003k-1", "k-1\v", "\fk-1", "k-1\r", "\nk-1", "\u0085k-1"} {
		r, err := h(context.Background(), keyed(key))
		if err != nil || r.StatusCode != http.StatusBadRequest {
			t.Errorf("key %q: %d %v, want 400", key, r.StatusCode, err)
		}
	}
}
