package apigw_test

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"strings"
	"testing"

	"github.com/aws/aws-lambda-go/events"

	"github.com/lambdaidem/lambdaidem/lambdaidem"
	"github.com/lambdaidem/lambdaidem/lambdaidem/apigw"
	"github.com/lambdaidem/lambdaidem/lambdaidem/memstore"
)

// A key in the JSON body (Square's idempotency_key) instead of a header.
func TestKeyFromBodyField(t *testing.T) {
	forEachKind(t, func(t *testing.T, k kind) {
		a := newAdapter(t, memstore.New(), nil, func(o *apigw.Options) { o.Key = apigw.KeyFromBodyField("idempotency_key") })
		c := &counter{}
		body := `{"idempotency_key":"k-1","amount":100}`
		first, err := k.send(t, a, context.Background(), edit{body: &body, delHeader: []string{"Idempotency-Key"}}, c.handle)
		if err != nil || first.Status != http.StatusCreated {
			t.Fatalf("first = %+v, %v", first, err)
		}
		again, err := k.send(t, a, context.Background(), edit{body: &body, delHeader: []string{"Idempotency-Key"}}, c.handle)
		if err != nil || again.Body != first.Body || again.Header.Get("Idempotent-Replayed") != "true" || c.runs.Load() != 1 {
			t.Fatalf("duplicate = %+v, %v after %d runs; want the replay", again, err, c.runs.Load())
		}
		cases := []struct {
			name, body string
			status     int
			typ        string
		}{
			{"no field", `{"amount":100}`, 400, apigw.ProblemMissingKey},
			{"null field", `{"idempotency_key":null}`, 400, apigw.ProblemMissingKey},
			{"an object", `{"idempotency_key":{"a":1}}`, 400, apigw.ProblemInvalidKey},
			{"not JSON", `amount=100`, 400, apigw.ProblemInvalidKey},
			{"too long", `{"idempotency_key":"` + strings.Repeat("k", 256) + `"}`, 400, apigw.ProblemInvalidKey},
			{"named twice", `{"idempotency_key":"k-1","Idempotency_Key":"k-2"}`, 400, apigw.ProblemInvalidKey},
			{"empty", `{"idempotency_key":""}`, 400, apigw.ProblemMissingKey},
		}
		for _, tc := range cases {
			r, err := k.send(t, a, context.Background(), edit{body: &tc.body, delHeader: []string{"Idempotency-Key"}}, c.handle)
			if err != nil {
				t.Fatal(err)
			}
			p := problemOf(t, r, tc.status, tc.typ)
			if strings.Contains(p["detail"].(string), "header") {
				t.Errorf("%s: detail %q speaks of a header", tc.name, p["detail"])
			}
		}
		if c.runs.Load() != 1 {
			t.Fatalf("%d runs; refused requests must not run", c.runs.Load())
		}
		// Names match as a handler's decoder matches them, and a body above
		// the canonicalization limit is read as a stream.
		big := `{"pad":"` + strings.Repeat("x", 100<<10) + `","IDEMPOTENCY_KEY":"k-big","amount":100}`
		r, err := k.send(t, a, context.Background(), edit{body: &big, delHeader: []string{"Idempotency-Key"}}, c.handle)
		if err != nil || r.Status != http.StatusCreated || c.runs.Load() != 2 {
			t.Fatalf("large body with key k-big: %d %.200s, %v after %d runs; want it run", r.Status, r.Body, err, c.runs.Load())
		}
	})
}

// A fingerprint over chosen body fields: a retry that changes only another
// field is the same request; one that changes a chosen field is refused.
func TestFingerprintBodyFields(t *testing.T) {
	forEachKind(t, func(t *testing.T, k kind) {
		a := newAdapter(t, memstore.New(), nil, func(o *apigw.Options) {
			o.Fingerprint = apigw.FingerprintBodyFields("amount", "payee.iban")
		})
		c := &counter{}
		send := func(body string) reply {
			t.Helper()
			r, err := k.send(t, a, context.Background(), edit{body: &body}, c.handle)
			if err != nil {
				t.Fatal(err)
			}
			return r
		}
		first := send(`{"amount":100,"payee":{"iban":"DE89"},"sent_at":"12:00:00"}`)
		if first.Status != http.StatusCreated {
			t.Fatalf("first = %+v", first)
		}
		if r := send(`{"sent_at":"12:00:05","payee":{"iban":"DE89"},"amount":100}`); r.Header.Get("Idempotent-Replayed") != "true" || c.runs.Load() != 1 {
			t.Fatalf("retry with another timestamp = %+v after %d runs; want the replay", r, c.runs.Load())
		}
		problemOf(t, send(`{"amount":101,"payee":{"iban":"DE89"}}`), 422, apigw.ProblemKeyReused)
		problemOf(t, send(`{"amount":100,"payee":{"iban":"FR76"}}`), 422, apigw.ProblemKeyReused)
		problemOf(t, send(`{"amount":100}`), 422, apigw.ProblemKeyReused)
		problemOf(t, send(`not json`), 400, apigw.ProblemMalformedRequest)
		if c.runs.Load() != 1 {
			t.Fatalf("%d runs; want 1", c.runs.Load())
		}
	})
}

