package httpidem_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/lambdaidem/lambdaidem/lambdaidem"
	"github.com/lambdaidem/lambdaidem/lambdaidem/httpidem"
	"github.com/lambdaidem/lambdaidem/lambdaidem/memstore"
)

var discard = slog.New(slog.DiscardHandler)

// step is one request of a table row and what its reply must be.
type step struct {
	req      request
	status   int
	problem  string   // the problem type, if the reply is a problem
	replayed bool     // carries Idempotent-Replayed: true
	has      []string // headers the reply carries
	lacks    []string // headers it must not carry
	sameAs   int      // 1 + the index of an earlier step whose status and body this one repeats; 0 for none
	during   bool     // sent while step 0's handler runs (step 0 waits for it)
}

// row is one case of the HTTP table: a sequence of requests on one store.
type row struct {
	name    string
	modes   []lambdaidem.Mode // default both
	store   func(*memstore.Options)
	guard   func(*lambdaidem.Options)
	handler func(runs *atomic.Int32) handler // default payment
	steps   []step
	runs    int32 // handler runs when the row is done (claim-first)
}

var (
	otherKey  = map[string]string{"Idempotency-Key": "k-2", "Content-Type": "application/json"}
	quotedKey = map[string]string{"Idempotency-Key": `"k-1"`, "Content-Type": "application/json"}
	noKey     = map[string]string{"Content-Type": "application/json"}
	textBody  = map[string]string{"Idempotency-Key": "k-1", "Content-Type": "text/plain"}
	session   = []string{"Set-Cookie", "X-Request-Id"}
	represent = []string{"Content-Type", "Location", "Etag"}
)

// answering is a handler that answers every run with status (and a
// problem-free JSON body).
func answering(status int) func(*atomic.Int32) handler {
	return func(runs *atomic.Int32) handler {
		return func(_ context.Context, _ string) reply {
			n := runs.Add(1)
			return reply{status: status, header: http.Header{"Content-Type": {"application/json"}}, body: fmt.Sprintf(`{"run":%d}`, n)}
		}
	}
}

// firstThen answers the first run with status, later ones with 201.
func firstThen(status int) func(*atomic.Int32) handler {
	return func(runs *atomic.Int32) handler {
		return func(_ context.Context, _ string) reply {
			if runs.Add(1) == 1 {
				return reply{status: status, header: http.Header{"Content-Type": {"application/json"}}, body: `{"error":"first"}`}
			}
			return reply{status: http.StatusCreated, header: http.Header{"Content-Type": {"application/json"}}, body: `{"ok":true}`}
		}
	}
}

