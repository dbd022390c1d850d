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

// A retry horizon shorter than the lease must not let the in-progress record
// expire while its lease still runs: a duplicate would claim the "absent"
// record and run the handler a second time, concurrently.
func TestInProgressOutlivesShortHorizon(t *testing.T) {
	f := newFixture(t, func(o *lambdaidem.Options) { o.RetryHorizon = time.Minute }) // lease: 15m, no deadline
	started, release := make(chan struct{}), make(chan struct{})
	done := make(chan error, 1)
	go func() {
		_, err := lambdaidem.Do(context.Background(), f.guard, call("k", "x"), func(ctx context.Context) (string, error) {
			close(started)
			<-release
			return "first", nil
		})
		done <- err
	}()
	<-started
	f.clock.Advance(2 * time.Minute) // past the horizon, well within the lease
	_, err := lambdaidem.Do(context.Background(), f.guard, call("k", "x"), func(ctx context.Context) (string, error) {
		return "second", nil
	})
	close(release)
	if !errors.Is(err, lambdaidem.ErrInProgress) {
		t.Fatalf("duplicate during a live lease = %v; want ErrInProgress (the handler ran twice)", err)
	}
	if err := <-done; err != nil {
		t.Fatalf("first attempt = %v", err)
	}
}

// Two duplicates reconcile one UNKNOWN record at once. Both commit fenced on
// the failed attempt's token; the loser must answer with the outcome that was
// stored, not with its own reconcile result, which the store never kept.
func TestConcurrentReconcilersAgreeOnTheStoredOutcome(t *testing.T) {
	f := newFixture(t)
	base := call("k", "x")
	lambdaidem.Do(context.Background(), f.guard, base, chargeThenFail)

	var arrived sync.WaitGroup
	arrived.Add(2)
	var n atomic.Int32
	c := base
	c.Reconcile = func(ctx context.Context, u lambdaidem.Unknown) (string, bool, error) {
		out := fmt.Sprintf("reconciled by %d", n.Add(1))
		arrived.Done()
		arrived.Wait() // both have read the UNKNOWN record before either commits
		return out, true, nil
	}
	outs := make([]string, 2)
	errs := make([]error, 2)
	var wg sync.WaitGroup
	for i := range outs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			outs[i], errs[i] = lambdaidem.Do(context.Background(), f.guard, c, func(ctx context.Context) (string, error) {
				t.Error("the handler ran again")
				return "", nil
			})
		}()
	}
	wg.Wait()
	stored, err := lambdaidem.Do(context.Background(), f.guard, base, func(ctx context.Context) (string, error) {
		t.Error("the handler ran again")
		return "", nil
	})
	if err != nil {
		t.Fatalf("replay = %v", err)
	}
	for i := range outs {
		if errs[i] != nil || outs[i] != stored {
			t.Errorf("reconciler %d = %q, %v; want the stored outcome %q", i, outs[i], errs[i], stored)
		}
	}
}