// The replay hook may add headers to a replayed response only.
func TestOnReplayAddsHeaders(t *testing.T) {
	forEachKind(t, func(t *testing.T, k kind) {
		calls := 0
		a := newAdapter(t, memstore.New(), nil, func(o *apigw.Options) {
			o.OnReplay = func(_ context.Context, r *apigw.Request, h http.Header) {
				calls++
				h.Set("X-Replay-Of", r.Method+" "+r.Route)
			}
		})
		c := &counter{}
		first, _ := k.send(t, a, context.Background(), edit{}, c.handle)
		again, _ := k.send(t, a, context.Background(), edit{}, c.handle)
		if first.Header.Get("X-Replay-Of") != "" || again.Header.Get("X-Replay-Of") == "" || calls != 1 {
			t.Fatalf("first %v, replay %v, %d calls; want the header on the replay only", first.Header, again.Header, calls)
		}
	})
}

// stageMissingParent stages a condition on a payment that does not exist,
// which fails at commit as a DynamoDB ConditionCheck would (dynamostore's
// own tests run that against the DynamoDB endpoint).
func stageMissingParent(ctx context.Context, _ []byte) (reply, error) {
	if err := memstore.Stage(ctx, memstore.Check{Table: "payments", Key: "pay-404"}); err != nil {
		return reply{}, err
	}
	return reply{Status: http.StatusCreated, Body: `{"refund":"r-1"}`}, nil
}

// A business condition that fails at commit is a 409 by default, or what
// the hook says; it is not stored, the claim is released, and the problem
// never advises retrying the same request.
func TestConditionFailedAtCommit(t *testing.T) {
	forEachKind(t, func(t *testing.T, k kind) {
		store := memstore.New()
		a := newAdapter(t, store, nil)
		r, err := k.send(t, a, context.Background(), edit{}, stageMissingParent)
		if err != nil {
			t.Fatal(err)
		}
		p := problemOf(t, r, http.StatusConflict, apigw.ProblemConditionFailed)
		if strings.Contains(p["detail"].(string), "retry") {
			t.Errorf("detail %q advises a retry that cannot succeed", p["detail"])
		}
		if n := len(store.Records()); n != 0 {
			t.Fatalf("%d records after a refused commit; want none (claim released, nothing stored)", n)
		}

		var seen error
		mapped := newAdapter(t, memstore.New(), nil, func(o *apigw.Options) {
			o.ConditionFailed = func(_ context.Context, _ *apigw.Request, err error) *apigw.Problem {
				seen = err
				return &apigw.Problem{Type: "https://api.example.com/problems/payment-not-found", Title: "Payment not found", Status: http.StatusNotFound, Detail: "there is no payment to refund"}
			}
		})
		r, _ = k.send(t, mapped, context.Background(), edit{}, stageMissingParent)
		var cfe *memstore.ConditionFailedError
		if r.Status != http.StatusNotFound || !errors.As(seen, &cfe) || cfe.Key != "pay-404" || !errors.Is(seen, lambdaidem.ErrConditionFailed) {
			t.Fatalf("mapped = %d, hook saw %v; want 404 and the store's typed error", r.Status, seen)
		}
	})
}