var table = []row{
	{
		name: "first request runs; duplicate replays status, representation headers and body",
		steps: []step{
			{status: 201, has: append(represent, session...)},
			{status: 201, replayed: true, sameAs: 1, has: represent, lacks: session},
		},
		runs: 1,
	},
	{
		name: "JSON spacing and member order do not make another request",
		steps: []step{
			{req: request{body: `{"amount":100,"currency":"EUR"}`}, status: 201},
			{req: request{body: "{ \"currency\" : \"EUR\",\n \"amount\": 100 }"}, status: 201, replayed: true, sameAs: 1},
		},
		runs: 1,
	},
	{
		name: "the same key with another body is refused with 422, revealing nothing",
		steps: []step{
			{status: 201},
			{req: request{body: `{"amount":999}`}, status: 422, problem: httpidem.ProblemKeyReused},
		},
		runs: 1,
	},
	{
		name: "a body naming a member twice (folded) is hashed as bytes",
		steps: []step{
			{req: request{body: `{"amount":1,"Amount":2}`}, status: 201},
			{req: request{body: `{"Amount":2,"amount":1}`}, status: 422, problem: httpidem.ProblemKeyReused},
			{req: request{body: `{"amount":1,"Amount":2}`}, status: 201, replayed: true, sameAs: 1},
		},
		runs: 1,
	},
	{
		name: "another query is another request",
		steps: []step{
			{req: request{query: "dry_run=false"}, status: 201},
			{req: request{query: "dry_run=true"}, status: 422, problem: httpidem.ProblemKeyReused},
			{req: request{query: "dry_run=false"}, status: 201, replayed: true, sameAs: 1},
		},
		runs: 1,
	},
	{
		name: "another media type is another request",
		steps: []step{
			{status: 201},
			{req: request{header: textBody}, status: 422, problem: httpidem.ProblemKeyReused},
		},
		runs: 1,
	},
	{
		name: "a quoted key (structured-field string) is the same key",
		steps: []step{
			{status: 201},
			{req: request{header: quotedKey}, status: 201, replayed: true, sameAs: 1},
		},
		runs: 1,
	},
	{
		name: "POST and PATCH without a key are refused with 400",
		steps: []step{
			{req: request{header: noKey}, status: 400, problem: httpidem.ProblemMissingKey},
			{req: request{method: "PATCH", header: noKey}, status: 400, problem: httpidem.ProblemMissingKey},
		},
		runs: 0,
	},
	{
		name: "malformed and over-long keys are refused with 400",
		steps: []step{
			{req: request{header: map[string]string{"Idempotency-Key": "a b"}}, status: 400, problem: httpidem.ProblemInvalidKey},
			{req: request{header: map[string]string{"Idempotency-Key": strings.Repeat("k", 256)}}, status: 400, problem: httpidem.ProblemInvalidKey},
			{req: request{header: map[string]string{"Idempotency-Key": "clé"}}, status: 400, problem: httpidem.ProblemInvalidKey},
			{req: request{header: map[string]string{"Idempotency-Key": strings.Repeat("k", 255)}}, status: 201},
		},
		runs: 1,
	},
	{
		name: "PUT and DELETE without a key, and GET with one, pass through unstored",
		steps: []step{
			{req: request{method: "PUT", header: noKey}, status: 201},
			{req: request{method: "DELETE", header: noKey}, status: 201},
			{req: request{method: "GET"}, status: 201},
			{req: request{method: "GET"}, status: 201, lacks: []string{"Idempotent-Replayed"}},
		},
		runs: 4,
	},
	{
		name:    "402 declined is a decided outcome: stored and replayed",
		handler: answering(http.StatusPaymentRequired),
		steps: []step{
			{status: 402},
			{status: 402, replayed: true, sameAs: 1},
		},
		runs: 1,
	},
	{
		name:    "409 business conflict is a decided outcome: stored and replayed",
		handler: answering(http.StatusConflict),
		steps: []step{
			{status: 409},
			{status: 409, replayed: true, sameAs: 1},
		},
		runs: 1,
	},
	{
		name:    "a 303 redirect is stored and replayed",
		handler: answering(http.StatusSeeOther),
		steps: []step{
			{status: 303},
			{status: 303, replayed: true, sameAs: 1},
		},
		runs: 1,
	},
	{
		name:    "404 says the request never ran: not stored, key released, the fixed retry runs",
		handler: firstThen(http.StatusNotFound),
		steps: []step{
			{status: 404},
			{status: 201},
			{status: 201, replayed: true, sameAs: 2},
		},
		runs: 2,
	},
	{
		name:    "422 from the handler is a validation failure: not stored",
		handler: firstThen(http.StatusUnprocessableEntity),
		steps:   []step{{status: 422}, {status: 201}},
		runs:    2,
	},
	{
		name:    "5xx is not stored: the retry runs again",
		handler: firstThen(http.StatusBadGateway),
		steps:   []step{{status: 502}, {status: 201}, {status: 201, replayed: true, sameAs: 2}},
		runs:    2,
	},
	{
		name:  "a duplicate while the first runs gets 409 with Retry-After",
		modes: []lambdaidem.Mode{lambdaidem.ClaimFirst},
		steps: []step{
			{status: 201},
			{during: true, status: 409, problem: httpidem.ProblemInProgress, has: []string{"Retry-After"}},
			{status: 201, replayed: true, sameAs: 1},
		},
		runs: 1,
	},
	{
		name:  "an attempt that began an external effect and failed leaves the outcome unknown: 409",
		modes: []lambdaidem.Mode{lambdaidem.ClaimFirst},
		handler: func(runs *atomic.Int32) handler {
			return func(ctx context.Context, _ string) reply {
				runs.Add(1)
				a, _ := lambdaidem.AttemptFrom(ctx)
				if err := a.BeginExternal(ctx); err != nil {
					return reply{status: 500, body: err.Error()}
				}
				return reply{status: http.StatusBadGateway, body: `{"error":"the provider timed out"}`}
			}
		},
		steps: []step{
			{status: 502},
			{status: 409, problem: httpidem.ProblemOutcomeUnknown},
		},
		runs: 1,
	},
	{
		name: "store unavailable: 503 with Retry-After, fail closed",
		store: func(o *memstore.Options) {
			o.Fault = func(string, string) error { return lambdaidem.ErrStoreUnavailable }
		},
		steps: []step{{status: 503, problem: httpidem.ProblemStoreUnavailable, has: []string{"Retry-After"}}},
		runs:  0,
	},
	{
		name: "a staged write whose business condition fails: 409, not stored, the retry runs again",
		handler: func(runs *atomic.Int32) handler {
			return func(ctx context.Context, _ string) reply {
				runs.Add(1)
				if err := memstore.Stage(ctx, memstore.Check{Table: "accounts", Key: "acct-missing"}); err != nil {
					return reply{status: 500, body: err.Error()}
				}
				return reply{status: http.StatusCreated, body: `{"ok":true}`}
			}
		},
		steps: []step{
			{status: 409, problem: httpidem.ProblemConditionFailed},
			{status: 409, problem: httpidem.ProblemConditionFailed},
		},
		runs: 2,
	},
	{
		name:  "a response larger than the outcome cap: 500, nothing committed, key released",
		guard: func(o *lambdaidem.Options) { o.MaxOutcomeSize = 1000 },
		handler: func(runs *atomic.Int32) handler {
			return func(context.Context, string) reply {
				runs.Add(1)
				b := make([]byte, 6000)
				for i := range b {
					b[i] = "abcdefghijklmnopqrstuvwxyz0123456789"[rand.IntN(36)]
				}
				return reply{status: http.StatusOK, header: http.Header{"Content-Type": {"text/plain"}}, body: string(b)}
			}
		},
		steps: []step{
			{status: 500, problem: httpidem.ProblemResponseTooLarge},
			{status: 500, problem: httpidem.ProblemResponseTooLarge},
		},
		runs: 2,
	},
	{
		name: "a token without a subject names no caller: 500, not run",
		steps: []step{
			{req: request{sub: "-"}, status: 500, problem: httpidem.ProblemUnidentifiedCaller},
		},
		runs: 0,
	},
	{
		name: "two callers using one key never meet",
		steps: []step{
			{req: request{sub: "alice"}, status: 201},
			{req: request{sub: "bob"}, status: 201},
			{req: request{sub: "bob"}, status: 201, replayed: true, sameAs: 2},
		},
		runs: 2,
	},
	{
		name: "two keys of one caller are two operations",
		steps: []step{
			{status: 201},
			{req: request{header: otherKey}, status: 201},
		},
		runs: 2,
	},
	{
		name: "a Location with a query (a presigned URL's credential) is not replayed",
		handler: func(runs *atomic.Int32) handler {
			return func(context.Context, string) reply {
				runs.Add(1)
				return reply{status: 201, header: http.Header{"Location": {"https://bucket.example/o?X-Amz-Signature=abc"}, "Content-Type": {"application/json"}}, body: `{}`}
			}
		},
		steps: []step{
			{status: 201, has: []string{"Location"}},
			{status: 201, replayed: true, sameAs: 1, lacks: []string{"Location"}},
		},
		runs: 1,
	},
}

