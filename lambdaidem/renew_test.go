package lambdaidem_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lambdaidem/lambdaidem/lambdaidem"
	"github.com/lambdaidem/lambdaidem/lambdaidem/memstore"
)

// On Lambda Managed Instances an invocation that times out keeps running:
// "Lambda Managed Instances don't enforce timeouts, and your code continues
// to run" (AWS Lambda developer guide, Understanding the Lambda Managed
// Instances execution environment, Invocation timeouts:
// https://docs.aws.amazon.com/lambda/latest/dg/lambda-managed-instances-execution-environment.html).
// These tests give the Guard a lease of 10s of its manual clock (standing for
// the invocation's deadline plus LeaseMargin) and run handlers that outlive
// it, ignoring their context, as such code does.

const testLease = 10 * time.Second

// renewing is a fixture whose Guard renews leases (as on Managed Instances).
func renewing(t *testing.T, s *memstore.Store, optFns ...func(*lambdaidem.Options)) *fixture {
	t.Helper()
	base := func(o *lambdaidem.Options) {
		o.Renew = lambdaidem.RenewAlways
		o.Lease = testLease
	}
	return newFixtureWith(t, s, append([]func(*lambdaidem.Options){base}, optFns...)...)
}

// waitFor polls cond, in real time, for at most 5s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for end := time.Now().Add(5 * time.Second); !cond(); {
		if time.Now().After(end) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

func (f *fixture) calls(op string) int { return f.store.Calls()[op] }

// tick moves f's clock by d once the renewer of the fixture's only running
// attempt waits on its timer. A renewer that has read the clock but not yet
// set its timer would set it from the moved clock, later than it meant (a
// delay made by the scheduler, which no real clock makes), and could lose
// its lease for it. Without a renewer (RenewNever), or once no record holds
// a lease past the clock's now (a renewer then only gives up, with no
// timer), tick does not wait. Single-attempt tests only: a renewer that
// stopped may leave its timer behind.
func (f *fixture) tick(t *testing.T, d time.Duration) {
	t.Helper()
	if f.guard.Options().Renew == lambdaidem.RenewAlways {
		waitFor(t, "the renewer to wait on its timer", func() bool { return f.clock.Timers() > 0 || !f.leaseHeld() })
	}
	f.clock.Advance(d)
}

// leaseHeld reports whether an in-progress record's lease ends after the
// clock's now.
func (f *fixture) leaseHeld() bool {
	now := f.clock.Now()
	for _, r := range f.store.Records() {
		if r.Status == lambdaidem.StatusInProgress && r.LeaseUntil.After(now) {
			return true
		}
	}
	return false
}

// provider is a payment provider whose charge call ignores the caller's
// context and returns only when the test releases it. Its reconciliation
// answer is the naive one: "not charged" while a charge is still in
// flight, exactly what a lease cannot make safe.
type provider struct {
	mu         sync.Mutex
	charged    map[string]int // completed charges per operation key
	calls      int
	reconciles int
	entered    chan struct{} // one value per charge call that started
	release    chan struct{} // closed to let charges complete
}

func newProvider() *provider {
	return &provider{charged: map[string]int{}, entered: make(chan struct{}, 16), release: make(chan struct{})}
}

func (p *provider) charge(opKey string) {
	p.mu.Lock()
	p.calls++
	p.mu.Unlock()
	p.entered <- struct{}{}
	<-p.release
	p.mu.Lock()
	p.charged[opKey]++
	p.mu.Unlock()
}

func (p *provider) reconcile(_ context.Context, u lambdaidem.Unknown) (string, bool, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.reconciles++
	if p.charged[u.OperationKey] > 0 {
		return "paid pay-1", true, nil
	}
	return "", false, nil
}

func (p *provider) stats() (calls, reconciles int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.calls, p.reconciles
}

// payOnce is the handler: mark the record, charge (ignoring ctx), stage
// the payment.
func (p *provider) payOnce(ctx context.Context) (string, error) {
	a, _ := lambdaidem.AttemptFrom(ctx)
	if err := a.BeginExternal(ctx); err != nil {
		return "", err
	}
	p.charge(a.OperationKey())
	return stagePayment(ctx, "pay-1")
}

