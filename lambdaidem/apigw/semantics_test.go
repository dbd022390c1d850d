package apigw_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lambdaidem/lambdaidem/lambdaidem"
	"github.com/lambdaidem/lambdaidem/lambdaidem/apigw"
	"github.com/lambdaidem/lambdaidem/lambdaidem/memstore"
)

// newAdapter returns an adapter for "CreatePayment" over a fresh memstore.
func newAdapter(t *testing.T, store *memstore.Store, guardOpts func(*lambdaidem.Options), optFns ...func(*apigw.Options)) *apigw.Adapter {
	t.Helper()
	if guardOpts == nil {
		guardOpts = func(*lambdaidem.Options) {}
	}
	g, err := lambdaidem.New(store, guardOpts)
	if err != nil {
		t.Fatal(err)
	}
	a, err := apigw.New(g, "CreatePayment", optFns...)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// counter is a handler answering with a fixed reply and counting its runs.
type counter struct {
	runs  atomic.Int32
	reply reply
	err   error
}

func (c *counter) handle(_ context.Context, body []byte) (reply, error) {
	n := c.runs.Add(1)
	r := c.reply
	if r.Status == 0 {
		r = reply{Status: http.StatusCreated, Header: http.Header{"Content-Type": {"application/json"}},
			Body: fmt.Sprintf(`{"run":%d,"request":%q}`, n, body)}
	}
	return r, c.err
}

func strp(s string) *string { return &s }

// problemOf checks that r is a problem+json response of the given status
// and type, and returns its members.
func problemOf(t *testing.T, r reply, status int, typ string) map[string]any {
	t.Helper()
	if r.Status != status {
		t.Fatalf("status = %d, want %d; body %s", r.Status, status, r.Body)
	}
	if ct := r.Header.Get("Content-Type"); ct != "application/problem+json" {
		t.Errorf("Content-Type = %q, want application/problem+json", ct)
	}
	var p map[string]any
	if err := json.Unmarshal([]byte(r.Body), &p); err != nil {
		t.Fatalf("problem body %q: %v", r.Body, err)
	}
	if p["type"] != typ {
		t.Errorf("type = %v, want %s", p["type"], typ)
	}
	if p["status"] != float64(status) {
		t.Errorf("status member = %v, want %d", p["status"], status)
	}
	if s, _ := p["title"].(string); s == "" {
		t.Error("problem has no title")
	}
	if s, _ := p["detail"].(string); s == "" {
		t.Error("problem has no detail")
	}
	if r.Header.Get("Idempotent-Replayed") != "" {
		t.Error("a refusal is marked as replayed")
	}
	return p
}

func TestKeyRequiredForPostAndPatch(t *testing.T) {
	forEachKind(t, func(t *testing.T, k kind) {
		cases := []struct {
			method     string
			wantStatus int
		}{
			{"POST", 400}, {"PATCH", 400}, {"PUT", 201}, {"DELETE", 201}, {"GET", 201},
		}
		for _, c := range cases {
			t.Run(c.method, func(t *testing.T) {
				store := memstore.New()
				h := &counter{}
				r, err := k.send(t, newAdapter(t, store, nil), context.Background(), edit{method: c.method, delHeader: []string{"Idempotency-Key"}}, h.handle)
				if err != nil {
					t.Fatal(err)
				}
				if c.wantStatus == 400 {
					problemOf(t, r, 400, apigw.ProblemMissingKey)
					if h.runs.Load() != 0 {
						t.Error("the handler ran for a refused request")
					}
				} else if r.Status != c.wantStatus || h.runs.Load() != 1 {
					t.Errorf("status %d, runs %d: want the request passed through", r.Status, h.runs.Load())
				}
				if calls := store.Calls(); len(calls) != 0 {
					t.Errorf("store calls %v, want none", calls)
				}
			})
		}
	})
}

func TestMalformedKeysAreRefused(t *testing.T) {
	cases := map[string]string{
		"empty":        "",
		"too long":     strings.Repeat("k", 256),
		"space":        "abc def",
		"control":      "abc\x01def",
		"non-ASCII":    "clé-1",
		"sent twice":   "key-1,key-2",
		"inner quote":  `ab"cd`,
		"backslash":    `ab\cd`,
		"empty quotes": `""`,
		"only a quote": `"`,
	}
	forEachKind(t, func(t *testing.T, k kind) {
		for name, key := range cases {
			t.Run(name, func(t *testing.T) {
				store := memstore.New()
				h := &counter{}
				r, err := k.send(t, newAdapter(t, store, nil), context.Background(), edit{setHeader: map[string]string{"Idempotency-Key": key}, delHeader: []string{"Idempotency-Key"}}, h.handle)
				if err != nil {
					t.Fatal(err)
				}
				problemOf(t, r, 400, apigw.ProblemInvalidKey)
				if h.runs.Load() != 0 || len(store.Calls()) != 0 {
					t.Errorf("runs %d, store calls %v: a refused request reached the handler or the store", h.runs.Load(), store.Calls())
				}
			})
		}
	})
}

func TestLongestKeyIsAccepted(t *testing.T) {
	forEachKind(t, func(t *testing.T, k kind) {
		h := &counter{}
		r, _ := k.send(t, newAdapter(t, memstore.New(), nil), context.Background(), edit{delHeader: []string{"Idempotency-Key"}, setHeader: map[string]string{"Idempotency-Key": strings.Repeat("k", 255)}}, h.handle)
		if r.Status != 201 {
			t.Errorf("status %d for a 255-byte key; body %s", r.Status, r.Body)
		}
	})
}

func TestCompletedRequestIsReplayed(t *testing.T) {
	forEachKind(t, func(t *testing.T, k kind) {
		h := &counter{reply: reply{
			Status: 201,
			Header: http.Header{
				"Content-Type":      {"application/json"},
				"Location":          {"/payments/pay_1"},
				"X-Request-Id":      {"first"},
				"Authorization":     {"Bearer secret"},
				"X-Auth-Token":      {"secret"},
				"Connection":        {"close"},
				"Transfer-Encoding": {"chunked"},
			},
			Body:    `{"id":"pay_1"}`,
			Cookies: []string{"session=abc; HttpOnly"},
		}}
		a := newAdapter(t, memstore.New(), nil)
		first, err := k.send(t, a, context.Background(), edit{}, h.handle)
		if err != nil {
			t.Fatal(err)
		}
		if first.Status != 201 || first.Header.Get("Idempotent-Replayed") != "" || len(first.Cookies) == 0 || first.Header.Get("Authorization") == "" {
			t.Errorf("first response changed by the adapter: %+v", first)
		}
		second, err := k.send(t, a, context.Background(), edit{}, h.handle)
		if err != nil {
			t.Fatal(err)
		}
		if h.runs.Load() != 1 {
			t.Fatalf("handler ran %d times, want 1", h.runs.Load())
		}
		if second.Status != 201 || second.Body != `{"id":"pay_1"}` {
			t.Errorf("replay = %d %s, want the stored 201", second.Status, second.Body)
		}
		if got := second.Header.Get("Idempotent-Replayed"); got != "true" {
			t.Errorf("Idempotent-Replayed = %q, want true", got)
		}
		for name, want := range map[string]string{"Content-Type": "application/json", "Location": "/payments/pay_1"} {
			if got := second.Header.Get(name); got != want {
				t.Errorf("replayed %s = %q, want %q", name, got, want)
			}
		}
		for _, name := range []string{"Set-Cookie", "Authorization", "X-Auth-Token", "Connection", "Transfer-Encoding", "X-Request-Id"} {
			if got := second.Header.Get(name); got != "" {
				t.Errorf("replayed %s = %q, want it dropped", name, got)
			}
		}
		if len(second.Cookies) != 0 {
			t.Errorf("replayed cookies %v", second.Cookies)
		}
	})
}

func TestSameIntentSpelledDifferentlyIsReplayed(t *testing.T) {
	cases := []struct {
		name   string
		second edit
	}{
		{"JSON reordered and spaced", edit{body: strp(`{ "reference":"inv-1001",  "currency":"EUR", "amount":1250 }`)}},
		{"body sent base64", edit{base64: true}},
		{"key in quotes", edit{delHeader: []string{"Idempotency-Key"}, setHeader: map[string]string{"Idempotency-Key": `"7c0b3d9e-5f1a-4e8b-9a41-2d6f0c8e1b57"`}}},
		{"header name lower case", edit{delHeader: []string{"Idempotency-Key"}, setHeader: map[string]string{"idempotency-key": "7c0b3d9e-5f1a-4e8b-9a41-2d6f0c8e1b57"}}},
		{"header name upper case", edit{delHeader: []string{"Idempotency-Key"}, setHeader: map[string]string{"IDEMPOTENCY-KEY": "7c0b3d9e-5f1a-4e8b-9a41-2d6f0c8e1b57"}}},
		{"header name mixed case", edit{delHeader: []string{"Idempotency-Key"}, setHeader: map[string]string{"IdEmPoTeNcY-kEy": "7c0b3d9e-5f1a-4e8b-9a41-2d6f0c8e1b57"}}},
	}
	forEachKind(t, func(t *testing.T, k kind) {
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				h := &counter{}
				a := newAdapter(t, memstore.New(), nil)
				first, _ := k.send(t, a, context.Background(), edit{}, h.handle)
				second, err := k.send(t, a, context.Background(), c.second, h.handle)
				if err != nil {
					t.Fatal(err)
				}
				if h.runs.Load() != 1 || second.Body != first.Body || second.Header.Get("Idempotent-Replayed") != "true" {
					t.Errorf("runs %d, second %d %s: want a replay of %s", h.runs.Load(), second.Status, second.Body, first.Body)
				}
			})
		}
	})
}

