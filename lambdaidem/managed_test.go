package lambdaidem_test

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lambdaidem/lambdaidem/lambdaidem"
	"github.com/lambdaidem/lambdaidem/lambdaidem/memstore"
)

// TestOneGuardServes64ConcurrentInvocations is one Lambda Managed Instances
// process (AWS_LAMBDA_MAX_CONCURRENCY=64): one Guard, with its local cache,
// its waiter bound and lease renewal, serves 64 invocations at once, half
// on keys of their own and half as duplicates of four shared keys, some
// running past their lease (renewed, twice over) and some quick. Run under
// -race. Every key gets exactly one effect, duplicates get the one outcome
// or ErrInProgress, only the long invocations renew, every renewal
// goroutine ends with its attempt, and a second wave is answered from the
// cache with no store call.
//
// The leases run on a manual clock, moved only while every renewer waits
// on its timer: the goroutines run at whatever pace the scheduler gives
// them, and a slow one cannot lose a lease that a real one would keep.
func TestOneGuardServes64ConcurrentInvocations(t *testing.T) {
	s := memstore.New()
	const lease = 300 * time.Millisecond // renewed every 200ms of the clock
	f := newFixtureWith(t, s, func(o *lambdaidem.Options) {
		o.Renew = lambdaidem.RenewAlways
		o.Lease = lease
		o.InFlight = lambdaidem.Wait
		o.WaitTimeout = 3 * time.Second // real time
		o.PollInterval = 20 * time.Millisecond
		o.MaxWaiters = 4
		o.CacheSize = 64
	})
	g := f.guard
	const n, shared = 64, 4
	keyOf := func(i int) string {
		if i%2 == 0 {
			return fmt.Sprintf("shared-%d", i%(2*shared)/2)
		}
		return fmt.Sprintf("own-%d", i)
	}
	// Invocations on a shared key, and every fourth own key, outlive their
	// lease and are renewed; the others are quick.
	slow := func(i int) bool { return i%2 == 0 || i%8 == 1 }
	const handlers, long = n/2 + shared, shared + n/8 // one run per key; the long ones
	var runs [n]atomic.Int32
	var entered, quickDone atomic.Int32
	quick, release := make(chan struct{}), make(chan struct{})
	t.Cleanup(func() { // a failed wait must not strand the handlers
		for _, c := range []chan struct{}{quick, release} {
			select {
			case <-c:
			default:
				close(c)
			}
		}
	})
	handler := func(i int) func(context.Context) (string, error) {
		return func(ctx context.Context) (string, error) {
			runs[i].Add(1)
			entered.Add(1)
			if slow(i) {
				<-release // ignores ctx, as a handler past its deadline may
			} else {
				<-quick
			}
			return stagePayment(ctx, fmt.Sprintf("%s/by-%d", keyOf(i), i))
		}
	}
	base := runtime.NumGoroutine()
	wave := func(h func(int) func(context.Context) (string, error)) ([]string, []error) {
		outs, errs := make([]string, n), make([]error, n)
		start := make(chan struct{})
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() {
				<-start
				outs[i], errs[i] = lambdaidem.Do(context.Background(), g, call(keyOf(i), "payload of "+keyOf(i)), h(i))
				if !slow(i) {
					quickDone.Add(1)
				}
			})
		}
		close(start)
		wg.Wait()
		return outs, errs
	}
	type result struct {
		outs []string
		errs []error
	}
	first := make(chan result, 1)
	go func() {
		outs, errs := wave(handler)
		first <- result{outs, errs}
	}()
	// Every handler runs, each with its renewer waiting on its timer; the
	// quick ones then end, well inside their lease.
	waitFor(t, "every handler to run, its renewer waiting", func() bool {
		return entered.Load() == handlers && f.clock.Timers() == handlers
	})
	close(quick)
	waitFor(t, "the quick invocations to end", func() bool { return quickDone.Load() == handlers-long })
	// Two leases and more on the clock: three renewals of each long
	// invocation. The first step also fires the quick attempts' timers,
	// left behind when their renewers stopped; after it only the long
	// invocations' renewers wait.
	for step := 1; step <= 3; step++ {
		f.clock.Advance(lease * 2 / 3)
		waitFor(t, fmt.Sprintf("renewal round %d, each renewer waiting again", step), func() bool {
			return f.calls("renew") >= step*long && f.clock.Timers() == long
		})
	}
	close(release)
	r := <-first
	outs, errs := r.outs, r.errs

	byKey := map[string]string{}
	for i := range n {
		k := keyOf(i)
		switch {
		case errs[i] == nil:
			if prev, ok := byKey[k]; ok && prev != outs[i] {
				t.Fatalf("key %s answered %q and %q", k, prev, outs[i])
			}
			byKey[k] = outs[i]
		case errors.Is(errs[i], lambdaidem.ErrInProgress) && i%2 == 0:
		default:
			t.Fatalf("invocation %d (%s): %v", i, k, errs[i])
		}
	}
	items := s.Items("payments")
	perKey := map[string]int{}
	for id := range items {
		for i := range n {
			if id == fmt.Sprintf("%s/by-%d", keyOf(i), i) {
				perKey[keyOf(i)]++
			}
		}
	}
	for i := range n {
		if k := keyOf(i); perKey[k] != 1 {
			t.Fatalf("key %s has %d payments; want exactly 1 (%v)", k, perKey[k], items)
		}
	}
	if len(items) != n/2+shared {
		t.Fatalf("%d payments; want %d", len(items), n/2+shared)
	}
	calls := s.Calls()
	if calls["renew"] != 3*long {
		t.Fatalf("calls = %v; want %d renewals: three by each of the %d long invocations, none by a quick one", calls, 3*long, long)
	}
	for i := range n {
		if runs[i].Load() > 1 {
			t.Fatalf("invocation %d ran its handler %d times", i, runs[i].Load())
		}
	}
	if len(byKey) != n/2+shared {
		t.Fatalf("%d keys answered; want all %d", len(byKey), n/2+shared)
	}
	t.Logf("first wave: %d answered, store calls %v", len(byKey), calls)
	// Every attempt's renewal goroutine has ended with it.
	waitFor(t, "the goroutines to return to their number before the wave", func() bool { return runtime.NumGoroutine() <= base })

	// A second wave of duplicates of every committed key, all at once: the
	// cache answers each, with no store call and no handler run.
	outs2, errs2 := wave(func(i int) func(context.Context) (string, error) {
		return func(context.Context) (string, error) {
			if _, ok := byKey[keyOf(i)]; ok {
				t.Errorf("invocation %d ran again for a completed key", i)
			}
			return stagePayment(context.Background(), "never")
		}
	})
	for i := range n {
		if want, ok := byKey[keyOf(i)]; ok && (errs2[i] != nil || outs2[i] != want) {
			t.Fatalf("second wave, invocation %d: %q, %v; want %q", i, outs2[i], errs2[i], want)
		}
	}
	if after := s.Calls(); fmt.Sprint(after) != fmt.Sprint(calls) {
		t.Fatalf("the cached second wave called the store: %v, after %v", after, calls)
	}
}
