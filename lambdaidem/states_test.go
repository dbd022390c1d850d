package lambdaidem_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lambdaidem/lambdaidem/lambdaidem"
	"github.com/lambdaidem/lambdaidem/lambdaidem/memstore"
)

// chargeThenFail begins an external effect and then fails ambiguously.
func chargeThenFail(ctx context.Context) (string, error) {
	a, _ := lambdaidem.AttemptFrom(ctx)
	if err := a.BeginExternal(ctx); err != nil {
		return "", err
	}
	return "", errors.New("provider timed out")
}

func TestFailureAfterExternalEffectLeavesUnknown(t *testing.T) {
	f := newFixture(t)
	if _, err := lambdaidem.Do(context.Background(), f.guard, call("k", "x"), chargeThenFail); err == nil {
		t.Fatal("want the handler's error")
	}
	if rec := f.onlyRecord(t); rec.Status != lambdaidem.StatusUnknown {
		t.Fatalf("record = %+v; want UNKNOWN, kept", rec)
	}
	f.clock.Advance(time.Hour) // long past any lease: still not retried blindly
	_, err := lambdaidem.Do(context.Background(), f.guard, call("k", "x"), func(ctx context.Context) (string, error) {
		t.Fatal("an unknown outcome was run again without reconciliation")
		return "", nil
	})
	if !errors.Is(err, lambdaidem.ErrOutcomeUnknown) {
		t.Fatalf("duplicate = %v; want ErrOutcomeUnknown", err)
	}
}

func TestPanicAfterExternalEffectLeavesUnknown(t *testing.T) {
	f := newFixture(t)
	func() {
		defer func() { recover() }()
		lambdaidem.Do(context.Background(), f.guard, call("k", "x"), func(ctx context.Context) (string, error) {
			a, _ := lambdaidem.AttemptFrom(ctx)
			a.BeginExternal(ctx)
			panic("after the charge")
		})
	}()
	if rec := f.onlyRecord(t); rec.Status != lambdaidem.StatusUnknown {
		t.Fatalf("record = %+v; want UNKNOWN", rec)
	}
}

func TestReconcileResolvesUnknown(t *testing.T) {
	cases := []struct {
		name      string
		done      bool
		reconErr  error
		wantOut   string
		wantErr   error
		wantRerun bool
	}{
		{name: "effect happened: completed with the reconciled outcome", done: true, wantOut: "charged (reconciled)"},
		{name: "effect did not happen: released and run again", done: false, wantOut: "charged on retry", wantRerun: true},
		{name: "cannot tell yet: still unknown", reconErr: errors.New("provider unreachable"), wantErr: lambdaidem.ErrOutcomeUnknown},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			c := call("k", "x")
			lambdaidem.Do(context.Background(), f.guard, c, chargeThenFail)
			var gotKey string
			c.Reconcile = func(ctx context.Context, u lambdaidem.Unknown) (string, bool, error) {
				gotKey = u.OperationKey
				return "charged (reconciled)", tc.done, tc.reconErr
			}
			reran := false
			out, err := lambdaidem.Do(context.Background(), f.guard, c, func(ctx context.Context) (string, error) {
				reran = true
				return "charged on retry", nil
			})
			if out != tc.wantOut || !errors.Is(err, tc.wantErr) || reran != tc.wantRerun {
				t.Fatalf("= %q, %v, reran %v; want %q, %v, reran %v", out, err, reran, tc.wantOut, tc.wantErr, tc.wantRerun)
			}
			if gotKey == "" {
				t.Fatal("reconcile did not get the operation key")
			}
			if tc.wantErr == nil {
				if rec := f.onlyRecord(t); rec.Status != lambdaidem.StatusCompleted {
					t.Fatalf("record = %+v; want COMPLETED", rec)
				}
			}
		})
	}
}

func TestOptimisticModeRefusesExternalEffects(t *testing.T) {
	f := newFixture(t, func(o *lambdaidem.Options) { o.Mode = lambdaidem.Optimistic })
	_, err := lambdaidem.Do(context.Background(), f.guard, call("k", "x"), func(ctx context.Context) (string, error) {
		a, _ := lambdaidem.AttemptFrom(ctx)
		return "", a.BeginExternal(ctx)
	})
	if err == nil {
		t.Fatal("BeginExternal succeeded in optimistic mode")
	}
	f.noRecords(t)
}

