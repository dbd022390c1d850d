package lambdaidem_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lambdaidem/lambdaidem/lambdaidem"
)

// contend runs n synchronized calls of one operation and returns their results.
func contend(t *testing.T, f *fixture, n int, h func(context.Context) (string, error)) (outs []string, errs []error) {
	t.Helper()
	outs, errs = make([]string, n), make([]error, n)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range n {
		wg.Go(func() {
			<-start
			outs[i], errs[i] = lambdaidem.Do(context.Background(), f.guard, call("same-key", "same payload"), h)
		})
	}
	close(start)
	wg.Wait()
	return outs, errs
}

func TestConcurrentDuplicates(t *testing.T) {
	cases := []struct {
		mode      lambdaidem.Mode
		cacheSize int // a local cache shared by the contenders, as in one Managed Instance process
	}{
		{lambdaidem.ClaimFirst, 0}, {lambdaidem.Optimistic, 0},
		{lambdaidem.ClaimFirst, 8}, {lambdaidem.Optimistic, 8},
	}
	for _, tc := range cases {
		mode := tc.mode
		t.Run(fmt.Sprintf("%v/cache %d", mode, tc.cacheSize), func(t *testing.T) {
			f := newFixture(t, func(o *lambdaidem.Options) { o.Mode = mode; o.CacheSize = tc.cacheSize })
			var runs, seq atomic.Int64
			outs, errs := contend(t, f, 50, func(ctx context.Context) (string, error) {
				runs.Add(1)
				time.Sleep(time.Millisecond) // let the contenders overlap
				// Each run stages its own item: only the committed one may exist.
				return stagePayment(ctx, "pay-"+string(rune('a'+seq.Add(1)%26))+time.Now().String())
			})
			if items := f.store.Items("payments"); len(items) != 1 {
				t.Fatalf("%d business items written; want exactly 1", len(items))
			}
			var winner string
			for i := range outs {
				switch {
				case errs[i] == nil && winner == "":
					winner = outs[i]
				case errs[i] == nil && outs[i] != winner:
					t.Fatalf("contender %d got %q; another got %q", i, outs[i], winner)
				case errs[i] != nil && !errors.Is(errs[i], lambdaidem.ErrInProgress):
					t.Fatalf("contender %d: %v; want the outcome or ErrInProgress", i, errs[i])
				}
			}
			if mode == lambdaidem.ClaimFirst && runs.Load() != 1 {
				t.Fatalf("claim-first ran the handler %d times; want 1", runs.Load())
			}
			if calls := f.store.Calls(); calls["commit"] != 1 && mode == lambdaidem.ClaimFirst {
				t.Fatalf("commits = %d; want 1", calls["commit"])
			}
			if tc.cacheSize == 0 {
				return
			}
			// A second wave of duplicates, all at once: the cache answers every one.
			before := f.store.Calls()
			outs, errs = contend(t, f, 50, func(ctx context.Context) (string, error) {
				t.Error("the handler ran for a cached duplicate")
				return "", nil
			})
			for i := range outs {
				if errs[i] != nil || outs[i] != winner {
					t.Fatalf("cached duplicate %d = %q, %v; want %q", i, outs[i], errs[i], winner)
				}
			}
			if after := f.store.Calls(); after["claim"] != before["claim"] || after["commit"] != before["commit"] {
				t.Fatalf("store calls %v → %v; want none for cached duplicates", before, after)
			}
		})
	}
}

func TestInFlightDuplicate(t *testing.T) {
	for _, tc := range []struct {
		name     string
		inFlight lambdaidem.InFlight
	}{{"rejects", lambdaidem.Reject}, {"waits and replays", lambdaidem.Wait}} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, func(o *lambdaidem.Options) {
				o.InFlight = tc.inFlight
				o.Now = time.Now // real time: the waiter sleeps
			})
			claimed, release := make(chan struct{}), make(chan struct{})
			done := make(chan error)
			go func() {
				_, err := lambdaidem.Do(context.Background(), f.guard, call("k", "x"), func(ctx context.Context) (string, error) {
					close(claimed)
					<-release
					return "first", nil
				})
				done <- err
			}()
			<-claimed
			if tc.inFlight == lambdaidem.Wait {
				time.AfterFunc(20*time.Millisecond, func() { close(release) })
			}
			out, err := lambdaidem.Do(context.Background(), f.guard, call("k", "x"), func(ctx context.Context) (string, error) {
				t.Error("duplicate ran the handler while the first was in flight")
				return "", nil
			})
			if tc.inFlight == lambdaidem.Reject {
				var rerr *lambdaidem.RecordError
				if !errors.Is(err, lambdaidem.ErrInProgress) || !errors.As(err, &rerr) || rerr.LeaseUntil.IsZero() || rerr.RetryAfter(time.Now()) < time.Second {
					t.Fatalf("= %q, %v; want ErrInProgress carrying the lease", out, err)
				}
				close(release)
			} else if err != nil || out != "first" {
				t.Fatalf("= %q, %v; want the first outcome after waiting", out, err)
			}
			if err := <-done; err != nil {
				t.Fatal(err)
			}
		})
	}
}

