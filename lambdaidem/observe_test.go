package lambdaidem_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lambdaidem/lambdaidem/lambdaidem"
	"github.com/lambdaidem/lambdaidem/lambdaidem/memstore"
)

// hookLog records every hook call as one line.
type hookLog struct {
	mu    sync.Mutex
	lines []string
}

func (l *hookLog) add(format string, args ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.lines = append(l.lines, fmt.Sprintf(format, args...))
}

func (l *hookLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Join(l.lines, "; ")
}

// hooks reports every hook to l.
func (l *hookLog) hooks() lambdaidem.Hooks {
	return lambdaidem.Hooks{
		OnClaim:  func(_ context.Context, e lambdaidem.Event) { l.add("claim %s", e.Operation) },
		OnReplay: func(_ context.Context, e lambdaidem.Event) { l.add("replay %s from %s", e.Operation, e.From) },
		OnConflict: func(_ context.Context, e lambdaidem.Event, err error) {
			l.add("conflict %s %v", e.Operation, errors.Unwrap(err))
		},
		OnCommit: func(_ context.Context, e lambdaidem.Event) {
			l.add("commit %s %s in %v", e.Operation, e.Status, e.Duration)
		},
		OnUnknown: func(_ context.Context, e lambdaidem.Event) { l.add("unknown %s", e.Operation) },
		OnFailOpen: func(_ context.Context, e lambdaidem.Event, err error) {
			l.add("fail open %s: %v", e.Operation, errors.Is(err, lambdaidem.ErrStoreUnavailable))
		},
		OnStoreError: func(_ context.Context, e lambdaidem.Event, err error) {
			var serr *lambdaidem.StoreError
			if !errors.As(err, &serr) {
				l.add("store error %s: not a *StoreError: %v", e.Operation, err)
				return
			}
			l.add("store error %s %s", e.Operation, serr.Op)
		},
	}
}

// faultOn fails the store calls named in ops as unavailable.
func faultOn(ops ...string) *memstore.Store {
	return memstore.New(func(o *memstore.Options) {
		o.Fault = func(op, key string) error {
			for _, want := range ops {
				if op == want {
					return lambdaidem.ErrStoreUnavailable
				}
			}
			return nil
		}
	})
}

func TestHooksReportEveryOutcomeOnce(t *testing.T) {
	ok := func(ctx context.Context) (string, error) { return "ok", nil }
	tests := []struct {
		name  string
		store func() *memstore.Store
		opts  func(*lambdaidem.Options)
		calls func(t *testing.T, f *fixture)
		want  string
	}{{
		name: "first request, then a duplicate from the store",
		calls: func(t *testing.T, f *fixture) {
			lambdaidem.Do(context.Background(), f.guard, call("k", "a"), func(ctx context.Context) (string, error) {
				f.clock.Advance(7 * time.Millisecond) // the handler runs 7ms; the commit takes none
				return "ok", nil
			})
			lambdaidem.Do(context.Background(), f.guard, call("k", "a"), ok)
		},
		want: "claim Pay; commit Pay COMPLETED in 0s; replay Pay from store",
	}, {
		name: "a duplicate from the local cache",
		opts: func(o *lambdaidem.Options) { o.CacheSize = 8 },
		calls: func(t *testing.T, f *fixture) {
			lambdaidem.Do(context.Background(), f.guard, call("k", "a"), ok)
			lambdaidem.Do(context.Background(), f.guard, call("k", "a"), ok)
		},
		want: "claim Pay; commit Pay COMPLETED in 0s; replay Pay from cache",
	}, {
		name: "optimistic commit",
		opts: func(o *lambdaidem.Options) { o.Mode = lambdaidem.Optimistic },
		calls: func(t *testing.T, f *fixture) {
			lambdaidem.Do(context.Background(), f.guard, call("k", "a"), ok)
		},
		want: "commit Pay COMPLETED in 0s",
	}, {
		name: "key reused",
		calls: func(t *testing.T, f *fixture) {
			lambdaidem.Do(context.Background(), f.guard, call("k", "a"), ok)
			lambdaidem.Do(context.Background(), f.guard, call("k", "b"), ok)
		},
		want: "claim Pay; commit Pay COMPLETED in 0s; conflict Pay " + lambdaidem.ErrKeyReused.Error(),
	}, {
		name: "external effect, then an ambiguous failure, then a duplicate",
		calls: func(t *testing.T, f *fixture) {
			lambdaidem.Do(context.Background(), f.guard, call("k", "a"), chargeThenFail)
			lambdaidem.Do(context.Background(), f.guard, call("k", "a"), ok)
		},
		want: "claim Pay; unknown Pay; conflict Pay " + lambdaidem.ErrOutcomeUnknown.Error(),
	}, {
		name: "reconciled as done",
		calls: func(t *testing.T, f *fixture) {
			lambdaidem.Do(context.Background(), f.guard, call("k", "a"), chargeThenFail)
			c := call("k", "a")
			c.Reconcile = func(context.Context, lambdaidem.Unknown) (string, bool, error) { return "charged", true, nil }
			lambdaidem.Do(context.Background(), f.guard, c, ok)
		},
		want: "claim Pay; unknown Pay; commit Pay COMPLETED in 0s",
	}, {
		name:  "store down, fail closed",
		store: func() *memstore.Store { return faultOn("claim") },
		calls: func(t *testing.T, f *fixture) {
			lambdaidem.Do(context.Background(), f.guard, call("k", "a"), ok)
		},
		want: "store error Pay claim",
	}, {
		name:  "store down, fail open",
		store: func() *memstore.Store { return faultOn("claim") },
		opts:  func(o *lambdaidem.Options) { o.FailOpen = true },
		calls: func(t *testing.T, f *fixture) {
			lambdaidem.Do(context.Background(), f.guard, call("k", "a"), ok)
		},
		want: "store error Pay claim; fail open Pay: true",
	}, {
		name:  "store down at the optimistic commit, fail open",
		store: func() *memstore.Store { return faultOn("commit") },
		opts: func(o *lambdaidem.Options) {
			o.FailOpen = true
			o.Mode = lambdaidem.Optimistic
		},
		calls: func(t *testing.T, f *fixture) {
			lambdaidem.Do(context.Background(), f.guard, call("k", "a"), ok)
		},
		want: "store error Pay commit; fail open Pay: true",
	}, {
		name:  "commit and release both fail",
		store: func() *memstore.Store { return faultOn("commit", "release") },
		calls: func(t *testing.T, f *fixture) {
			lambdaidem.Do(context.Background(), f.guard, call("k", "a"), ok)
		},
		want: "claim Pay; store error Pay release; store error Pay commit",
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var log hookLog
			s := memstore.New()
			if tc.store != nil {
				s = tc.store()
			}
			f := newFixtureWith(t, s, func(o *lambdaidem.Options) {
				o.Hooks = log.hooks()
				if tc.opts != nil {
					tc.opts(o)
				}
			})
			tc.calls(t, f)
			if got := log.String(); got != tc.want {
				t.Fatalf("hooks saw\n  %s\nwant\n  %s", got, tc.want)
			}
		})
	}
}