// duplicates runs n synchronized duplicates of the payment and returns
// their errors.
func duplicates(f *fixture, n int, c lambdaidem.Call[string], h func(context.Context) (string, error)) []error {
	errs := make([]error, n)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			<-start
			_, errs[i] = lambdaidem.Do(context.Background(), f.guard, c, h)
		})
	}
	close(start)
	wg.Wait()
	return errs
}

// TestManagedInstancesOwnerPastItsDeadlineKeepsItsClaim is the issue's
// scenario: a handler that ignores its context runs past its deadline plus
// margin while its charge call is in flight; duplicates arrive after the
// original lease, with a reconcile function that would answer "not done".
// The owner's renewals keep the record: every duplicate gets ErrInProgress
// and Reconcile is never asked, until the owner commits; then they replay.
// One charge, one payment.
func TestManagedInstancesOwnerPastItsDeadlineKeepsItsClaim(t *testing.T) {
	f := renewing(t, memstore.New())
	p := newProvider()
	c := call("k", "pay 10 EUR")
	c.Reconcile = p.reconcile

	type result struct {
		out string
		err error
	}
	owner := make(chan result, 1)
	go func() {
		out, err := lambdaidem.Do(context.Background(), f.guard, c, p.payOnce)
		owner <- result{out, err}
	}()
	<-p.entered // the charge is in flight

	// renewed waits for the renewals due by now; the count is checked
	// exactly last.
	renewed := func(renewals int) {
		waitFor(t, fmt.Sprintf("renewal %d", renewals), func() bool { return f.calls("renew") >= renewals })
	}
	f.tick(t, 7*time.Second) // 2/3 of the lease: the first renewal
	renewed(1)
	for _, step := range []struct {
		by       time.Duration
		renewals int
	}{{4 * time.Second, 1}, {4 * time.Second, 2}, {7 * time.Second, 3}} {
		// Past the original lease (10s), then past each renewal's due time
		// (every 6.7s): the owner is still charging.
		f.tick(t, step.by)
		renewed(step.renewals)
		errs := duplicates(f, 8, c, func(context.Context) (string, error) {
			t.Error("a duplicate ran the handler while the owner was running")
			return "", nil
		})
		for i, err := range errs {
			if !errors.Is(err, lambdaidem.ErrInProgress) {
				t.Fatalf("at +%v, duplicate %d: %v; want ErrInProgress", f.clock.Now().Sub(newClock().Now()), i, err)
			}
		}
	}
	if calls, reconciles := p.stats(); calls != 1 || reconciles != 0 {
		t.Fatalf("provider saw %d charge calls and %d reconciliations; want 1 and 0", calls, reconciles)
	}
	if n := f.calls("renew"); n != 3 {
		t.Fatalf("renewals by +22s = %d; want 3 (at 7s, 13.7s and 20.3s)", n)
	}

	close(p.release) // the charge completes; the owner commits
	got := <-owner
	if got.err != nil || got.out != "paid pay-1" {
		t.Fatalf("owner = %q, %v; want its outcome", got.out, got.err)
	}
	renewals := f.calls("renew")
	f.clock.Advance(time.Hour) // a stopped renewer makes no more calls
	out, err := lambdaidem.Do(context.Background(), f.guard, c, p.payOnce)
	if err != nil || out != "paid pay-1" {
		t.Fatalf("duplicate after the commit = %q, %v; want the outcome replayed", out, err)
	}
	if calls, reconciles := p.stats(); calls != 1 || reconciles != 0 {
		t.Fatalf("provider saw %d charge calls and %d reconciliations; want 1 and 0", calls, reconciles)
	}
	if n := len(f.store.Items("payments")); n != 1 {
		t.Fatalf("%d payments written; want 1", n)
	}
	if n := f.calls("renew"); n != renewals {
		t.Fatalf("renewals went on after the attempt ended: %d, then %d", renewals, n)
	}
}