func TestWaitGivesUpAfterWaitTimeout(t *testing.T) {
	f := newFixture(t, func(o *lambdaidem.Options) {
		o.InFlight = lambdaidem.Wait
		o.WaitTimeout = 30 * time.Millisecond
		o.Now = time.Now
	})
	claimed, release := make(chan struct{}), make(chan struct{})
	defer close(release)
	go lambdaidem.Do(context.Background(), f.guard, call("k", "x"), func(ctx context.Context) (string, error) {
		close(claimed)
		<-release
		return "first", nil
	})
	<-claimed
	start := time.Now()
	_, err := lambdaidem.Do(context.Background(), f.guard, call("k", "x"), func(ctx context.Context) (string, error) { return "", nil })
	if !errors.Is(err, lambdaidem.ErrInProgress) || time.Since(start) > 5*time.Second {
		t.Fatalf("= %v after %v; want ErrInProgress once WaitTimeout passed", err, time.Since(start))
	}
}

func TestLeaseTakeover(t *testing.T) {
	f := newFixture(t, func(o *lambdaidem.Options) { o.Lease = time.Minute })
	aClaimed, aResume := make(chan struct{}), make(chan struct{})
	aDone := make(chan error)
	var aOut string
	go func() {
		var err error
		aOut, err = lambdaidem.Do(context.Background(), f.guard, call("k", "x"), func(ctx context.Context) (string, error) {
			close(aClaimed)
			<-aResume // A stalls past its lease
			return stagePayment(ctx, "from-A")
		})
		aDone <- err
	}()
	<-aClaimed
	f.clock.Advance(2 * time.Minute)
	bOut, err := lambdaidem.Do(context.Background(), f.guard, call("k", "x"), func(ctx context.Context) (string, error) {
		if a, _ := lambdaidem.AttemptFrom(ctx); a.Number() != 2 {
			t.Errorf("takeover attempt number = %d; want 2", a.Number())
		}
		return stagePayment(ctx, "from-B")
	})
	if err != nil || bOut != "paid from-B" {
		t.Fatalf("B = %q, %v; want B to take over and commit", bOut, err)
	}
	close(aResume)
	if err := <-aDone; err != nil || aOut != bOut {
		t.Fatalf("late A = %q, %v; want B's outcome replayed", aOut, err)
	}
	if _, ok := f.store.Item("payments", "from-A"); ok {
		t.Fatal("the fenced-out attempt's business item was written")
	}
	if rec := f.onlyRecord(t); rec.Attempts != 2 || rec.Token != "token-2" {
		t.Fatalf("record = %+v; want B's commit after 2 attempts", rec)
	}
}

// stalled starts an attempt that claims the key, waits for resume, then
// stages item; it returns once the claim is held, and done reports the result.
func stalled(f *fixture, item string) (resume chan<- struct{}, done <-chan error) {
	claimed, res, d := make(chan struct{}), make(chan struct{}), make(chan error, 1)
	go func() {
		_, err := lambdaidem.Do(context.Background(), f.guard, call("k", "x"), func(ctx context.Context) (string, error) {
			close(claimed)
			<-res
			return stagePayment(ctx, item)
		})
		d <- err
	}()
	<-claimed
	return res, d
}

func TestLeaseLostWhileNewOwnerRuns(t *testing.T) {
	f := newFixture(t, func(o *lambdaidem.Options) { o.Lease = time.Minute })
	aResume, aDone := stalled(f, "from-A")
	f.clock.Advance(2 * time.Minute)
	bResume, bDone := stalled(f, "from-B")
	close(aResume)
	if err := <-aDone; !errors.Is(err, lambdaidem.ErrLeaseLost) {
		t.Fatalf("late A = %v; want ErrLeaseLost", err)
	}
	close(bResume)
	if err := <-bDone; err != nil {
		t.Fatal(err)
	}
	if items := f.store.Items("payments"); len(items) != 1 || items["from-B"] == nil {
		t.Fatalf("items = %v; want only B's", items)
	}
}

func TestCrashedAttemptIsTakenOverAfterItsLease(t *testing.T) {
	f := newFixture(t, func(o *lambdaidem.Options) {
		o.InFlight = lambdaidem.Wait
		o.Lease = time.Minute
	})
	claimed := make(chan struct{})
	stuck := make(chan struct{})
	defer close(stuck)
	go lambdaidem.Do(context.Background(), f.guard, call("k", "x"), func(ctx context.Context) (string, error) {
		close(claimed)
		<-stuck // a crashed attempt that never finishes
		return "", nil
	})
	<-claimed
	f.clock.Advance(2 * time.Minute)
	out, err := lambdaidem.Do(context.Background(), f.guard, call("k", "x"), func(ctx context.Context) (string, error) {
		return "recovered", nil
	})
	if err != nil || out != "recovered" {
		t.Fatalf("= %q, %v; want the waiter to take over the lapsed lease", out, err)
	}
}

func TestWaitEndsBeforeTheInvocationDeadline(t *testing.T) {
	f := newFixture(t, func(o *lambdaidem.Options) {
		o.InFlight = lambdaidem.Wait
		o.WaitTimeout = time.Minute
	}) // the manual clock stands still: the bound must be real time
	claimed, release := make(chan struct{}), make(chan struct{})
	defer close(release)
	go lambdaidem.Do(context.Background(), f.guard, call("k", "x"), func(ctx context.Context) (string, error) {
		close(claimed)
		<-release
		return "first", nil
	})
	<-claimed
	ctx, cancel := context.WithTimeout(context.Background(), 1300*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := lambdaidem.Do(ctx, f.guard, call("k", "x"), func(ctx context.Context) (string, error) { return "", nil })
	if !errors.Is(err, lambdaidem.ErrInProgress) || ctx.Err() != nil {
		t.Fatalf("= %v after %v (context: %v); want ErrInProgress before the deadline", err, time.Since(start), ctx.Err())
	}
}