func TestV1KeyInMultiValueHeadersOnly(t *testing.T) {
	h := &counter{}
	a := newAdapter(t, memstore.New(), nil)
	e := edit{delHeader: []string{"Idempotency-Key"}, setHeader: map[string]string{"idempotency-key": "mv-1"}, multiOnly: true}
	sendV1(t, a, context.Background(), e, h.handle)
	second, _ := sendV1(t, a, context.Background(), e, h.handle)
	if h.runs.Load() != 1 || second.Header.Get("Idempotent-Replayed") != "true" {
		t.Errorf("runs %d: the key in multiValueHeaders was not used", h.runs.Load())
	}
}

func TestKeyReusedWithDifferentRequest(t *testing.T) {
	cases := []struct {
		name   string
		second edit
	}{
		{"other body", edit{body: strp(`{"amount": 99999, "currency": "EUR", "reference": "inv-1001"}`)}},
		{"other query", edit{query: "other"}},
	}
	forEachKind(t, func(t *testing.T, k kind) {
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				h := &counter{reply: reply{Status: 201, Body: `{"id":"pay_secret_1"}`}}
				a := newAdapter(t, memstore.New(), nil)
				k.send(t, a, context.Background(), edit{}, h.handle)
				r, err := k.send(t, a, context.Background(), c.second, h.handle)
				if err != nil {
					t.Fatal(err)
				}
				problemOf(t, r, 422, apigw.ProblemKeyReused)
				if strings.Contains(r.Body, "pay_secret_1") {
					t.Error("the refusal reveals the stored response")
				}
				if h.runs.Load() != 1 {
					t.Errorf("handler ran %d times", h.runs.Load())
				}
			})
		}
	})
}

