package lambdaidem_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lambdaidem/lambdaidem/lambdaidem"
)

// TestReconcileNotDoneAfterTheClockSteppedBack: the downstream's window
// had passed when the duplicate judged the UNKNOWN record
// (VerdictWindowPassed); the wall clock then steps back (an NTP
// correction) while the reconcile function runs, to before the window's
// end. Its "not done" must still be refused: a record judged past its
// window is never redispatched (Verdict.Redispatchable), whatever the
// clock says when the answer comes. make mutate's REDISPATCHABLE.
func TestReconcileNotDoneAfterTheClockSteppedBack(t *testing.T) {
	const window = 24 * time.Hour
	clk := newClock()
	var back atomic.Int64
	f := newFixture(t, func(o *lambdaidem.Options) {
		o.Now = func() time.Time { return clk.Now().Add(-time.Duration(back.Load())) }
	})
	c := call("k", "x")
	_, _ = lambdaidem.Do(context.Background(), f.guard, c, chargeWithin(window))
	if rec := f.onlyRecord(t); rec.Status != lambdaidem.StatusUnknown {
		t.Fatalf("record %s; want UNKNOWN", rec.Status)
	}
	clk.Advance(window + time.Hour)
	c.Reconcile = func(context.Context, lambdaidem.Unknown) (string, bool, error) {
		back.Store(int64(2 * time.Hour)) // the clock steps back to 23 h after the dispatch
		return "", false, nil
	}
	reran := false
	_, err := lambdaidem.Do(context.Background(), f.guard, c, func(context.Context) (string, error) {
		reran = true
		return "charged again", nil
	})
	if reran || !errors.Is(err, lambdaidem.ErrWindowPassed) {
		t.Fatalf("= %v, reran %v; want ErrWindowPassed and no rerun", err, reran)
	}
	if rec := f.onlyRecord(t); rec.Status != lambdaidem.StatusUnknown {
		t.Errorf("record %s; want UNKNOWN for an operator", rec.Status)
	}
}
