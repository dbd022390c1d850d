package apigw_test

import (
	"context"
	"strings"
	"testing"

	"github.com/aws/aws-lambda-go/events"

	"github.com/lambdaidem/lambdaidem/lambdaidem"
	"github.com/lambdaidem/lambdaidem/lambdaidem/apigw"
	"github.com/lambdaidem/lambdaidem/lambdaidem/memstore"
)

// TestKeyLimits: the key is 1 to 255 bytes of visible ASCII other than
// '"', ',' and '\'; anything else is refused with 400 problem+json before
// any store call, and the handler does not run.
func TestKeyLimits(t *testing.T) {
	store := memstore.New()
	g, err := lambdaidem.New(store)
	if err != nil {
		t.Fatal(err)
	}
	a, err := apigw.New(g, "CreatePayment")
	if err != nil {
		t.Fatal(err)
	}
	ran := 0
	h := a.WrapV2(func(context.Context, events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error) {
		ran++
		return events.APIGatewayV2HTTPResponse{StatusCode: 201}, nil
	})
	send := func(key string) events.APIGatewayV2HTTPResponse {
		e := events.APIGatewayV2HTTPRequest{RouteKey: "POST /p", RawPath: "/p", Headers: map[string]string{"idempotency-key": key}}
		e.RequestContext.HTTP.Method = "POST"
		resp, err := h(context.Background(), e)
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	for _, key := range []string{"k", strings.Repeat("k", 255), "!#$%&'()*+-./:;<=>?@[]^_`{|}~", `"quoted"`} {
		if resp := send(key); resp.StatusCode != 201 {
			t.Errorf("key %q (%d bytes): got %d %s, want it accepted", key, len(key), resp.StatusCode, resp.Body)
		}
	}
	accepted, calls := ran, store.Calls()["claim"]
	for _, key := range []string{"", " ", strings.Repeat("k", 256), "a b", "a,b", `a"b`, `a\b`, "tab\tkey", "nul\x00", "del\x7f", "ключ", "é", `""`} {
		resp := send(key)
		if resp.StatusCode != 400 || resp.Headers["Content-Type"] != "application/problem+json" {
			t.Errorf("key %q: got %d %v, want 400 problem+json", key, resp.StatusCode, resp.Headers)
		}
		if strings.Contains(resp.Body, key) && key != "" && key != " " {
			t.Errorf("key %q: the refusal echoes the key: %s", key, resp.Body)
		}
	}
	if ran != accepted || store.Calls()["claim"] != calls {
		t.Errorf("refused keys reached the handler (%d runs) or the store (%d claims)", ran-accepted, store.Calls()["claim"]-calls)
	}
}

// TestRequestBodyIsNeverStored: the request body defines the intent only
// through its hash; a 5 MB body leaves a record of the same size as a tiny
// one, so the stored size depends on the response alone (capped by the
// Guard's MaxOutcomeSize).
func TestRequestBodyIsNeverStored(t *testing.T) {
	store := memstore.New()
	g, err := lambdaidem.New(store)
	if err != nil {
		t.Fatal(err)
	}
	a, err := apigw.New(g, "Upload")
	if err != nil {
		t.Fatal(err)
	}
	h := a.WrapV2(func(context.Context, events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error) {
		return events.APIGatewayV2HTTPResponse{StatusCode: 201, Body: "ok"}, nil
	})
	for i, body := range []string{"x", strings.Repeat("y", 5<<20)} {
		e := events.APIGatewayV2HTTPRequest{RouteKey: "POST /u", RawPath: "/u", Body: body,
			Headers: map[string]string{"idempotency-key": "key-" + string(rune('a'+i))}}
		e.RequestContext.HTTP.Method = "POST"
		if resp, err := h(context.Background(), e); err != nil || resp.StatusCode != 201 {
			t.Fatalf("body of %d bytes: %d %v", len(body), resp.StatusCode, err)
		}
	}
	for _, r := range store.Records() {
		if size := len(r.Outcome) + len(r.Fingerprint) + len(r.Key); size > 512 {
			t.Errorf("record %s holds %d bytes; the request body must not be stored", r.Key, size)
		}
	}
}
