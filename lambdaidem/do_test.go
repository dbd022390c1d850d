package lambdaidem_test

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/lambdaidem/lambdaidem/lambdaidem"
	"github.com/lambdaidem/lambdaidem/lambdaidem/memstore"
)

func TestFirstRequestCommitsAndDuplicateReplays(t *testing.T) {
	f := newFixture(t)
	runs := 0
	pay := func(ctx context.Context) (string, error) {
		runs++
		return stagePayment(ctx, "p1")
	}
	first, err := lambdaidem.Do(context.Background(), f.guard, call("k1", "100 EUR"), pay)
	if err != nil || first != "paid p1" {
		t.Fatalf("first = %q, %v", first, err)
	}
	again, err := lambdaidem.Do(context.Background(), f.guard, call("k1", "100 EUR"), pay)
	if err != nil || again != first {
		t.Fatalf("duplicate = %q, %v; want the replay %q", again, err, first)
	}
	if runs != 1 {
		t.Fatalf("handler ran %d times; want 1", runs)
	}
	rec := f.onlyRecord(t)
	if rec.Status != lambdaidem.StatusCompleted || rec.Attempts != 1 {
		t.Fatalf("record = %+v; want COMPLETED after 1 attempt", rec)
	}
	if want := f.clock.Now().Add(24 * time.Hour); !rec.ExpiresAt.Equal(want) {
		t.Fatalf("expires at %v; want completion + default 24h horizon = %v", rec.ExpiresAt, want)
	}
	if calls := f.store.Calls(); calls["claim"] != 2 || calls["commit"] != 1 {
		t.Fatalf("store calls = %v; want 2 claims (one refused) and 1 commit", calls)
	}
}

func TestTerminalErrorIsStoredAndReplayed(t *testing.T) {
	cases := []struct {
		name     string
		err      error
		wantType string
	}{
		{"marked with Terminal", lambdaidem.Terminal(errDeclined), "errorString"},
		{"type with a Terminal method", &declinedError{"insufficient funds"}, "declinedError"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			runs := 0
			h := func(ctx context.Context) (string, error) { runs++; return "", tc.err }
			_, err := lambdaidem.Do(context.Background(), f.guard, call("k", "x"), h)
			if err == nil || reflect.TypeOf(err).String() == "*lambdaidem.terminalError" {
				t.Fatalf("first error = %#v; want the handler's own error, unmarked", err)
			}
			_, err = lambdaidem.Do(context.Background(), f.guard, call("k", "x"), h)
			var replayed *lambdaidem.ReplayedError
			if !errors.As(err, &replayed) || replayed.Type != tc.wantType || replayed.Message != tc.err.Error() {
				t.Fatalf("replayed error = %#v; want ReplayedError{%s, %q}", err, tc.wantType, tc.err.Error())
			}
			if runs != 1 {
				t.Fatalf("handler ran %d times; want 1", runs)
			}
		})
	}
}

func TestHandlerErrorReleasesClaimAndPassesThrough(t *testing.T) {
	f := newFixture(t)
	boom := errors.New("downstream timeout")
	_, err := lambdaidem.Do(context.Background(), f.guard, call("k", "x"), func(ctx context.Context) (string, error) {
		return "", boom
	})
	if err != boom {
		t.Fatalf("error = %#v; want the handler's error itself", err)
	}
	f.noRecords(t)
	out, err := lambdaidem.Do(context.Background(), f.guard, call("k", "x"), func(ctx context.Context) (string, error) {
		return "second try", nil
	})
	if err != nil || out != "second try" {
		t.Fatalf("retry = %q, %v; want the retry to run", out, err)
	}
}

func TestPanicReleasesClaimAndPanicsOn(t *testing.T) {
	f := newFixture(t)
	func() {
		defer func() {
			if p := recover(); p != "handler bug" {
				t.Fatalf("recovered %v; want the handler's panic", p)
			}
		}()
		lambdaidem.Do(context.Background(), f.guard, call("k", "x"), func(ctx context.Context) (string, error) {
			panic("handler bug")
		})
	}()
	f.noRecords(t)
}

func TestCancelledContextReleasesClaim(t *testing.T) {
	f := newFixture(t)
	ctx, cancel := context.WithCancel(context.Background())
	_, err := lambdaidem.Do(ctx, f.guard, call("k", "x"), func(ctx context.Context) (string, error) {
		cancel()
		<-ctx.Done()
		return "", ctx.Err()
	})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("error = %v; want context.Canceled", err)
	}
	f.noRecords(t) // the release ran on a context that ignores the cancellation
}

func TestKeyReusedWithDifferentPayloadNeverSeesOutcome(t *testing.T) {
	f := newFixture(t)
	if _, err := lambdaidem.Do(context.Background(), f.guard, call("k", "100 EUR"), func(ctx context.Context) (string, error) {
		return "secret receipt", nil
	}); err != nil {
		t.Fatal(err)
	}
	out, err := lambdaidem.Do(context.Background(), f.guard, call("k", "999 EUR"), func(ctx context.Context) (string, error) {
		t.Fatal("handler ran for a reused key")
		return "", nil
	})
	var rerr *lambdaidem.RecordError
	if !errors.Is(err, lambdaidem.ErrKeyReused) || !errors.As(err, &rerr) || out != "" {
		t.Fatalf("= %q, %v; want ErrKeyReused as a RecordError and no outcome", out, err)
	}
	if strings.Contains(err.Error(), "k") && strings.Contains(err.Error(), "secret") {
		t.Fatalf("error %q reveals the stored outcome", err)
	}
}