// TestReconcileWaitsForAnOwnerThatRenewed: the owner's renewals are refused
// by an unavailable store, so its lease lapses while it still runs (its
// charge is in flight). A duplicate must not reconcile a record whose owner
// renewed less than MaxRunTime ago; after that the owner counts as hung.
func TestReconcileWaitsForAnOwnerThatRenewed(t *testing.T) {
	var outage sync.Mutex
	down := false
	s := memstore.New(func(o *memstore.Options) {
		o.Fault = func(op, _ string) error {
			outage.Lock()
			defer outage.Unlock()
			if down && op == "renew" {
				return lambdaidem.ErrStoreUnavailable
			}
			return nil
		}
	})
	f := renewing(t, s, func(o *lambdaidem.Options) { o.MaxRunTime = time.Hour })
	p := newProvider()
	c := call("k", "pay 10 EUR")
	c.Reconcile = p.reconcile
	ownerErr := make(chan error, 1)
	go func() {
		_, err := lambdaidem.Do(context.Background(), f.guard, c, p.payOnce)
		ownerErr <- err
	}()
	<-p.entered
	f.tick(t, 7*time.Second)
	// Renewed on record, not only called: the store counts a call before
	// it decides it.
	waitFor(t, "the first renewal", func() bool { return !f.onlyRecord(t).RenewedAt.IsZero() })
	outage.Lock()
	down = true
	outage.Unlock()
	renewedAt := f.clock.Now()
	for f.clock.Now().Before(renewedAt.Add(testLease + time.Second)) { // the renewed lease runs out, renewals failing
		f.tick(t, time.Second)
	}
	if rec := f.onlyRecord(t); !rec.LeaseUntil.Before(f.clock.Now()) || !rec.External {
		t.Fatalf("record = %+v; want a lapsed lease with the external mark", rec)
	}

	var reruns atomic.Int32
	for i, err := range duplicates(f, 4, c, func(context.Context) (string, error) { reruns.Add(1); return "rerun", nil }) {
		if !errors.Is(err, lambdaidem.ErrInProgress) {
			t.Fatalf("duplicate %d with the owner's renewal %v old: %v; want ErrInProgress", i, f.clock.Now().Sub(renewedAt), err)
		}
	}
	if _, reconciles := p.stats(); reconciles != 0 || reruns.Load() != 0 {
		t.Fatalf("Reconcile was called %d times, and the operation run again %d times, while the owner may still run", reconciles, reruns.Load())
	}

	f.clock.Advance(time.Hour) // MaxRunTime after the last renewal: the owner counts as hung
	_, err := lambdaidem.Do(context.Background(), f.guard, c, func(context.Context) (string, error) { return "retried", nil })
	if err != nil {
		t.Fatalf("duplicate after MaxRunTime: %v; want the reconciled retry", err)
	}
	if calls, reconciles := p.stats(); reconciles != 1 || calls != 1 {
		t.Fatalf("provider saw %d charge calls and %d reconciliations; want 1 and 1", calls, reconciles)
	}
	// The hung owner's call completes late (the reason Reconcile's "not
	// done" must mean the provider refuses it); its staged payment never
	// commits, and it answers with the stored outcome.
	close(p.release)
	if err := <-ownerErr; err != nil {
		t.Fatalf("owner = %v; want the stored outcome replayed", err)
	}
	if _, ok := f.store.Item("payments", "pay-1"); ok {
		t.Fatal("the hung owner's staged payment was committed")
	}
}