func TestTwoPrincipalsWithOneKeyNeverMeet(t *testing.T) {
	forEachKind(t, func(t *testing.T, k kind) {
		h := &counter{}
		a := newAdapter(t, memstore.New(), nil)
		first, _ := k.send(t, a, context.Background(), edit{principal: "alice"}, h.handle)
		second, _ := k.send(t, a, context.Background(), edit{principal: "bob"}, h.handle)
		if h.runs.Load() != 2 || first.Body == second.Body || second.Header.Get("Idempotent-Replayed") != "" {
			t.Errorf("runs %d, bodies %s / %s: bob got alice's outcome", h.runs.Load(), first.Body, second.Body)
		}
	})
}

func TestInProgressDuplicateGets409WithRetryAfter(t *testing.T) {
	now := time.Date(2025, 3, 9, 14, 5, 6, 0, time.UTC)
	forEachKind(t, func(t *testing.T, k kind) {
		a := newAdapter(t, memstore.New(), func(o *lambdaidem.Options) {
			o.Now = func() time.Time { return now }
			o.LeaseMargin = 5 * time.Second
		})
		ctx, cancel := context.WithDeadline(context.Background(), now.Add(25*time.Second)) // lease: 30 s
		defer cancel()
		inside, release := make(chan struct{}), make(chan struct{})
		done := make(chan reply)
		go func() {
			r, _ := k.send(t, a, ctx, edit{}, func(context.Context, []byte) (reply, error) {
				close(inside)
				<-release
				return reply{Status: 201, Body: `{"id":"pay_1"}`}, nil
			})
			done <- r
		}()
		<-inside
		h := &counter{}
		r, err := k.send(t, a, ctx, edit{}, h.handle)
		close(release)
		if err != nil {
			t.Fatal(err)
		}
		problemOf(t, r, 409, apigw.ProblemInProgress)
		if got := r.Header.Get("Retry-After"); got != "30" {
			t.Errorf("Retry-After = %q, want 30 (the lease left)", got)
		}
		if h.runs.Load() != 0 {
			t.Error("the duplicate ran the handler")
		}
		if first := <-done; first.Status != 201 {
			t.Errorf("first request got %d", first.Status)
		}
	})
}

