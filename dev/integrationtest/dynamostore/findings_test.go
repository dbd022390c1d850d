package dynamostore_test

import (
	"bytes"
	"context"
	"errors"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/lambdaidem/lambdaidem/ddbtest"
	"github.com/lambdaidem/lambdaidem/dynamostore"
	"github.com/lambdaidem/lambdaidem/internal/testclock"
	"github.com/lambdaidem/lambdaidem/lambdaidem"
)

// The spin model's counterexamples (docs/guarantees.md, "The record
// protocol, model-checked"), each a test over the DynamoDB test endpoint.

// skewed is the world of the spin model's counterexample F2 (model
// finding 2 in docs/guarantees.md, mutation HOLD_SLACK in model/record.pml):
// one true clock; a renewing owner (Lambda Managed Instances) whose clock
// is ε behind it, and readers (a duplicate, the operator) whose clocks are
// ε ahead. LeaseMargin (5 s, the default) exceeds 2ε, as
// docs/guarantees.md requires.
type skewed struct {
	e     *env
	clock *testclock.Clock // true time
	key   string
	last  time.Time // the owner's last sign of life (renewal, else lease end), in true time

	mu      sync.Mutex
	charges int // charges the provider made

	release  chan struct{}
	let      func() // closes release, once
	ownerErr chan error
}

const (
	skewEps     = time.Second
	skewLease   = 10 * time.Second
	skewMaxRun  = time.Minute
	skewRenewAt = 7 * time.Second // past 2/3 of the lease
)

func (w *skewed) ownerNow() time.Time  { return w.clock.Now().Add(-skewEps) }
func (w *skewed) readerNow() time.Time { return w.clock.Now().Add(skewEps) }

func (w *skewed) charged() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.charges
}

// payment is the handler: mark the record, then charge the provider once
// the test lets it (ignoring ctx, as code on Managed Instances may:
// timeouts are not enforced there), and succeed.
func (w *skewed) payment(ctx context.Context) (string, error) {
	a, _ := lambdaidem.AttemptFrom(ctx)
	if err := a.BeginExternal(ctx); err != nil {
		return "", err
	}
	<-w.release
	return w.charge(), nil
}

// charge is the provider's charge: it has no memory of the operation key
// (or its window has passed), so a second call charges again.
func (w *skewed) charge() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.charges++
	return "paid"
}

// rerun is the handler as a duplicate runs it: it charges at once.
func (w *skewed) rerun(ctx context.Context) (string, error) {
	a, _ := lambdaidem.AttemptFrom(ctx)
	if err := a.BeginExternal(ctx); err != nil {
		return "", err
	}
	return w.charge(), nil
}

// newSkewed starts the owner: it claims, marks the record external, gets
// renewals renewals through (0 or 1: at true time t0 + 7 s, its clock
// t0 + 6 s), and then every renewal is refused (throttled) until its lease
// lapses. The owner is still running, its charge not yet made, and by the
// assumption ("an owner silent for MaxRunTime has stopped") it may run
// until its last sign of life (the renewal, else its lease end) plus
// MaxRunTime in true time. The clock is left just before then: 500 ms
// before in true time, 500 ms after on the readers' clocks.
func newSkewed(t *testing.T, renewals int) *skewed {
	t.Helper()
	e := newEnv(t)
	w := &skewed{e: e, clock: newClock(), key: recordKey("k"), release: make(chan struct{}), ownerErr: make(chan error, 1)}
	owner := e.guard(t, nil, func(o *lambdaidem.Options) {
		o.Renew = lambdaidem.RenewAlways
		o.Lease = skewLease
		o.MaxRunTime = skewMaxRun
		o.Now = w.ownerNow
		o.After = w.clock.After
	})
	var once sync.Once
	w.let = func() { once.Do(func() { close(w.release) }) }
	t.Cleanup(func() {
		w.let()
		<-w.ownerErr
	})
	go func() {
		_, err := lambdaidem.Do(context.Background(), owner, call("k"), w.payment)
		w.ownerErr <- err
	}()
	w.waitFor(t, "the owner's external mark", func(it item) bool { _, ok := it["external"]; return ok })

	// renewals renewals get through; the rest are throttled (every SDK try).
	e.proxy(t).Inject(ddbtest.Rule{Op: "UpdateItem", Fault: ddbtest.Throttling, After: renewals,
		Match: func(body []byte) bool { return bytes.Contains(body, []byte(":renewedAt")) }})
	w.last = w.leaseOf(t).Add(skewEps) // the claim's lease end, in true time
	if renewals > 0 {
		w.tick(t, skewRenewAt)
		w.last = w.clock.Now()
		w.waitFor(t, "the owner's renewal", func(it item) bool { return num(it, "renewed_at") != "" })
	}
	for lease := w.leaseOf(t); !w.ownerNow().After(lease); lease = w.leaseOf(t) {
		w.tick(t, time.Second)
	}
	if it := w.e.record(t, w.key); (num(it, "renewed_at") != "") != (renewals > 0) {
		t.Fatalf("renewed_at = %q after %d renewals", num(it, "renewed_at"), renewals)
	}
	w.clock.Advance(w.last.Add(skewMaxRun - skewEps/2).Sub(w.clock.Now()))
	if w.charged() != 0 {
		t.Fatal("the owner charged before the test let it")
	}
	return w
}