// TestFencedOutRenewalCancelsTheAttempt: when the record leaves the owner's
// hands while its handler runs (taken over after a lapse the owner never
// saw, or resolved by a reconciler), the next renewal is refused, the
// handler's context is cancelled with a cause matching ErrLeaseLost, and
// nothing the handler staged is committed, whether it honours the
// cancellation or not.
func TestFencedOutRenewalCancelsTheAttempt(t *testing.T) {
	key := lambdaidem.RecordKey("lambdaidem", "", "Pay", "k")
	fp, _ := lambdaidem.Fingerprint("x")
	ctx := context.Background()
	cases := []struct {
		name    string
		intrude func(t *testing.T, f *fixture, token string)
		want    func(t *testing.T, out string, err error)
	}{
		{"taken over", func(t *testing.T, f *fixture, _ string) {
			// A renewing owner is held until its hold: a takeover comes after.
			later := lambdaidem.HoldUntil(f.store.Records()[key], 0).Add(time.Second)
			if _, ok, err := f.store.Claim(ctx, lambdaidem.Claim{Key: key, Token: "intruder", Fingerprint: fp, Now: later, LeaseUntil: later.Add(time.Hour), ExpiresAt: later.Add(48 * time.Hour)}); !ok || err != nil {
				t.Fatalf("takeover = %v, %v", ok, err)
			}
		}, func(t *testing.T, _ string, err error) {
			if !errors.Is(err, lambdaidem.ErrLeaseLost) {
				t.Fatalf("owner = %v; want ErrLeaseLost", err)
			}
		}},
		{"reconciled as done", func(t *testing.T, f *fixture, token string) {
			now := f.clock.Now()
			if _, ok, err := f.store.Commit(ctx, lambdaidem.Commit{Key: key, Token: token, Fingerprint: fp, Outcome: []byte(`{"value":"reconciled"}`), Now: now, ExpiresAt: now.Add(time.Hour), Attempts: 1}); !ok || err != nil {
				t.Fatalf("reconciler's commit = %v, %v", ok, err)
			}
		}, func(t *testing.T, out string, err error) {
			if err != nil || out != "reconciled" {
				t.Fatalf("owner = %q, %v; want the reconciled outcome replayed", out, err)
			}
		}},
		{"reconciled as not done", func(t *testing.T, f *fixture, token string) {
			if ok, err := f.store.Release(ctx, lambdaidem.Fence{Key: key, Token: token}); !ok || err != nil {
				t.Fatalf("reconciler's release = %v, %v", ok, err)
			}
		}, func(t *testing.T, _ string, err error) {
			if !errors.Is(err, lambdaidem.ErrLeaseLost) {
				t.Fatalf("owner = %v; want ErrLeaseLost", err)
			}
		}},
	}
	for _, c := range cases {
		for _, honours := range []bool{true, false} {
			t.Run(fmt.Sprintf("%s/handler honours ctx %v", c.name, honours), func(t *testing.T) {
				f := renewing(t, memstore.New())
				started := make(chan struct{})
				cause := make(chan error, 1)
				type result struct {
					out string
					err error
				}
				res := make(chan result, 1)
				go func() {
					out, err := lambdaidem.Do(ctx, f.guard, call("k", "x"), func(ctx context.Context) (string, error) {
						if _, err := stagePayment(ctx, "pay-owner"); err != nil {
							return "", err
						}
						close(started)
						<-ctx.Done()
						cause <- context.Cause(ctx)
						if honours {
							return "", ctx.Err()
						}
						return "paid anyway", nil
					})
					res <- result{out, err}
				}()
				<-started
				// The renewer waits on its timer before anything moves.
				waitFor(t, "the renewer to wait on its timer", func() bool { return f.clock.Timers() == 1 })
				c.intrude(t, f, f.onlyRecord(t).Token)
				f.clock.Advance(7 * time.Second) // the renewal finds the record gone from its hands
				select {
				case err := <-cause:
					if !errors.Is(err, lambdaidem.ErrLeaseLost) {
						t.Fatalf("context cause = %v; want ErrLeaseLost", err)
					}
				case <-time.After(5 * time.Second):
					t.Fatal("the handler's context was not cancelled after a fenced-out renewal")
				}
				r := <-res
				if honours {
					// The handler's own error passes through unwrapped.
					if !errors.Is(r.err, context.Canceled) {
						t.Fatalf("owner = %v; want the handler's context.Canceled", r.err)
					}
				} else {
					c.want(t, r.out, r.err)
				}
				if _, ok := f.store.Item("payments", "pay-owner"); ok {
					t.Fatal("the fenced-out attempt's staged payment was committed")
				}
			})
		}
	}
}