func TestKeyIsValidated(t *testing.T) {
	f := newFixture(t)
	cases := []struct {
		key  string
		want error
	}{
		{"", lambdaidem.ErrMissingKey},
		{strings.Repeat("k", 256), lambdaidem.ErrInvalidKey},
		{"\xff\xfe", lambdaidem.ErrInvalidKey},
	}
	for _, tc := range cases {
		_, err := lambdaidem.Do(context.Background(), f.guard, call(tc.key, "x"), func(ctx context.Context) (string, error) {
			t.Fatal("handler ran for a bad key")
			return "", nil
		})
		if !errors.Is(err, tc.want) {
			t.Errorf("key %q: error = %v; want %v", tc.key, err, tc.want)
		}
	}
	if calls := f.store.Calls(); len(calls) != 0 {
		t.Fatalf("store calls for bad keys = %v; want none", calls)
	}
}

func TestOutcomeTooLargeReleasesClaim(t *testing.T) {
	f := newFixture(t, func(o *lambdaidem.Options) { o.MaxOutcomeSize = 64 })
	_, err := lambdaidem.Do(context.Background(), f.guard, call("k", "x"), func(ctx context.Context) (string, error) {
		return strings.Repeat("x", 100), nil
	})
	if !errors.Is(err, lambdaidem.ErrOutcomeTooLarge) {
		t.Fatalf("error = %v; want ErrOutcomeTooLarge", err)
	}
	f.noRecords(t)
}

func TestLeaseRunsToDeadlinePlusMargin(t *testing.T) {
	f := newFixture(t, func(o *lambdaidem.Options) { o.LeaseMargin = 3 * time.Second })
	deadline := time.Now().Add(time.Minute)
	ctx, cancel := context.WithDeadline(context.Background(), deadline)
	defer cancel()
	lambdaidem.Do(ctx, f.guard, call("k", "x"), func(ctx context.Context) (string, error) {
		rec := f.onlyRecord(t)
		if want := deadline.Add(3 * time.Second); !rec.LeaseUntil.Equal(want) {
			t.Errorf("lease until %v; want deadline + margin %v", rec.LeaseUntil, want)
		}
		return "", nil
	})
	g := newFixture(t, func(o *lambdaidem.Options) { o.Lease = time.Minute })
	lambdaidem.Do(context.Background(), g.guard, call("k", "x"), func(ctx context.Context) (string, error) {
		if rec := g.onlyRecord(t); !rec.LeaseUntil.Equal(g.clock.Now().Add(time.Minute)) {
			t.Errorf("lease without a deadline until %v; want now + Lease", rec.LeaseUntil)
		}
		return "", nil
	})
}

func TestStagingOutsideAnAttemptFailsLoudly(t *testing.T) {
	if err := memstore.Stage(context.Background(), memstore.Put{Table: "t", Key: "k"}); !errors.Is(err, lambdaidem.ErrNoAttempt) {
		t.Fatalf("staging outside a wrapped invocation = %v; want ErrNoAttempt", err)
	}
	f := newFixture(t)
	var late context.Context
	lambdaidem.Do(context.Background(), f.guard, call("k", "x"), func(ctx context.Context) (string, error) {
		late = ctx
		return "done", nil
	})
	if err := memstore.Stage(late, memstore.Put{Table: "t", Key: "late"}); !errors.Is(err, lambdaidem.ErrNoAttempt) {
		t.Fatalf("staging after the attempt finished = %v; want ErrNoAttempt", err)
	}
}

func TestAttemptExposesStableOperationKey(t *testing.T) {
	f := newFixture(t)
	var keys []string
	var numbers []int
	h := func(ctx context.Context) (string, error) {
		a, ok := lambdaidem.AttemptFrom(ctx)
		if !ok {
			t.Fatal("no attempt in the handler's context")
		}
		keys = append(keys, a.OperationKey())
		numbers = append(numbers, a.Number())
		return "", errors.New("transient")
	}
	lambdaidem.Do(context.Background(), f.guard, call("k", "x"), h)
	lambdaidem.Do(context.Background(), f.guard, call("k", "x"), h)
	if keys[0] == "" || keys[0] != keys[1] || strings.Contains(keys[0], "k") && len(keys[0]) < 10 {
		t.Fatalf("operation keys %v; want one stable, opaque key", keys)
	}
	other := newFixture(t)
	lambdaidem.Do(context.Background(), other.guard, call("other", "x"), h)
	if keys[2] == keys[0] {
		t.Fatal("two operations share a downstream key")
	}
}