// tick moves the true clock by d once the owner's renewer waits on a timer
// (as lambdaidem's renew tests do), or at once when its lease has run out
// on the owner's clock (the renewer then retries without a timer, or gives
// up).
func (w *skewed) tick(t *testing.T, d time.Duration) {
	t.Helper()
	for end := time.Now().Add(5 * time.Second); w.clock.Timers() == 0 && w.ownerNow().Before(w.leaseOf(t)); {
		if time.Now().After(end) {
			t.Fatalf("timed out waiting for the renewer's timer (true clock %v, owner %v, lease %v, record %v)", w.clock.Now().UTC(), w.ownerNow().UTC(), w.leaseOf(t).UTC(), w.e.record(t, w.key))
		}
		time.Sleep(time.Millisecond)
	}
	w.clock.Advance(d)
}

func (w *skewed) leaseOf(t *testing.T) time.Time {
	ms, err := strconv.ParseInt(num(w.e.record(t, w.key), "in_progress_expiration"), 10, 64)
	if err != nil {
		t.Fatalf("the record's lease: %v", err)
	}
	return time.UnixMilli(ms)
}

func (w *skewed) waitFor(t *testing.T, what string, cond func(item) bool) {
	t.Helper()
	for end := time.Now().Add(5 * time.Second); ; time.Sleep(time.Millisecond) {
		if it := w.e.record(t, w.key); it != nil && cond(it) {
			return
		}
		if time.Now().After(end) {
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

// finish lets the owner charge and return, and checks that the provider
// was charged once and the owner's outcome stands.
func (w *skewed) finish(t *testing.T) {
	t.Helper()
	w.let()
	if err := <-w.ownerErr; err != nil {
		t.Fatalf("owner = %v; want its outcome committed", err)
	}
	w.ownerErr <- nil // for the cleanup
	if n := w.charged(); n != 1 {
		t.Fatalf("the provider charged %d times; want once", n)
	}
}

// TestHoldCoversClockSkew is the spin model's counterexample F2 as a test
// against the DynamoDB test endpoint: the owner (clock ε behind) renewed
// at its clock c, or got no renewal through after its claim, and wrote a
// hold; a reader (clock ε ahead) reads the record within MaxRunTime of the
// owner's last sign of life in true time. A hold of c + MaxRunTime (or
// lease end + MaxRunTime) has ended on the reader's clock, so the
// operator's resolve --not-done would delete the record (and a duplicate's
// Reconcile answer "not done" and run the handler again) while the owner
// may still charge. The hold must carry LeaseMargin, as the lease does
// (lambdaidem.OwnerHold).
func TestHoldCoversClockSkew(t *testing.T) {
	for _, renewals := range []int{1, 0} {
		name := map[int]string{1: "after a renewal", 0: "no renewal got through"}[renewals]
		t.Run(name+"/operator resolve --not-done", func(t *testing.T) {
			w := newSkewed(t, renewals)
			r := w.e.records(t)
			rec, err := r.Read(context.Background(), w.key)
			if err != nil {
				t.Fatal(err)
			}
			if v := r.Judge(rec, w.readerNow()); v != lambdaidem.VerdictHeld {
				t.Errorf("Judge on the operator's clock, %v after the owner's last sign of life in true time = %v (hold until %v, reader at %v); want held",
					w.clock.Now().Sub(w.last), v, r.HoldUntil(rec).UTC(), w.readerNow().UTC())
			}
			// Not held for ever: once the owner has been silent for
			// MaxRunTime plus LeaseMargin, the operator's clock says it may
			// settle.
			if later := w.last.Add(skewMaxRun + 5*time.Second + skewEps); r.Judge(rec, later) != lambdaidem.VerdictReconcile {
				t.Errorf("Judge at %v = %v; want reconcile (hold until %v)", later.UTC(), r.Judge(rec, later), r.HoldUntil(rec).UTC())
			}
			err = r.Resolve(context.Background(), rec, dynamostore.Resolution{Now: w.readerNow()})
			if !errors.Is(err, dynamostore.ErrHeld) {
				t.Fatalf("resolve --not-done %v after the owner's last sign of life (MaxRunTime %v) = %v; want ErrHeld", w.clock.Now().Sub(w.last), skewMaxRun, err)
			}
			w.finish(t)
		})
		t.Run(name+"/duplicate with a reconcile function", func(t *testing.T) {
			w := newSkewed(t, renewals)
			dup := w.e.guard(t, nil, func(o *lambdaidem.Options) { o.Now = w.readerNow; o.MaxRunTime = skewMaxRun })
			c := call("k")
			reconciles := 0
			c.Reconcile = func(context.Context, lambdaidem.Unknown) (string, bool, error) {
				reconciles++
				return "", false, nil // the provider has no charge yet: "not done"
			}
			_, err := lambdaidem.Do(context.Background(), dup, c, w.rerun)
			if !errors.Is(err, lambdaidem.ErrInProgress) || reconciles != 0 {
				t.Fatalf("duplicate %v after the owner's last sign of life = %v after %d reconciles; want ErrInProgress, no reconcile", w.clock.Now().Sub(w.last), err, reconciles)
			}
			w.finish(t)
		})
	}
}

// TestCallLeftBehindByAReturnedHandler is the spin model's counterexample
// F3 over the DynamoDB test endpoint, and the assumption it was decided
// by: "a handler that has returned has no call of its own still in
// flight" (docs/guarantees.md). The owner begins its external effect,
// leaves the provider call to a goroutine and returns an ambiguous error
// before any renewal: the record is UNKNOWN with no renewal on record, so
// a duplicate reconciles it at once, the provider has nothing, "not done"
// releases it and the duplicate charges. The call left behind then
// proceeds: made under the handler's context, which ended when the
// handler returned, it is cancelled and charges nothing (one charge), for
// an owner that renews (a container) and one that does not (standard
// Lambda, where such a goroutine would be frozen and resume at a later
// invocation). A call under another context is outside the assumption:
// the model checks it as a variant, and the effect would repeat.
func TestCallLeftBehindByAReturnedHandler(t *testing.T) {
	for _, renew := range []lambdaidem.RenewMode{lambdaidem.RenewAlways, lambdaidem.RenewNever} {
		t.Run(map[lambdaidem.RenewMode]string{lambdaidem.RenewAlways: "owner renews", lambdaidem.RenewNever: "standard Lambda"}[renew], func(t *testing.T) {
			e := newEnv(t)
			clk := newClock()
			var mu sync.Mutex
			charges := 0
			charge := func() {
				mu.Lock()
				defer mu.Unlock()
				charges++
			}
			owner := e.guard(t, clk, func(o *lambdaidem.Options) { o.Renew = renew; o.After = clk.After })
			release := make(chan struct{})
			left := make(chan bool, 1) // whether the call left behind charged
			_, err := lambdaidem.Do(context.Background(), owner, call("k"), func(ctx context.Context) (string, error) {
				a, _ := lambdaidem.AttemptFrom(ctx)
				if err := a.BeginExternal(ctx); err != nil {
					return "", err
				}
				go func() { // the provider call, honouring its context
					<-release
					if ctx.Err() != nil {
						left <- false
						return
					}
					charge()
					left <- true
				}()
				return "", errProviderTimeout
			})
			if !errors.Is(err, errProviderTimeout) {
				t.Fatalf("owner = %v; want its error", err)
			}
			r := e.records(t)
			rec, err := r.Read(context.Background(), recordKey("k"))
			if err != nil {
				t.Fatal(err)
			}
			if rec.Status != lambdaidem.StatusUnknown || !rec.RenewedAt.IsZero() || r.Judge(rec, clk.Now()) != lambdaidem.VerdictReconcile {
				t.Fatalf("record %s renewed at %v, verdict %v; want UNKNOWN, never renewed, reconcile", rec.Status, rec.RenewedAt, r.Judge(rec, clk.Now()))
			}
			dup := e.guard(t, clk)
			c := call("k")
			c.Reconcile = func(context.Context, lambdaidem.Unknown) (string, bool, error) {
				mu.Lock()
				defer mu.Unlock()
				return "", charges > 0, nil // the provider has no charge: not done
			}
			if _, err := lambdaidem.Do(context.Background(), dup, c, func(ctx context.Context) (string, error) {
				a, _ := lambdaidem.AttemptFrom(ctx)
				if err := a.BeginExternal(ctx); err != nil {
					return "", err
				}
				charge()
				return "paid", nil
			}); err != nil {
				t.Fatalf("duplicate = %v; want the reconciled rerun", err)
			}
			close(release)
			if <-left {
				t.Fatal("the call the owner's handler left behind charged after the handler returned")
			}
			if charges != 1 {
				t.Fatalf("%d charges; want 1", charges)
			}
		})
	}
}