// TestRenewalCosts: a handler that ends before RenewFraction of its lease
// makes no renewal; a long one renews once per RenewFraction of the lease;
// a panicking one stops renewing; a renewal refused by an unavailable store
// is retried within the lease, and the lease is kept.
func TestRenewalCosts(t *testing.T) {
	ctx := context.Background()
	t.Run("a quick handler makes no extra call", func(t *testing.T) {
		f := renewing(t, memstore.New())
		if _, err := lambdaidem.Do(ctx, f.guard, call("k", "x"), func(ctx context.Context) (string, error) {
			f.clock.Advance(6 * time.Second) // just under 2/3 of the lease
			return stagePayment(ctx, "p")
		}); err != nil {
			t.Fatal(err)
		}
		f.clock.Advance(time.Hour)
		if calls := f.store.Calls(); calls["renew"] != 0 || calls["claim"] != 1 || calls["commit"] != 1 {
			t.Fatalf("calls = %v; want one claim, one commit, no renewal", calls)
		}
	})
	t.Run("without renewal nothing is renewed", func(t *testing.T) {
		f := newFixture(t, func(o *lambdaidem.Options) { o.Renew = lambdaidem.RenewNever; o.Lease = testLease })
		release := make(chan struct{})
		done := make(chan error, 1)
		go func() {
			_, err := lambdaidem.Do(ctx, f.guard, call("k", "x"), func(context.Context) (string, error) { <-release; return "ok", nil })
			done <- err
		}()
		waitFor(t, "the claim", func() bool { return f.calls("claim") == 1 })
		f.clock.Advance(time.Minute)
		close(release)
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		if n := f.calls("renew"); n != 0 {
			t.Fatalf("renewals = %d with RenewNever", n)
		}
	})
	t.Run("a panicking handler stops renewing", func(t *testing.T) {
		f := renewing(t, memstore.New())
		func() {
			defer func() { recover() }()
			lambdaidem.Do(ctx, f.guard, call("k", "x"), func(context.Context) (string, error) {
				f.tick(t, 7*time.Second)
				waitFor(t, "a renewal", func() bool { return f.calls("renew") == 1 })
				panic("boom")
			})
		}()
		f.clock.Advance(time.Hour)
		time.Sleep(10 * time.Millisecond)
		if n := f.calls("renew"); n != 1 {
			t.Fatalf("renewals = %d after the panic; want 1 (before it)", n)
		}
		f.noRecords(t) // released
	})
	t.Run("an unavailable store is retried within the lease", func(t *testing.T) {
		var mu sync.Mutex
		failures := 3
		s := memstore.New(func(o *memstore.Options) {
			o.Fault = func(op, _ string) error {
				mu.Lock()
				defer mu.Unlock()
				if op == "renew" && failures > 0 {
					failures--
					return lambdaidem.ErrStoreUnavailable
				}
				return nil
			}
		})
		f := renewing(t, s)
		release := make(chan struct{})
		done := make(chan error, 1)
		go func() {
			_, err := lambdaidem.Do(ctx, f.guard, call("k", "x"), func(ctx context.Context) (string, error) {
				<-release
				if ctx.Err() != nil {
					return "", context.Cause(ctx)
				}
				return stagePayment(ctx, "p")
			})
			done <- err
		}()
		waitFor(t, "the claim", func() bool { return f.calls("claim") == 1 })
		f.tick(t, 7*time.Second)
		for i := 0; ; i++ { // three refusals, then the renewal
			// Each step waits for the renewer to wait again, so the renew
			// count is settled when it is read.
			waitFor(t, "the renewer to wait on its timer", func() bool { return f.clock.Timers() > 0 })
			if f.calls("renew") >= 4 {
				break
			}
			if i == 5000 {
				t.Fatalf("renew calls = %d; want retries", f.calls("renew"))
			}
			f.clock.Advance(100 * time.Millisecond) // the backoff, well within the lease
		}
		rec := f.onlyRecord(t)
		if rec.LeaseUntil.Sub(f.clock.Now()) < 9*time.Second || rec.RenewedAt.IsZero() {
			t.Fatalf("record after the retried renewal = %+v at %v; want a fresh lease", rec, f.clock.Now())
		}
		close(release)
		if err := <-done; err != nil {
			t.Fatalf("owner = %v; want committed", err)
		}
	})
	t.Run("renewals stop at MaxRunTime and the attempt counts as hung", func(t *testing.T) {
		f := renewing(t, memstore.New(), func(o *lambdaidem.Options) { o.MaxRunTime = 15 * time.Second })
		cause := make(chan error, 1)
		go func() {
			lambdaidem.Do(ctx, f.guard, call("k", "x"), func(ctx context.Context) (string, error) {
				<-ctx.Done()
				cause <- context.Cause(ctx)
				return "", ctx.Err()
			})
		}()
		waitFor(t, "the claim", func() bool { return f.calls("claim") == 1 })
		for range 15 { // to MaxRunTime, where the renewed lease ends
			f.tick(t, time.Second)
		}
		select {
		case err := <-cause:
			if !errors.Is(err, lambdaidem.ErrLeaseLost) || !strings.Contains(err.Error(), "MaxRunTime") {
				t.Fatalf("cause = %v; want ErrLeaseLost naming MaxRunTime", err)
			}
		case <-time.After(5 * time.Second):
			t.Fatal("the attempt's context was not cancelled after MaxRunTime")
		}
		if n := f.calls("renew"); n != 1 {
			t.Fatalf("renewals = %d; want 1 (at 6.7s; the next would pass MaxRunTime 15s)", n)
		}
	})
}