func TestCommitHookMeasuresTheCommitCall(t *testing.T) {
	var f *fixture
	s := memstore.New(func(o *memstore.Options) {
		o.Fault = func(op, key string) error {
			if op == "commit" {
				f.clock.Advance(42 * time.Millisecond)
			}
			return nil
		}
	})
	var got time.Duration
	f = newFixtureWith(t, s, func(o *lambdaidem.Options) {
		o.Hooks.OnCommit = func(_ context.Context, e lambdaidem.Event) { got = e.Duration }
	})
	if _, err := lambdaidem.Do(context.Background(), f.guard, call("k", "a"), func(ctx context.Context) (string, error) {
		f.clock.Advance(time.Second) // the handler's own time is not the commit's
		return "ok", nil
	}); err != nil {
		t.Fatal(err)
	}
	if got != 42*time.Millisecond {
		t.Fatalf("OnCommit Duration = %v; want the 42ms the commit call took", got)
	}
}

// TestAFailedRenewalIsAStoreError: a lease renewal the store fails is
// reported to OnStoreError (Op "renew"), and the renewal is retried.
func TestAFailedRenewalIsAStoreError(t *testing.T) {
	var failed atomic.Bool
	s := memstore.New(func(o *memstore.Options) {
		o.Fault = func(op, key string) error {
			if op == "renew" && failed.CompareAndSwap(false, true) {
				return lambdaidem.ErrStoreUnavailable
			}
			return nil
		}
	})
	var log hookLog
	f := renewing(t, s, func(o *lambdaidem.Options) {
		o.Hooks.OnStoreError = log.hooks().OnStoreError
	})
	_, err := lambdaidem.Do(context.Background(), f.guard, call("k", "a"), func(ctx context.Context) (string, error) {
		f.tick(t, testLease*3/4) // past the renewal point
		for i := 0; f.calls("renew") < 2; i++ {
			if i == 100 {
				t.Fatalf("renew calls = %d; want a retry within a second of the failed renewal", f.calls("renew"))
			}
			f.tick(t, 10*time.Millisecond) // through the retry's backoff, within the lease
		}
		return "ok", nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := log.String(); got != "store error Pay renew" {
		t.Fatalf("OnStoreError saw %q; want one failed renewal", got)
	}
}