func TestUnknownOutcomeGets409(t *testing.T) {
	forEachKind(t, func(t *testing.T, k kind) {
		a := newAdapter(t, memstore.New(), nil)
		charge := errors.New("card network timed out")
		var first error
		_, first = k.send(t, a, context.Background(), edit{}, func(ctx context.Context, _ []byte) (reply, error) {
			att, ok := lambdaidem.AttemptFrom(ctx)
			if !ok {
				t.Fatal("no attempt in the handler's context")
			}
			if err := att.BeginExternal(ctx); err != nil {
				t.Fatal(err)
			}
			return reply{}, charge
		})
		if !errors.Is(first, charge) {
			t.Fatalf("first error = %v, want the handler's own", first)
		}
		h := &counter{}
		r, err := k.send(t, a, context.Background(), edit{}, h.handle)
		if err != nil {
			t.Fatal(err)
		}
		problemOf(t, r, 409, apigw.ProblemOutcomeUnknown)
		if h.runs.Load() != 0 {
			t.Error("the handler ran again while the outcome is unknown")
		}
	})
}

func TestStatusesStoredOrReleased(t *testing.T) {
	cases := []struct {
		status int
		stored bool
	}{
		{200, true}, {201, true}, {202, true}, {204, true}, {303, true},
		{402, true}, {409, true}, {410, true},
		{400, false}, {401, false}, {403, false}, {404, false}, {405, false}, {406, false},
		{412, false}, {413, false}, {415, false}, {422, false}, {429, false},
		{500, false}, {502, false}, {503, false}, {504, false},
	}
	forEachKind(t, func(t *testing.T, k kind) {
		for _, c := range cases {
			t.Run(fmt.Sprint(c.status), func(t *testing.T) {
				store := memstore.New()
				a := newAdapter(t, store, nil)
				h := &counter{reply: reply{Status: c.status, Header: http.Header{"Content-Type": {"application/json"}}, Body: `{"s":1}`}}
				first, _ := k.send(t, a, context.Background(), edit{}, h.handle)
				second, _ := k.send(t, a, context.Background(), edit{}, h.handle)
				if first.Status != c.status || second.Status != c.status {
					t.Fatalf("statuses %d, %d; want %d twice", first.Status, second.Status, c.status)
				}
				replayed := second.Header.Get("Idempotent-Replayed") == "true"
				if replayed != c.stored || (h.runs.Load() == 1) != c.stored {
					t.Errorf("replayed %v after %d runs; want stored=%v", replayed, h.runs.Load(), c.stored)
				}
				if !c.stored && len(store.Records()) != 0 {
					t.Errorf("records left behind: %v", store.Records())
				}
			})
		}
	})
}