// TestRenewAutoRenewsUnlessStandardLambda: RenewAuto means RenewNever only
// where the platform is positively known to stop a handler at its
// deadline: standard Lambda, which AWS identifies by
// AWS_LAMBDA_INITIALIZATION_TYPE "on-demand", "provisioned-concurrency" or
// "snap-start" (Lambda developer guide, "Defined runtime environment
// variables"), running one invocation at a time. Lambda Managed Instances
// ("lambda-managed-instances", at any AWS_LAMBDA_MAX_CONCURRENCY, 1
// included), containers and local servers (no such variable) renew.
// aws-lambda-go reads AWS_LAMBDA_MAX_CONCURRENCY once, so each case runs in
// a fresh test process.
func TestRenewAutoRenewsUnlessStandardLambda(t *testing.T) {
	if v, ok := os.LookupEnv("LAMBDAIDEM_RENEW_PROBE"); ok {
		g, err := lambdaidem.New(memstore.New())
		if err != nil {
			t.Fatal(err)
		}
		if got := g.Options().Renew.String(); got != v {
			t.Fatalf("RenewAuto resolved to %s; want %s", got, v)
		}
		return
	}
	for _, c := range []struct{ initType, concurrency, want string }{
		{"on-demand", "", "never"},
		{"provisioned-concurrency", "", "never"},
		{"snap-start", "1", "never"},
		{"on-demand", "8", "always"}, // several at once: not the standard model
		{"lambda-managed-instances", "1", "always"},
		{"lambda-managed-instances", "64", "always"},
		{"", "", "always"}, // a container, a local server, a test
		{"", "1", "always"},
		{"something-new", "", "always"},
	} {
		cmd := exec.Command(os.Args[0], "-test.run=^TestRenewAutoRenewsUnlessStandardLambda$", "-test.count=1")
		cmd.Env = append(os.Environ(), "LAMBDAIDEM_RENEW_PROBE="+c.want,
			"AWS_LAMBDA_INITIALIZATION_TYPE="+c.initType, "AWS_LAMBDA_MAX_CONCURRENCY="+c.concurrency)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("AWS_LAMBDA_INITIALIZATION_TYPE=%q AWS_LAMBDA_MAX_CONCURRENCY=%q: %v\n%s", c.initType, c.concurrency, err, out)
		}
	}
}