func TestOptimisticFirstRequestIsOneWrite(t *testing.T) {
	f := newFixture(t, func(o *lambdaidem.Options) { o.Mode = lambdaidem.Optimistic })
	out, err := lambdaidem.Do(context.Background(), f.guard, call("k", "x"), func(ctx context.Context) (string, error) {
		return stagePayment(ctx, "p")
	})
	if err != nil || out != "paid p" {
		t.Fatal(out, err)
	}
	if calls := f.store.Calls(); len(calls) != 1 || calls["commit"] != 1 {
		t.Fatalf("store calls = %v; want one commit", calls)
	}
	// A completed duplicate runs the body, but its commit is refused and it replays.
	out, err = lambdaidem.Do(context.Background(), f.guard, call("k", "x"), func(ctx context.Context) (string, error) {
		return stagePayment(ctx, "p2")
	})
	if err != nil || out != "paid p" {
		t.Fatalf("duplicate = %q, %v; want the replay", out, err)
	}
	if _, ok := f.store.Item("payments", "p2"); ok {
		t.Fatal("a duplicate's staged write was committed")
	}
}

func TestLocalCacheAnswersWarmDuplicates(t *testing.T) {
	f := newFixture(t, func(o *lambdaidem.Options) {
		o.CacheSize = 2
		o.RetryHorizon = time.Hour
	})
	h := func(ctx context.Context) (string, error) { return "ok", nil }
	lambdaidem.Do(context.Background(), f.guard, call("k", "x"), h)
	before := f.store.Calls()
	if out, err := lambdaidem.Do(context.Background(), f.guard, call("k", "x"), h); err != nil || out != "ok" {
		t.Fatal(out, err)
	}
	if after := f.store.Calls(); after["claim"] != before["claim"] {
		t.Fatalf("a cached duplicate called the store: %v → %v", before, after)
	}
	if _, err := lambdaidem.Do(context.Background(), f.guard, call("k", "other payload"), h); !errors.Is(err, lambdaidem.ErrKeyReused) {
		t.Fatalf("cached key with another payload = %v; want ErrKeyReused", err)
	}
	f.clock.Advance(2 * time.Hour)
	ran := false
	lambdaidem.Do(context.Background(), f.guard, call("k", "x"), func(ctx context.Context) (string, error) { ran = true; return "again", nil })
	if !ran {
		t.Fatal("an expired cache entry was replayed")
	}
}

// lossy applies each write and then reports a failed condition, as
// dynamostore does when the SDK retries a write whose response was lost and
// the retry fails its condition.
type lossy struct {
	*memstore.Store
	loseClaim, loseCommit bool
}

func (l *lossy) Claim(ctx context.Context, c lambdaidem.Claim) (lambdaidem.Record, bool, error) {
	rec, ok, err := l.Store.Claim(ctx, c)
	if l.loseClaim && ok {
		return rec, false, err
	}
	return rec, ok, err
}

func (l *lossy) Commit(ctx context.Context, c lambdaidem.Commit) (lambdaidem.Record, bool, error) {
	rec, ok, err := l.Store.Commit(ctx, c)
	if l.loseCommit && ok {
		return rec, false, err
	}
	return rec, ok, err
}

func TestLostResponsesAreRecognisedAsOwnSuccess(t *testing.T) {
	for _, tc := range []struct {
		name string
		l    lossy
		mode lambdaidem.Mode
	}{
		{"claim", lossy{loseClaim: true}, lambdaidem.ClaimFirst},
		{"commit", lossy{loseCommit: true}, lambdaidem.ClaimFirst},
		{"optimistic commit", lossy{loseCommit: true}, lambdaidem.Optimistic},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := memstore.New()
			tc.l.Store = s
			var commits, replays atomic.Int32
			g, err := lambdaidem.New(&tc.l, func(o *lambdaidem.Options) {
				o.Mode = tc.mode
				o.Hooks.OnCommit = func(context.Context, lambdaidem.Event) { commits.Add(1) }
				o.Hooks.OnReplay = func(context.Context, lambdaidem.Event) { replays.Add(1) }
			})
			if err != nil {
				t.Fatal(err)
			}
			out, err := lambdaidem.Do(context.Background(), g, call("k", "x"), func(ctx context.Context) (string, error) {
				return stagePayment(ctx, "p")
			})
			if err != nil || out != "paid p" {
				t.Fatalf("= %q, %v; want our own success", out, err)
			}
			if len(s.Items("payments")) != 1 {
				t.Fatal("want exactly one business item")
			}
			// Its own commit, not a duplicate's replay of it.
			if commits.Load() != 1 || replays.Load() != 0 {
				t.Fatalf("OnCommit %d, OnReplay %d times; want 1 and 0", commits.Load(), replays.Load())
			}
		})
	}
}

