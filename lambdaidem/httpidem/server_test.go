package httpidem_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lambdaidem/lambdaidem/lambdaidem"
	"github.com/lambdaidem/lambdaidem/lambdaidem/httpidem"
	"github.com/lambdaidem/lambdaidem/lambdaidem/memstore"
)

// clientPost sends a keyed POST to a real server.
func clientPost(ctx context.Context, url, key, body string) (*http.Response, string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url+"/payments", strings.NewReader(body))
	if err != nil {
		return nil, "", err
	}
	req.Header.Set("Idempotency-Key", key)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-User", "alice")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp, string(b), err
}

// Synchronized clients on one key through a real net/http server: exactly
// one runs the handler (one staged write committed); the others get 409 in
// progress (Reject) or, waiting, the replay of its outcome (Wait).
func TestConcurrentClientsOneEffect(t *testing.T) {
	for _, inFlight := range []lambdaidem.InFlight{lambdaidem.Reject, lambdaidem.Wait} {
		for _, mode := range []lambdaidem.Mode{lambdaidem.ClaimFirst, lambdaidem.Optimistic} {
			if inFlight == lambdaidem.Wait && mode == lambdaidem.Optimistic {
				continue // optimistic duplicates run and replay; they never wait
			}
			name := mode.String() + map[lambdaidem.InFlight]string{lambdaidem.Reject: "/reject", lambdaidem.Wait: "/wait"}[inFlight]
			t.Run(name, func(t *testing.T) {
				store := memstore.New()
				var runs atomic.Int32
				mw := newMiddleware(t, store, func(o *lambdaidem.Options) { o.Mode, o.InFlight = mode, inFlight })
				srv := httptest.NewServer(mw(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					n := runs.Add(1)
					if err := memstore.Stage(r.Context(), memstore.Put{Table: "payments", Key: "pay-1", Value: []byte{byte(n)}, IfAbsent: true}); err != nil {
						http.Error(w, err.Error(), 500)
						return
					}
					time.Sleep(20 * time.Millisecond) // hold the claim while the others arrive
					w.WriteHeader(http.StatusCreated)
					_, _ = io.WriteString(w, `{"id":"pay-1"}`)
				})))
				defer srv.Close()

				const clients = 8
				start := make(chan struct{})
				var wg sync.WaitGroup
				statuses := make([]int, clients)
				bodies := make([]string, clients)
				for i := range clients {
					wg.Add(1)
					go func() {
						defer wg.Done()
						<-start
						resp, body, err := clientPost(context.Background(), srv.URL, "k-1", `{"amount":1}`)
						if err != nil {
							t.Error(err)
							return
						}
						statuses[i], bodies[i] = resp.StatusCode, body
					}()
				}
				close(start)
				wg.Wait()
				created := 0
				for i, s := range statuses {
					switch {
					case s == 201 && bodies[i] == `{"id":"pay-1"}`:
						created++
					case s == 409 && inFlight == lambdaidem.Reject && strings.Contains(bodies[i], httpidem.ProblemInProgress):
					default:
						t.Errorf("client %d: %d %s", i, s, bodies[i])
					}
				}
				if items := store.Items("payments"); len(items) != 1 {
					t.Fatalf("%d payments written, want exactly 1", len(items))
				}
				if mode == lambdaidem.ClaimFirst && runs.Load() != 1 {
					t.Fatalf("handler ran %d times, want 1", runs.Load())
				}
				if inFlight == lambdaidem.Wait && created != clients {
					t.Fatalf("%d of %d waiting clients got the outcome", created, clients)
				}
			})
		}
	}
}

// A client that disconnects cancels the request's context in net/http.
// The attempt is neither released nor marked unknown for that alone: the
// handler runs on a context without that cancellation, its outcome is
// stored, and the client's retry replays it.
func TestClientDisconnectDoesNotReleaseTheAttempt(t *testing.T) {
	store := memstore.New()
	var runs atomic.Int32
	disconnected := make(chan struct{})
	done := make(chan struct{})
	inner := newMiddleware(t, store, nil)(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		runs.Add(1)
		<-disconnected
		// A handler that honours its context (every SDK call does) would
		// fail here if the middleware passed the connection's cancellation on.
		if err := r.Context().Err(); err != nil {
			http.Error(w, err.Error(), http.StatusServiceUnavailable)
			return
		}
		_ = memstore.Stage(r.Context(), memstore.Put{Table: "payments", Key: "pay-1", Value: []byte("x")})
		w.WriteHeader(http.StatusCreated)
		_, _ = io.WriteString(w, `{"id":"pay-1"}`)
	}))
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if runs.Load() == 0 {
			go func() { <-r.Context().Done(); close(disconnected) }()
			defer close(done)
		}
		inner.ServeHTTP(w, r)
	}))
	defer srv.Close()

	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		for runs.Load() == 0 {
			time.Sleep(time.Millisecond)
		}
		cancel() // the client goes away while the handler runs
	}()
	if _, _, err := clientPost(ctx, srv.URL, "k-1", `{"amount":1}`); !errors.Is(err, context.Canceled) {
		t.Fatalf("first request: %v, want the client's own cancellation", err)
	}
	<-done
	resp, body, err := clientPost(context.Background(), srv.URL, "k-1", `{"amount":1}`)
	if err != nil || resp.StatusCode != 201 || body != `{"id":"pay-1"}` || resp.Header.Get("Idempotent-Replayed") != "true" {
		t.Fatalf("retry: %v %s %v; want the stored outcome replayed", resp, body, err)
	}
	if runs.Load() != 1 || len(store.Items("payments")) != 1 {
		t.Fatalf("%d runs, %d payments; want 1 and 1", runs.Load(), len(store.Items("payments")))
	}
}

