package lambdaidem_test

import (
	"context"
	"errors"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lambdaidem/lambdaidem/lambdaidem"
	"github.com/lambdaidem/lambdaidem/lambdaidem/memstore"
)

// The defects of issue 22, each reproduced by a test that failed on the
// code before the gate (lambdaidem/gate.go). Defect 1 (an operator settles
// what the core refuses to reconcile) is tested against the DynamoDB test
// endpoint (dev/integrationtest/dynamostore), defect 6 by
// TestRenewAutoRenewsUnlessStandardLambda.

// switchableRenewals is a store whose renewals are refused (as throttled)
// while refuse is set.
func switchableRenewals(refuse *atomic.Bool) *memstore.Store {
	return memstore.New(func(o *memstore.Options) {
		o.Fault = func(op, _ string) error {
			if op == "renew" && refuse.Load() {
				return lambdaidem.ErrStoreUnavailable
			}
			return nil
		}
	})
}

// blockedExternal is a handler that begins its external effect, signals
// started, and waits for release, as a charge in flight does.
func blockedExternal(started, release chan struct{}) func(context.Context) (string, error) {
	return func(ctx context.Context) (string, error) {
		a, _ := lambdaidem.AttemptFrom(ctx)
		if err := a.BeginExternal(ctx); err != nil {
			return "", err
		}
		close(started)
		<-release
		return "charged", nil
	}
}

func mustNotRun(t *testing.T) func(context.Context) (string, error) {
	return func(context.Context) (string, error) {
		t.Error("the handler ran again while the first attempt's effect may still land")
		return "", nil
	}
}

// Defect 2: expiry bypassed the gate. With RetryHorizon 1 min, a renewing
// owner's external record expired 1 s after its lapsed lease (the
// expiration was max(now + RetryHorizon, lease + 1 s)), counted as absent,
// and a duplicate claimed it afresh and ran the handler while the owner's
// charge was in flight. Now the record has no expiration once external
// (and an INPROGRESS record's is never before its hold): the duplicate is
// refused while the owner may run.
func TestExpiryNeverBypassesTheGate(t *testing.T) {
	var refuse atomic.Bool
	f := renewing(t, switchableRenewals(&refuse), func(o *lambdaidem.Options) { o.RetryHorizon = time.Minute })
	c := call("k", "pay 10 EUR")
	started, release := make(chan struct{}), make(chan struct{})
	ownerDone := make(chan error, 1)
	go func() {
		_, err := lambdaidem.Do(context.Background(), f.guard, c, blockedExternal(started, release))
		ownerDone <- err
	}()
	<-started
	for range 54 { // renewals get through for 54 s: the last at 53.3 s
		f.tick(t, time.Second)
	}
	renewed := f.onlyRecord(t).RenewedAt
	refuse.Store(true) // then they are throttled
	for f.clock.Now().Before(renewed.Add(13 * time.Second)) {
		f.tick(t, time.Second)
	}
	rec := f.onlyRecord(t)
	if !rec.ExpiresAt.IsZero() && !rec.ExpiresAt.After(lambdaidem.HoldUntil(rec, 0)) {
		t.Errorf("an external record expires at %v, before its owner's hold %v", rec.ExpiresAt, lambdaidem.HoldUntil(rec, 0))
	}
	if _, err := lambdaidem.Do(context.Background(), f.guard, c, mustNotRun(t)); !errors.Is(err, lambdaidem.ErrInProgress) {
		t.Errorf("duplicate 12 s after the owner's last renewal, its lease lapsed = %v; want ErrInProgress", err)
	}
	close(release)
	<-ownerDone
}

// Defect 3: an UNKNOWN record whose owner renewed less than MaxRunTime ago
// was reconciled at once, though Call.Reconcile promises it is not.
func TestUnknownRecentlyRenewedIsNotReconciled(t *testing.T) {
	f := renewing(t, memstore.New())
	p := newProvider()
	c := call("k", "pay 10 EUR")
	c.Reconcile = p.reconcile
	started, renewedOnce := make(chan struct{}), make(chan struct{})
	ownerDone := make(chan error, 1)
	go func() {
		_, err := lambdaidem.Do(context.Background(), f.guard, c, func(ctx context.Context) (string, error) {
			a, _ := lambdaidem.AttemptFrom(ctx)
			if err := a.BeginExternal(ctx); err != nil {
				return "", err
			}
			close(started)
			<-renewedOnce
			return "", errors.New("provider timed out") // the charge's outcome is unknown
		})
		ownerDone <- err
	}()
	<-started
	for i := 0; f.calls("renew") == 0; i++ {
		if i == int(testLease/time.Second) {
			t.Fatal("no renewal within the lease")
		}
		f.tick(t, time.Second)
	}
	close(renewedOnce)
	<-ownerDone
	if rec := f.onlyRecord(t); rec.Status != lambdaidem.StatusUnknown || rec.RenewedAt.IsZero() {
		t.Fatalf("record = %+v; want UNKNOWN with a renewal on record", rec)
	}
	if _, err := lambdaidem.Do(context.Background(), f.guard, c, mustNotRun(t)); !errors.Is(err, lambdaidem.ErrOutcomeUnknown) {
		t.Fatalf("duplicate = %v; want ErrOutcomeUnknown", err)
	}
	if _, reconciles := p.stats(); reconciles != 0 {
		t.Fatalf("Reconcile was called %d times within MaxRunTime of the owner's renewal; want 0", reconciles)
	}
	// Once MaxRunTime has passed since the renewal, it is reconciled.
	f.clock.Advance(lambdaidem.HoldUntil(f.onlyRecord(t), 0).Sub(f.clock.Now()) + time.Second)
	if _, err := lambdaidem.Do(context.Background(), f.guard, c, func(ctx context.Context) (string, error) { return "charged on retry", nil }); err != nil {
		t.Fatalf("after the hold: %v; want the reconciled (not done) record run again", err)
	}
	if _, reconciles := p.stats(); reconciles != 1 {
		t.Fatalf("Reconcile calls after the hold = %d; want 1", reconciles)
	}
}