func TestOptionsAreValidated(t *testing.T) {
	cases := []struct {
		name string
		fn   func(*lambdaidem.Options)
	}{
		{"negative horizon", func(o *lambdaidem.Options) { o.RetryHorizon = -time.Hour }},
		{"negative outcome cap", func(o *lambdaidem.Options) { o.MaxOutcomeSize = -1 }},
		{"unknown mode", func(o *lambdaidem.Options) { o.Mode = 7 }},
		{"namespace with separator", func(o *lambdaidem.Options) { o.Namespace = "a#b" }},
	}
	for _, tc := range cases {
		if _, err := lambdaidem.New(memstore.New(), tc.fn); err == nil {
			t.Errorf("%s: New succeeded; want an error", tc.name)
		}
	}
	if _, err := lambdaidem.New(nil); err == nil {
		t.Error("New(nil) succeeded")
	}
	g, err := lambdaidem.New(memstore.New())
	if err != nil {
		t.Fatal(err)
	}
	o := g.Options()
	if o.RetryHorizon != 24*time.Hour || o.MaxKeySize != 255 || o.Namespace != "lambdaidem" || o.Mode != lambdaidem.ClaimFirst {
		t.Fatalf("defaults = %+v", o)
	}
}

// A process that dies after starting an external effect cannot mark its
// record UNKNOWN. BeginExternal marked it in the store before the effect,
// so once the lease lapses the record is not taken over: duplicates get
// ErrOutcomeUnknown, and the reconcile function decides.
func TestCrashAfterExternalEffectIsNeverTakenOver(t *testing.T) {
	f := newFixture(t, func(o *lambdaidem.Options) { o.Lease = time.Minute })
	began, dead := make(chan struct{}), make(chan struct{})
	stalled := make(chan error)
	go func() {
		_, err := lambdaidem.Do(context.Background(), f.guard, call("k", "100 EUR"), func(ctx context.Context) (string, error) {
			a, _ := lambdaidem.AttemptFrom(ctx)
			if err := a.BeginExternal(ctx); err != nil {
				return "", err
			}
			close(began) // provider.Charge(ctx, a.OperationKey()) is under way…
			<-dead       // …and the process freezes, never to finish in time
			return "charged by the stalled attempt", nil
		})
		stalled <- err
	}()
	<-began
	if rec := f.onlyRecord(t); !rec.External || rec.Status != lambdaidem.StatusInProgress {
		t.Fatalf("record after BeginExternal = %+v; want in progress and marked external", rec)
	}
	f.clock.Advance(2 * time.Minute) // the lease lapses

	for _, payload := range []string{"100 EUR", "999 EUR"} {
		_, err := lambdaidem.Do(context.Background(), f.guard, call("k", payload), func(ctx context.Context) (string, error) {
			t.Errorf("payload %s: a duplicate ran after an external effect began", payload)
			return "", nil
		})
		want := lambdaidem.ErrOutcomeUnknown
		if payload != "100 EUR" {
			want = lambdaidem.ErrKeyReused
		}
		if !errors.Is(err, want) {
			t.Fatalf("payload %s: duplicate = %v; want %v", payload, err, want)
		}
	}

	c := call("k", "100 EUR")
	c.Reconcile = func(ctx context.Context, u lambdaidem.Unknown) (string, bool, error) {
		return "charged (per the provider)", true, nil
	}
	out, err := lambdaidem.Do(context.Background(), f.guard, c, func(ctx context.Context) (string, error) {
		t.Error("the handler ran instead of the reconciler")
		return "", nil
	})
	if err != nil || out != "charged (per the provider)" {
		t.Fatalf("reconciled = %q, %v", out, err)
	}
	// The stalled attempt wakes up: it must not overwrite, and it answers with what is stored.
	close(dead)
	if err := <-stalled; err != nil {
		t.Fatalf("stalled attempt = %v; want the stored outcome replayed", err)
	}
	if rec := f.onlyRecord(t); rec.Status != lambdaidem.StatusCompleted || string(rec.Outcome) != `{"value":"charged (per the provider)"}` {
		t.Fatalf("record = %+v; want the reconciled outcome kept", rec)
	}
}

func TestBeginExternalFailsWhenItCannotMarkTheRecord(t *testing.T) {
	s := memstore.New(func(o *memstore.Options) {
		o.Fault = func(op, key string) error {
			if op == "mark external" {
				return lambdaidem.ErrStoreUnavailable
			}
			return nil
		}
	})
	f := newFixtureWith(t, s)
	started := false
	_, err := lambdaidem.Do(context.Background(), f.guard, call("k", "x"), func(ctx context.Context) (string, error) {
		a, _ := lambdaidem.AttemptFrom(ctx)
		if err := a.BeginExternal(ctx); err != nil {
			return "", err
		}
		started = true
		return "charged", nil
	})
	if !errors.Is(err, lambdaidem.ErrStoreUnavailable) || started {
		t.Fatalf("= %v, effect started %v; want ErrStoreUnavailable before the effect", err, started)
	}
	f.noRecords(t) // nothing began: the claim is released
}