// Writes the store refuses for another reason are a 500 that says
// retrying will not help.
func TestRejectedWritesDoNotAdviseARetry(t *testing.T) {
	forEachKind(t, func(t *testing.T, k kind) {
		a := newAdapter(t, memstore.New(), nil)
		r, _ := k.send(t, a, context.Background(), edit{}, func(ctx context.Context, _ []byte) (reply, error) {
			if err := lambdaidem.Stage(ctx, struct{ Foreign bool }{true}); err != nil {
				return reply{}, err
			}
			return reply{Status: http.StatusCreated}, nil
		})
		p := problemOf(t, r, http.StatusInternalServerError, apigw.ProblemInternal)
		if !strings.Contains(p["detail"].(string), "will not help") {
			t.Errorf("detail %q; want it to say retrying will not help", p["detail"])
		}
	})
}

// A handler error is logged at level Error by default, and still reaches
// the Lambda runtime unchanged.
func TestHandlerErrorsAreLogged(t *testing.T) {
	forEachKind(t, func(t *testing.T, k kind) {
		var buf strings.Builder
		a := newAdapter(t, memstore.New(), nil, func(o *apigw.Options) { o.Logger = slog.New(slog.NewTextHandler(&buf, nil)) })
		boom := errors.New("ledger unreachable")
		_, err := k.send(t, a, context.Background(), edit{}, func(context.Context, []byte) (reply, error) { return reply{}, boom })
		if !errors.Is(err, boom) {
			t.Fatalf("error = %v; want the handler's", err)
		}
		if line := buf.String(); !strings.Contains(line, "level=ERROR") || !strings.Contains(line, "ledger unreachable") {
			t.Fatalf("log = %q; want the handler's error at level ERROR", line)
		}
	})
}

// Wrapping cannot fail: a nil handler is not a panic, every request gets
// an error that names it.
func TestWrapOfANilHandler(t *testing.T) {
	a := newAdapter(t, memstore.New(), nil)
	ctx := context.Background()
	_, v1 := a.WrapV1(nil)(ctx, load[events.APIGatewayProxyRequest](t, "v1-rest-lambda-authorizer.json"))
	_, v2 := a.WrapV2(nil)(ctx, load[events.APIGatewayV2HTTPRequest](t, "v2-http-jwt.json"))
	_, url := a.WrapURL(nil)(ctx, load[events.LambdaFunctionURLRequest](t, "url-iam.json"))
	for name, err := range map[string]error{"v1": v1, "v2": v2, "url": url} {
		if err == nil || !strings.Contains(err.Error(), "nil handler") {
			t.Errorf("%s: error = %v; want one naming the nil handler", name, err)
		}
	}
}

// What a fingerprint over chosen fields sees, as a handler decoding the body
// into a struct would: names match case-insensitively; a chosen name given
// twice, or a body above the canonicalization limit, is compared by its
// bytes, so that two bodies the handler reads differently never share a
// fingerprint.
func TestFingerprintBodyFieldsFollowsTheDecoder(t *testing.T) {
	fp := apigw.FingerprintBodyFields("amount", "payee.iban")
	of := func(body string) string {
		t.Helper()
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
	base := of(`{"amount":100,"payee":{"iban":"DE89"}}`)
	same := []string{
		`{"payee":{"iban":"DE89","name":"x"},"amount":100,"sent_at":"now"}`,
		`{"Amount":100,"PAYEE":{"Iban":"DE89"}}`,
		` { "amount" : 100 , "payee" : { "iban" : "DE89" } , "list":[{"amount":1}] } `,
	}
	for _, b := range same {
		if of(b) != base {
			t.Errorf("%s: fingerprint differs; want the same request", b)
		}
	}
	differ := []string{
		`{"amount":100,"Amount":101,"payee":{"iban":"DE89"}}`, // the handler reads 101
		`{"amount":101,"amount":100,"payee":{"iban":"DE89"}}`, // exact duplicate: bytes
		`{"amount":100,"payee":{"iban":"DE89","IBAN":"FR76"}}`,
		`{"amount":100.0,"payee":{"iban":"DE89"}}`,
		`{"amount":100,"payee":"DE89"}`,
		`{"amount":100,"payee":{"iban":"DE89"},"pad":"` + strings.Repeat("x", lambdaidem.MaxCanonicalJSON) + `"}`,
	}
	for _, b := range differ {
		if of(b) == base {
			t.Errorf("%.80s: same fingerprint; want another", b)
		}
	}
	for _, bad := range []string{`[1]`, `{"amount":`, `{"amount":1} {}`, `"x"`} {
		if _, err := fp(context.Background(), &apigw.Request{Body: []byte(bad)}); err == nil {
			t.Errorf("%s: accepted; want a 400 problem", bad)
		}
	}
}