func TestStoreUnavailable(t *testing.T) {
	down := func(o *memstore.Options) {
		o.Fault = func(op, key string) error { return lambdaidem.ErrStoreUnavailable }
	}
	t.Run("fails closed by default", func(t *testing.T) {
		f := newFixtureWith(t, memstore.New(down))
		_, err := lambdaidem.Do(context.Background(), f.guard, call("k", "x"), func(ctx context.Context) (string, error) {
			t.Fatal("handler ran while the store was down")
			return "", nil
		})
		var serr *lambdaidem.StoreError
		if !errors.Is(err, lambdaidem.ErrStoreUnavailable) || !errors.As(err, &serr) || serr.Op != "claim" {
			t.Fatalf("error = %v; want a claim StoreError matching ErrStoreUnavailable", err)
		}
	})
	t.Run("fails open when configured", func(t *testing.T) {
		f := newFixtureWith(t, memstore.New(down), func(o *lambdaidem.Options) { o.FailOpen = true })
		out, err := lambdaidem.Do(context.Background(), f.guard, call("k", "x"), func(ctx context.Context) (string, error) {
			return "ran unguarded", nil
		})
		if err != nil || out != "ran unguarded" {
			t.Fatalf("= %q, %v; want the handler to run", out, err)
		}
	})
	t.Run("fails open in optimistic mode too", func(t *testing.T) {
		f := newFixtureWith(t, memstore.New(down), func(o *lambdaidem.Options) {
			o.FailOpen = true
			o.Mode = lambdaidem.Optimistic
		})
		out, err := lambdaidem.Do(context.Background(), f.guard, call("k", "x"), func(ctx context.Context) (string, error) {
			return "ran unguarded", nil
		})
		if err != nil || out != "ran unguarded" {
			t.Fatalf("= %q, %v; want the handler's answer", out, err)
		}
	})
	t.Run("fail open refuses staged writes it cannot commit", func(t *testing.T) {
		for _, mode := range []lambdaidem.Mode{lambdaidem.ClaimFirst, lambdaidem.Optimistic} {
			f := newFixtureWith(t, memstore.New(down), func(o *lambdaidem.Options) {
				o.FailOpen = true
				o.Mode = mode
			})
			_, err := lambdaidem.Do(context.Background(), f.guard, call("k", "x"), func(ctx context.Context) (string, error) {
				return stagePayment(ctx, "p")
			})
			if !errors.Is(err, lambdaidem.ErrStoreUnavailable) {
				t.Fatalf("%v: error = %v; want ErrStoreUnavailable, not a silently dropped write", mode, err)
			}
		}
	})
}

func TestCommitFailureReleasesClaim(t *testing.T) {
	s := memstore.New(func(o *memstore.Options) {
		o.Fault = func(op, key string) error {
			if op == "commit" {
				return lambdaidem.ErrStoreUnavailable
			}
			return nil
		}
	})
	f := newFixtureWith(t, s)
	_, err := lambdaidem.Do(context.Background(), f.guard, call("k", "x"), func(ctx context.Context) (string, error) {
		return stagePayment(ctx, "p")
	})
	var serr *lambdaidem.StoreError
	if !errors.As(err, &serr) || serr.Op != "commit" || !errors.Is(err, lambdaidem.ErrStoreUnavailable) {
		t.Fatalf("error = %v; want a commit StoreError", err)
	}
	f.noRecords(t)
	if _, ok := s.Item("payments", "p"); ok {
		t.Fatal("business item written by a failed commit")
	}
}

func TestBusinessConditionFailureIsTypedAndReleases(t *testing.T) {
	f := newFixture(t)
	_, err := lambdaidem.Do(context.Background(), f.guard, call("k", "x"), func(ctx context.Context) (string, error) {
		if err := memstore.Stage(ctx, memstore.Put{Table: "payments", Key: "p"}); err != nil {
			return "", err
		}
		return "charged", memstore.Stage(ctx, memstore.Check{Table: "accounts", Key: "missing"})
	})
	var cerr *memstore.ConditionFailedError
	if !errors.Is(err, lambdaidem.ErrEffectRejected) || !errors.As(err, &cerr) || cerr.Key != "missing" || cerr.Index != 1 {
		t.Fatalf("error = %v; want a ConditionFailedError naming staged write 1", err)
	}
	f.noRecords(t)
	if _, ok := f.store.Item("payments", "p"); ok {
		t.Fatal("the other staged write of the refused commit was written")
	}
}

func TestFailOpenDoesNotRunAnInvocationWhoseContextEnded(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	s := memstore.New(func(o *memstore.Options) {
		o.Fault = func(op, key string) error {
			cancel() // the invocation's deadline passes while the claim is out
			return lambdaidem.ErrStoreUnavailable
		}
	})
	f := newFixtureWith(t, s, func(o *lambdaidem.Options) { o.FailOpen = true })
	_, err := lambdaidem.Do(ctx, f.guard, call("k", "x"), func(ctx context.Context) (string, error) {
		t.Error("the handler ran on an ended context")
		return "", nil
	})
	if !errors.Is(err, lambdaidem.ErrStoreUnavailable) {
		t.Fatalf("error = %v; want the claim's StoreError", err)
	}
}