// A panic in the handler releases the claim. Behind net/http's server the
// middleware panics on (the server recovers it and drops the connection);
// under lambdaurl.Wrap, whose goroutine has no recover, it answers 500
// instead of ending the process. Either way the retry runs again.
func TestPanicReleasesTheClaim(t *testing.T) {
	handler := func(runs *atomic.Int32) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if runs.Add(1) == 1 {
				panic("boom")
			}
			w.WriteHeader(http.StatusCreated)
		})
	}
	t.Run("net/http server: panics on", func(t *testing.T) {
		var runs atomic.Int32
		var repanicked atomic.Value
		mw := newMiddleware(t, memstore.New(), nil)
		inner := mw(handler(&runs))
		srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			defer func() {
				if v := recover(); v != nil {
					repanicked.Store(v)
					panic(http.ErrAbortHandler) // as the server would: drop the connection
				}
			}()
			inner.ServeHTTP(w, r)
		}))
		srv.Config.ErrorLog = nil
		srv.Start()
		defer srv.Close()
		if _, _, err := clientPost(context.Background(), srv.URL, "k-1", `{}`); err == nil {
			t.Fatal("the first request got an answer; want the connection dropped")
		}
		if repanicked.Load() != "boom" {
			t.Fatalf("panic seen above the middleware: %v, want the handler's", repanicked.Load())
		}
		resp, _, err := clientPost(context.Background(), srv.URL, "k-1", `{}`)
		if err != nil || resp.StatusCode != 201 || runs.Load() != 2 {
			t.Fatalf("retry: %v %v after %d runs; want it run again", resp, err, runs.Load())
		}
	})
	t.Run("lambdaurl: recovered, 500", func(t *testing.T) {
		var runs atomic.Int32
		mw, err := httpidem.New(guard(t, memstore.New()), "CreatePayment", func(o *httpidem.Options) { o.Logger = discard })
		if err != nil {
			t.Fatal(err)
		}
		h := mw(handler(&runs))
		arn := "arn:aws:iam::123456789012:user/alice"
		status, header, body := invokeURL(t, h, urlEvent(arn, `{}`))
		if status != 500 || header.Get("Content-Type") != "application/problem+json" || !strings.Contains(body, httpidem.ProblemInternal) {
			t.Fatalf("panicking invocation: %d %v %s; want 500 %s", status, header, body, httpidem.ProblemInternal)
		}
		if status, _, _ := invokeURL(t, h, urlEvent(arn, `{}`)); status != 201 || runs.Load() != 2 {
			t.Fatalf("retry: %d after %d runs; want it run again", status, runs.Load())
		}
	})
}

// The attempt is in the request's context: OperationKey is stable across
// attempts of one operation, and BeginExternal marks the record, so that a
// failure after it leaves the outcome unknown rather than released.
func TestAttemptFromRequestContext(t *testing.T) {
	var keys []string
	var runs atomic.Int32
	h := newMiddleware(t, memstore.New(), nil)(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		a, ok := lambdaidem.AttemptFrom(r.Context())
		if !ok {
			t.Fatal("no attempt in the request's context")
		}
		keys = append(keys, a.OperationKey())
		if runs.Add(1) == 1 {
			w.WriteHeader(http.StatusServiceUnavailable) // released: the retry runs again
			return
		}
		if err := a.BeginExternal(r.Context()); err != nil {
			t.Fatal(err)
		}
		w.WriteHeader(http.StatusBadGateway) // after the external effect began: unknown
	}))
	for _, want := range []int{503, 502, 409} {
		if rec := serve(h, post(`{}`)); rec.Code != want {
			t.Fatalf("%d %s, want %d", rec.Code, rec.Body.String(), want)
		}
	}
	if len(keys) != 2 || keys[0] != keys[1] || keys[0] == "" {
		t.Fatalf("operation keys %q, want one stable key across both attempts", keys)
	}
}
