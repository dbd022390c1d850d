package lambdaidem_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lambdaidem/lambdaidem/lambdaidem"
	"github.com/lambdaidem/lambdaidem/lambdaidem/memstore"
)

// TestBeginExternalAfterTheLeaseLapsedIsRefused: on Lambda Managed
// Instances a handler keeps running past its deadline (timeouts are not
// enforced; see renew_test.go). Here every renewal fails (a store outage
// for renewals only), so the attempt's lease lapses while its handler,
// which ignores its context, is still running; the renewer cancels the
// context. The handler then calls BeginExternal. Its lease is gone: a
// duplicate may take the record over at any moment, and a record marked
// external after the lapse, never renewed, would be handed to Reconcile at
// once while the owner dispatches its call (a naive provider answers "not
// done" for a charge in flight). BeginExternal must refuse (ErrLeaseLost),
// so that the owner never starts the effect: one charge, by the duplicate.
//
// The same holds without renewal (Options.Renew = RenewNever where the
// platform does not stop the handler): the lease is the claim's.
func TestBeginExternalAfterTheLeaseLapsedIsRefused(t *testing.T) {
	for _, mode := range []lambdaidem.RenewMode{lambdaidem.RenewAlways, lambdaidem.RenewNever} {
		t.Run("renew "+mode.String(), func(t *testing.T) { testBeginExternalAfterLapse(t, mode) })
	}
}

func testBeginExternalAfterLapse(t *testing.T, mode lambdaidem.RenewMode) {
	s := refusingRenewals()
	f := renewing(t, s, func(o *lambdaidem.Options) { o.Renew = mode })
	p := newProvider()
	c := call("k", "pay 10 EUR")
	c.Reconcile = p.reconcile

	go1 := make(chan struct{})
	marked := make(chan error, 1)
	var hctx context.Context
	var mu sync.Mutex
	ownerErr := make(chan error, 1)
	go func() {
		_, err := lambdaidem.Do(context.Background(), f.guard, c, func(ctx context.Context) (string, error) {
			mu.Lock()
			hctx = ctx
			mu.Unlock()
			<-go1 // ignores ctx, as a handler past its deadline may
			a, _ := lambdaidem.AttemptFrom(ctx)
			err := a.BeginExternal(context.Background())
			marked <- err
			if err != nil {
				return "", err
			}
			p.charge(a.OperationKey())
			return stagePayment(ctx, "pay-1")
		})
		ownerErr <- err
	}()
	waitFor(t, "the claim", func() bool { return f.calls("claim") == 1 })
	pastTheLease(t, f)
	if mode == lambdaidem.RenewAlways {
		waitFor(t, "the renewer to give the lease up", func() bool {
			mu.Lock()
			defer mu.Unlock()
			return hctx != nil && errors.Is(context.Cause(hctx), lambdaidem.ErrLeaseLost)
		})
	}
	close(go1)
	if err := <-marked; !errors.Is(err, lambdaidem.ErrLeaseLost) {
		t.Errorf("BeginExternal after the lease lapsed = %v; want ErrLeaseLost (the record is not the owner's to mark)", err)
	}

	// The owner's handler fails and gives its claim back (a renewing owner
	// would otherwise hold it until MaxRunTime after its lease end).
	oerr := <-ownerErr
	// A duplicate after the lapse, with a reconcile function that answers
	// "not done" while a charge is in flight.
	dupErr := make(chan error, 1)
	go func() {
		_, err := lambdaidem.Do(context.Background(), f.guard, c, p.payOnce)
		dupErr <- err
	}()
	select {
	case <-p.entered:
	case <-time.After(5 * time.Second):
		t.Fatal("no charge started")
	}
	close(p.release)
	derr := <-dupErr
	if calls, _ := p.stats(); calls != 1 {
		t.Fatalf("%d charge calls (owner: %v, duplicate: %v); want 1", calls, oerr, derr)
	}
	if derr != nil {
		t.Fatalf("duplicate = %v; want it to run the payment", derr)
	}
}

// TestReconcileWaitsForAnOwnerWhoseRenewalsNeverGotThrough: on Lambda
// Managed Instances (this Guard renews) the owner marks its record
// external and dispatches a charge that ignores its context; every renewal
// is refused (a store outage for renewals only), so its lease lapses
// without a renewal on record. The owner may still be running: its call is
// in flight. Duplicates after the lapse get ErrInProgress and Reconcile is
// not asked (a naive provider would answer "not done" and the charge would
// run twice), until MaxRunTime after the lease ended. The owner's charge
// completes and commits: one charge, then the replay.
func TestReconcileWaitsForAnOwnerWhoseRenewalsNeverGotThrough(t *testing.T) {
	s := refusingRenewals()
	f := renewing(t, s, func(o *lambdaidem.Options) { o.MaxRunTime = time.Hour })
	p := newProvider()
	c := call("k", "pay 10 EUR")
	c.Reconcile = p.reconcile
	ownerErr := make(chan error, 1)
	go func() { ownerErr <- errOf(lambdaidem.Do(context.Background(), f.guard, c, p.payOnce)) }()
	<-p.entered
	pastTheLease(t, f)
	if rec := f.onlyRecord(t); !rec.LeaseUntil.Before(f.clock.Now()) || !rec.External || !rec.RenewedAt.IsZero() {
		t.Fatalf("record = %+v; want a lapsed lease with the external mark, never renewed", rec)
	}
	var reruns atomic.Int32
	for i, err := range duplicates(f, 4, c, func(context.Context) (string, error) { reruns.Add(1); return "rerun", nil }) {
		if !errors.Is(err, lambdaidem.ErrInProgress) {
			t.Fatalf("duplicate %d while the owner's charge is in flight: %v; want ErrInProgress", i, err)
		}
	}
	if _, reconciles := p.stats(); reconciles != 0 || reruns.Load() != 0 {
		t.Fatalf("Reconcile was called %d times, and the operation run again %d times, while the owner may still run", reconciles, reruns.Load())
	}
	close(p.release)
	if err := <-ownerErr; err != nil {
		t.Fatalf("owner = %v; want its charge committed", err)
	}
	out, err := lambdaidem.Do(context.Background(), f.guard, c, func(context.Context) (string, error) { reruns.Add(1); return "rerun", nil })
	if err != nil || out != "paid pay-1" || reruns.Load() != 0 {
		t.Fatalf("duplicate after the owner committed = %q, %v; want the replay", out, err)
	}
	if calls, _ := p.stats(); calls != 1 {
		t.Fatalf("%d charge calls; want 1", calls)
	}
}

// refusingRenewals is a store that refuses every renewal as unavailable.
func refusingRenewals() *memstore.Store {
	return memstore.New(func(o *memstore.Options) {
		o.Fault = func(op, _ string) error {
			if op == "renew" {
				return lambdaidem.ErrStoreUnavailable
			}
			return nil
		}
	})
}

// pastTheLease moves f's clock past the test lease a second at a time,
// giving the renewer its turn at each step (see fixture.tick).
func pastTheLease(t *testing.T, f *fixture) {
	t.Helper()
	for range int(testLease/time.Second) + 2 {
		f.tick(t, time.Second)
	}
}

func errOf(_ string, err error) error { return err }
