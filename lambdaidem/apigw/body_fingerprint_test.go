package apigw_test

import (
	"context"
	"encoding/base64"
	"net/http"
	"sync/atomic"
	"testing"

	"github.com/aws/aws-lambda-go/events"

	"github.com/lambdaidem/lambdaidem/lambdaidem"
	"github.com/lambdaidem/lambdaidem/lambdaidem/apigw"
	"github.com/lambdaidem/lambdaidem/lambdaidem/memstore"
)

// reviewV2Event is a minimal HTTP API POST /payments event with a key,
// a JWT principal and the given body.
func reviewV2Event(body string, isBase64 bool) events.APIGatewayV2HTTPRequest {
	return events.APIGatewayV2HTTPRequest{
		RouteKey: "POST /payments",
		RawPath:  "/payments",
		Headers:  map[string]string{"content-type": "application/json", "idempotency-key": "k-1"},
		RequestContext: events.APIGatewayV2HTTPRequestContext{
			HTTP: events.APIGatewayV2HTTPRequestContextHTTPDescription{Method: "POST", Path: "/payments"},
			Authorizer: &events.APIGatewayV2HTTPRequestContextAuthorizerDescription{
				JWT: &events.APIGatewayV2HTTPRequestContextAuthorizerJWTDescription{Claims: map[string]string{"iss": "https://issuer", "sub": "user-1"}},
			},
		},
		Body:            body,
		IsBase64Encoded: isBase64,
	}
}

// Two JSON-typed bodies that differ only in bytes that are not valid UTF-8
// (a binary body that API Gateway base64-encoded) are different requests:
// decoding them as JSON would replace both bytes with U+FFFD and make the
// fingerprints equal, so the second would be handed the first's response.
func TestInvalidUTF8JSONBodiesAreDifferentRequests(t *testing.T) {
	a := newAdapter(t, memstore.New(), nil)
	var runs atomic.Int32
	h := a.WrapV2(func(ctx context.Context, e events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error) {
		runs.Add(1)
		return events.APIGatewayV2HTTPResponse{StatusCode: http.StatusCreated, Body: e.Body}, nil
	})
	first := base64.StdEncoding.EncodeToString([]byte("{\"a\":\"\xff\"}"))
	second := base64.StdEncoding.EncodeToString([]byte("{\"a\":\"\xfe\"}"))
	r1, err := h(context.Background(), reviewV2Event(first, true))
	if err != nil || r1.StatusCode != http.StatusCreated {
		t.Fatalf("first: %d %v", r1.StatusCode, err)
	}
	r2, err := h(context.Background(), reviewV2Event(second, true))
	if err != nil {
		t.Fatal(err)
	}
	if r2.StatusCode != http.StatusUnprocessableEntity {
		t.Fatalf("a different body with the same key got %d %q (replayed: %q), want 422", r2.StatusCode, r2.Body, r2.Headers["Idempotent-Replayed"])
	}
	// The same bytes again are still the same request.
	r3, err := h(context.Background(), reviewV2Event(first, true))
	if err != nil || r3.StatusCode != http.StatusCreated || r3.Headers["Idempotent-Replayed"] != "true" {
		t.Fatalf("the same body again: %d %v %v", r3.StatusCode, r3.Headers, err)
	}
	if n := runs.Load(); n != 1 {
		t.Fatalf("handler ran %d times, want 1", n)
	}
}

// Replays never carry cookies or credentials, whatever the spelling of the
// header name or the map it came in.
func TestReplayDropsCookiesAndCredentialsInAnySpelling(t *testing.T) {
	a := newAdapter(t, memstore.New(), nil)
	h := a.WrapV1(func(ctx context.Context, e events.APIGatewayProxyRequest) (events.APIGatewayProxyResponse, error) {
		return events.APIGatewayProxyResponse{
			StatusCode: http.StatusCreated,
			Headers:    map[string]string{"set-cookie": "a=1", "x-amz-security-token": "t", "Content-Type": "text/plain"},
			MultiValueHeaders: map[string][]string{
				"SET-COOKIE":    {"b=2", "c=3"},
				"authorization": {"Bearer x"},
				"Connection":    {"X-Private"},
				"X-Private":     {"p"},
			},
		}, nil
	})
	e := events.APIGatewayProxyRequest{
		Resource: "/payments", Path: "/payments", HTTPMethod: "POST",
		Headers:        map[string]string{"Idempotency-Key": "k"},
		RequestContext: events.APIGatewayProxyRequestContext{Authorizer: map[string]any{"principalId": "user-1"}},
	}
	if _, err := h(context.Background(), e); err != nil {
		t.Fatal(err)
	}
	r, err := h(context.Background(), e)
	if err != nil {
		t.Fatal(err)
	}
	if r.Headers["Idempotent-Replayed"] != "true" {
		t.Fatalf("not a replay: %v", r.Headers)
	}
	got := http.Header{}
	for k, v := range r.Headers {
		got.Add(k, v)
	}
	for k, vs := range r.MultiValueHeaders {
		for _, v := range vs {
			got.Add(k, v)
		}
	}
	for _, name := range []string{"Set-Cookie", "X-Amz-Security-Token", "Authorization", "Connection", "X-Private"} {
		if v := got.Values(name); len(v) > 0 {
			t.Errorf("replay carries %s: %v", name, v)
		}
	}
	if got.Get("Content-Type") != "text/plain" {
		t.Errorf("replay lost Content-Type: %v", got)
	}
}

// FingerprintBodyFields reads a name twice by the rule encoding/json reads
// names with: a body that names a chosen field twice under case folding
// with a rune outside ASCII (the long s U+017F, the Kelvin sign U+212A,
// the micro sign U+00B5) is fingerprinted by its bytes, so it never shares
// the fingerprint of the one-field request the handler's decoder reads it
// as. Before the selectors shared canonicalization's folding rule,
// "deſtination" matched "destination" but was not seen as a repeat, and the
// first body below fingerprinted like {"amount":5}.
func TestFieldSelectorFoldsNamesAsEncodingJSON(t *testing.T) {
	cases := []struct {
		name        string
		paths       []string
		body, alike string // alike: the one-field body the decoder reads body as
	}{
		{"long s", []string{"destination", "amount"},
			"{\"destination\":\"DE1\",\"de\u017ftination\":null,\"amount\":5}", `{"amount":5}`},
		{"Kelvin sign", []string{"kind", "amount"},
			"{\"kind\":\"refund\",\"\u212aind\":\"charge\",\"amount\":5}", `{"kind":"charge","amount":5}`},
		{"micro sign", []string{"\u03bc", "amount"},
			"{\"\u03bc\":1,\"\u00b5\":2,\"amount\":5}", "{\"\u03bc\":2,\"amount\":5}"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			fp := apigw.FingerprintBodyFields(c.paths...)
			of := func(body string) string {
				v, err := fp(context.Background(), &apigw.Request{Body: []byte(body)})
				if err != nil {
					t.Fatalf("%s: %v", body, err)
				}
				s, err := lambdaidem.Fingerprint(v)
				if err != nil {
					t.Fatal(err)
				}
				return s
			}
			if of(c.body) == of(c.alike) {
				t.Fatalf("%s fingerprints like %s", c.body, c.alike)
			}
			if of(c.body) != mustBytesFingerprint(t, c.body) {
				t.Fatalf("%s: want the fingerprint of its bytes", c.body)
			}
		})
	}
}