// TestHTTPTable runs every row through every front door and requires each
// reply to be what the row says and the same from every door: status,
// headers and body.
func TestHTTPTable(t *testing.T) {
	for _, r := range table {
		modes := r.modes
		if modes == nil {
			modes = []lambdaidem.Mode{lambdaidem.ClaimFirst, lambdaidem.Optimistic}
		}
		for _, mode := range modes {
			t.Run(mode.String()+"/"+r.name, func(t *testing.T) {
				var first []reply
				for _, d := range doors {
					replies := runRow(t, d, r, mode)
					if first == nil {
						first = replies
						continue
					}
					for i := range replies {
						if !sameReply(first[i], replies[i]) {
							t.Errorf("step %d: %s answers %s\n%s answers %s", i, doors[0].name, show(first[i]), d.name, show(replies[i]))
						}
					}
				}
			})
		}
	}
}

func runRow(t *testing.T, d door, r row, mode lambdaidem.Mode) []reply {
	t.Helper()
	store := memstore.New(func(o *memstore.Options) {
		if r.store != nil {
			r.store(o)
		}
	})
	g, err := lambdaidem.New(store, func(o *lambdaidem.Options) {
		o.Mode = mode
		o.Logger = discard
		if r.guard != nil {
			r.guard(o)
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	var runs atomic.Int32
	build := r.handler
	if build == nil {
		build = payment
	}
	h := build(&runs)
	entered, release := make(chan struct{}), make(chan struct{})
	if slices.ContainsFunc(r.steps, func(s step) bool { return s.during }) {
		inner := h
		h = func(ctx context.Context, body string) reply {
			if runs.Load() == 0 {
				close(entered)
				<-release
			}
			return inner(ctx, body)
		}
	}
	send := d.build(t, g, h)
	replies := make([]reply, len(r.steps))
	var firstDone chan struct{}
	for i, s := range r.steps {
		switch {
		case i == 0 && len(r.steps) > 1 && r.steps[1].during:
			firstDone = make(chan struct{})
			go func() { defer close(firstDone); replies[0] = send(s.req) }()
			<-entered
			continue
		case s.during:
			replies[i] = send(s.req)
			close(release)
			<-firstDone
		default:
			replies[i] = send(s.req)
		}
	}
	for i, s := range r.steps {
		check(t, d.name, i, s, replies)
	}
	// Optimistic mode runs a duplicate's handler body before its commit
	// finds the stored outcome: only claim-first runs are counted.
	if got := runs.Load(); mode == lambdaidem.ClaimFirst && got != r.runs {
		t.Errorf("%s: the handler ran %d times, want %d", d.name, got, r.runs)
	}
	return replies
}

func check(t *testing.T, door string, i int, s step, replies []reply) {
	t.Helper()
	got := replies[i]
	where := fmt.Sprintf("%s step %d", door, i)
	if got.status != s.status {
		t.Errorf("%s: status %d, want %d; body %.300s", where, got.status, s.status, got.body)
	}
	if s.problem != "" {
		var p struct {
			Type   string `json:"type"`
			Status int    `json:"status"`
			Title  string `json:"title"`
			Detail string `json:"detail"`
		}
		if ct := headerOf(got, "Content-Type"); ct != "application/problem+json" {
			t.Errorf("%s: Content-Type %q, want application/problem+json", where, ct)
		}
		if err := json.Unmarshal([]byte(got.body), &p); err != nil || p.Type != s.problem || p.Status != s.status || p.Title == "" || p.Detail == "" {
			t.Errorf("%s: problem %+v (%v), want type %s, status %d, a title and a detail", where, p, err, s.problem, s.status)
		}
		for _, earlier := range replies[:i] {
			if earlier.status < 400 && earlier.body != "" && strings.Contains(got.body, earlier.body) {
				t.Errorf("%s: the problem reveals an earlier response", where)
			}
		}
	}
	if replayed := headerOf(got, "Idempotent-Replayed") == "true"; replayed != s.replayed {
		t.Errorf("%s: replayed = %v, want %v", where, replayed, s.replayed)
	}
	for _, name := range s.has {
		if headerOf(got, name) == "" {
			t.Errorf("%s: no %s header; headers %v", where, name, got.header)
		}
	}
	for _, name := range s.lacks {
		if v := headerOf(got, name); v != "" {
			t.Errorf("%s: %s: %q, want none", where, name, v)
		}
	}
	if s.sameAs > 0 {
		want := replies[s.sameAs-1]
		if got.status != want.status || got.body != want.body {
			t.Errorf("%s: %d %q, want step %d's %d %q", where, got.status, got.body, s.sameAs-1, want.status, want.body)
		}
		for _, name := range []string{"Content-Type", "Location", "Etag"} {
			if w := headerOf(want, name); w != "" && s.lacks == nil && headerOf(got, name) != w {
				t.Errorf("%s: %s %q, want step %d's %q", where, name, headerOf(got, name), s.sameAs-1, w)
			}
		}
	}
}

// sameReply compares two doors' replies: status, body, and every header
// by its joined value.
func sameReply(a, b reply) bool {
	if a.status != b.status || a.body != b.body {
		return false
	}
	return reflect.DeepEqual(joined(a.header), joined(b.header))
}

func joined(h http.Header) map[string]string {
	m := map[string]string{}
	for k := range h {
		m[k] = strings.Join(h.Values(k), ", ")
	}
	return m
}

func show(r reply) string { return fmt.Sprintf("%d %v %.200s", r.status, joined(r.header), r.body) }