func TestHandlerErrorPassesThroughAndReleases(t *testing.T) {
	forEachKind(t, func(t *testing.T, k kind) {
		store := memstore.New()
		a := newAdapter(t, store, nil)
		boom := &handlerFailure{"database is on fire"}
		_, err := k.send(t, a, context.Background(), edit{}, func(context.Context, []byte) (reply, error) { return reply{}, boom })
		if err != boom {
			t.Fatalf("error = %#v, want the handler's own error value", err)
		}
		if len(store.Records()) != 0 {
			t.Fatalf("records left behind: %v", store.Records())
		}
		h := &counter{}
		r, _ := k.send(t, a, context.Background(), edit{}, h.handle)
		if r.Status != 201 || h.runs.Load() != 1 {
			t.Errorf("retry: %d after %d runs, want the handler to run again", r.Status, h.runs.Load())
		}
	})
}

type handlerFailure struct{ msg string }

func (e *handlerFailure) Error() string { return e.msg }

// A handler error that says it is terminal is still not stored: HTTP
// handlers express decided outcomes as responses.
func (e *handlerFailure) Terminal() bool { return true }

func TestStoreUnavailable(t *testing.T) {
	down := func(o *memstore.Options) {
		o.Fault = func(op, key string) error { return fmt.Errorf("throttled: %w", lambdaidem.ErrStoreUnavailable) }
	}
	forEachKind(t, func(t *testing.T, k kind) {
		t.Run("fail closed", func(t *testing.T) {
			h := &counter{}
			r, err := k.send(t, newAdapter(t, memstore.New(down), nil), context.Background(), edit{}, h.handle)
			if err != nil {
				t.Fatal(err)
			}
			problemOf(t, r, 503, apigw.ProblemStoreUnavailable)
			if r.Header.Get("Retry-After") == "" {
				t.Error("no Retry-After")
			}
			if strings.Contains(r.Body, "throttled") {
				t.Error("the problem leaks the store's error")
			}
			if h.runs.Load() != 0 {
				t.Error("the handler ran")
			}
		})
		t.Run("fail open", func(t *testing.T) {
			h := &counter{}
			a := newAdapter(t, memstore.New(down), func(o *lambdaidem.Options) { o.FailOpen = true })
			r, _ := k.send(t, a, context.Background(), edit{}, h.handle)
			if r.Status != 201 || h.runs.Load() != 1 {
				t.Errorf("status %d after %d runs, want the handler's 201", r.Status, h.runs.Load())
			}
		})
	})
}

func TestBase64ResponseIsReplayedAsBase64(t *testing.T) {
	forEachKind(t, func(t *testing.T, k kind) {
		png := "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
		h := &counter{reply: reply{Status: 201, Header: http.Header{"Content-Type": {"image/png"}}, Body: png, Base64: true}}
		a := newAdapter(t, memstore.New(), nil)
		k.send(t, a, context.Background(), edit{}, h.handle)
		r, _ := k.send(t, a, context.Background(), edit{}, h.handle)
		if !r.Base64 || r.Body != png || r.Header.Get("Idempotent-Replayed") != "true" {
			t.Errorf("replay base64=%v body=%q", r.Base64, r.Body)
		}
	})
}

func TestBodyMarkedBase64ThatDoesNotDecodeIs400(t *testing.T) {
	forEachKind(t, func(t *testing.T, k kind) {
		h := &counter{}
		store := memstore.New()
		r, err := k.send(t, newAdapter(t, store, nil), context.Background(), edit{badBase64: true}, h.handle)
		if err != nil {
			t.Fatal(err)
		}
		problemOf(t, r, 400, apigw.ProblemMalformedRequest)
		if h.runs.Load() != 0 || len(store.Calls()) != 0 {
			t.Error("a malformed request reached the handler or the store")
		}
	})
}