// Defect 4: a handler that calls runtime.Goexit (t.Fatal in a handler
// under test) left its renewer renewing and the record INPROGRESS: the
// renewer was stopped only on a normal return or a recovered panic. Now it
// is stopped and awaited, and the claim given back, whenever the handler
// does not return normally.
func TestGoexitStopsTheRenewerAndReleases(t *testing.T) {
	f := renewing(t, memstore.New())
	exited := make(chan struct{})
	go func() {
		defer close(exited)
		lambdaidem.Do(context.Background(), f.guard, call("k", "x"), func(context.Context) (string, error) {
			runtime.Goexit()
			return "", nil
		})
	}()
	<-exited
	f.noRecords(t)
	before := f.calls("renew")
	f.clock.Advance(testLease)
	time.Sleep(20 * time.Millisecond) // a renewer left running would renew now
	if n := f.calls("renew"); n != before {
		t.Fatalf("%d renewals after the handler's goroutine exited; want none", n-before)
	}
}

// Defect 5: the reconcile gate followed the duplicate's Renew setting, not
// the owner's. A Managed Instances owner (it renews) whose renewals were
// all refused, its lease lapsed after BeginExternal, was reconciled at
// once by a duplicate from a Guard that does not renew. Now the record
// says that its owner renews, and until when it may run.
func TestReconcileFollowsTheOwnersRenewal(t *testing.T) {
	s := refusingRenewals()
	owner := renewing(t, s)
	p := newProvider()
	c := call("k", "pay 10 EUR")
	c.Reconcile = p.reconcile
	started, release := make(chan struct{}), make(chan struct{})
	ownerDone := make(chan error, 1)
	go func() {
		_, err := lambdaidem.Do(context.Background(), owner.guard, c, blockedExternal(started, release))
		ownerDone <- err
	}()
	<-started
	pastTheLease(t, owner)
	dup, err := lambdaidem.New(s, func(o *lambdaidem.Options) {
		o.Now = owner.clock.Now
		o.Renew = lambdaidem.RenewNever // standard Lambda
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := lambdaidem.Do(context.Background(), dup, c, mustNotRun(t)); !errors.Is(err, lambdaidem.ErrInProgress) {
		t.Errorf("duplicate from a Guard that does not renew = %v; want ErrInProgress (the owner renews)", err)
	}
	if _, reconciles := p.stats(); reconciles != 0 {
		t.Errorf("Reconcile called %d times while the renewing owner may run; want 0", reconciles)
	}
	close(release)
	<-ownerDone
}

// Defect 7: UNKNOWN records expired (expiration = now + RetryHorizon): the
// store's TTL deleted an uncertainty nobody resolved, and a redrive after
// that ran the effect again. Now an UNKNOWN record has no expiration and,
// should it have one (written by an earlier version), it is ignored.
func TestUnknownNeverExpires(t *testing.T) {
	f := newFixture(t, func(o *lambdaidem.Options) { o.RetryHorizon = time.Hour })
	c := call("k", "x")
	if _, err := lambdaidem.Do(context.Background(), f.guard, c, chargeThenFail); err == nil {
		t.Fatal("want the handler's error")
	}
	rec := f.onlyRecord(t)
	if rec.Status != lambdaidem.StatusUnknown || !rec.ExpiresAt.IsZero() {
		t.Fatalf("record = %+v; want UNKNOWN with no expiration", rec)
	}
	f.clock.Advance(30 * 24 * time.Hour)
	if _, err := lambdaidem.Do(context.Background(), f.guard, c, mustNotRun(t)); !errors.Is(err, lambdaidem.ErrOutcomeUnknown) {
		t.Fatalf("redrive a month later = %v; want ErrOutcomeUnknown (a recovery obligation, not absence)", err)
	}
}
