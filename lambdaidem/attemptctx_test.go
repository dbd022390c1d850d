package lambdaidem_test

import (
	"context"
	"errors"
	"runtime"
	"testing"

	"github.com/lambdaidem/lambdaidem/lambdaidem"
	"github.com/lambdaidem/lambdaidem/lambdaidem/memstore"
)

// TestAttemptContextEndsWhenTheHandlerReturns: the context a handler runs
// in ends when the handler returns (normally, with an error, by a panic
// or by runtime.Goexit), on every path that runs it, as net/http cancels a request's
// context when ServeHTTP returns; the caller's context does not end. A
// call the handler left running under it is cancelled. That is what the
// assumption "a handler that has returned has no call of its own still in
// flight" (docs/guarantees.md) rests on: an UNKNOWN record whose owner
// never renewed is reconciled at once (TestJudge), so a provider call its
// handler left behind must not land after a reconcile's "not done".
func TestAttemptContextEndsWhenTheHandlerReturns(t *testing.T) {
	fresh := func(optFns ...func(*memstore.Options)) func() *memstore.Store {
		return func() *memstore.Store { return memstore.New(optFns...) }
	}
	down := func(o *memstore.Options) {
		o.Fault = func(op, _ string) error {
			if op == "claim" {
				return lambdaidem.ErrStoreUnavailable
			}
			return nil
		}
	}
	paths := []struct {
		name  string
		store func() *memstore.Store
		opts  func(*lambdaidem.Options)
	}{
		{"claim-first, standard Lambda", fresh(), func(o *lambdaidem.Options) {}},
		{"claim-first, renewing", fresh(), func(o *lambdaidem.Options) { o.Renew = lambdaidem.RenewAlways }},
		{"optimistic", fresh(), func(o *lambdaidem.Options) { o.Mode = lambdaidem.Optimistic }},
		{"failing open", fresh(down), func(o *lambdaidem.Options) { o.FailOpen = true }},
		{"disabled", fresh(), func(o *lambdaidem.Options) { o.Disabled = true; o.Getenv = env(nil) }},
	}
	errProvider := errors.New("provider timed out")
	exits := []struct {
		name string
		fn   func(ctx context.Context) (string, error)
	}{
		{"returns", func(context.Context) (string, error) { return "ok", nil }},
		{"returns an error", func(context.Context) (string, error) { return "", errProvider }},
		{"returns an error after BeginExternal", func(ctx context.Context) (string, error) {
			a, _ := lambdaidem.AttemptFrom(ctx)
			_ = a.BeginExternal(ctx) // refused in optimistic mode
			return "", errProvider
		}},
		{"panics", func(context.Context) (string, error) { panic("handler bug") }},
		{"calls runtime.Goexit", func(context.Context) (string, error) { runtime.Goexit(); return "", nil }},
	}
	for _, p := range paths {
		for _, x := range exits {
			t.Run(p.name+"/"+x.name, func(t *testing.T) {
				f := newFixtureWith(t, p.store(), p.opts)
				caller, cancel := context.WithCancel(context.Background())
				defer cancel()
				var left context.Context
				// A call the handler leaves behind: it honours its context.
				landed := make(chan bool, 1)
				release := make(chan struct{})
				done := make(chan struct{})
				go func() { // its own goroutine, for runtime.Goexit
					defer close(done)
					defer func() { _ = recover() }()
					_, _ = lambdaidem.Do(caller, f.guard, call("k-"+p.name, "x"), func(ctx context.Context) (string, error) {
						left = ctx
						go func() {
							select {
							case <-ctx.Done():
								landed <- false
							case <-release: // the provider checks its context before it applies
								landed <- ctx.Err() == nil
							}
						}()
						return x.fn(ctx)
					})
				}()
				<-done
				if left == nil {
					t.Fatal("the handler did not run")
				}
				if left.Err() == nil {
					t.Fatal("the handler's context is live after the handler returned")
				}
				close(release)
				if <-landed {
					t.Fatal("a call the handler left behind landed after it returned")
				}
				if caller.Err() != nil {
					t.Fatal("the caller's context ended")
				}
			})
		}
	}
}
