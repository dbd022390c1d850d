package lambdaidem_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/lambdaidem/lambdaidem/lambdaidem"
)

// chargeWithin begins an external effect whose downstream deduplicates for
// window, and then fails ambiguously.
func chargeWithin(window time.Duration) func(ctx context.Context) (string, error) {
	return func(ctx context.Context) (string, error) {
		a, _ := lambdaidem.AttemptFrom(ctx)
		if err := a.BeginExternalWithin(ctx, window); err != nil {
			return "", err
		}
		return "", errors.New("provider timed out")
	}
}

// TestReconcileNotDoneRespectsTheDownstreamWindow: a charge whose provider
// keeps idempotency keys for 24 hours is left UNKNOWN. A reconcile that says
// "not done" releases the record for a redispatch while the provider still
// remembers the operation key, less the clock-skew margin (LeaseMargin, 5 s
// by default: until 1ms before window - 5 s, on the manual clock); from
// there on it is refused: the record stays
// UNKNOWN for an operator, the duplicate gets ErrOutcomeUnknown matching
// ErrWindowPassed, and nothing runs again. "Done" is still accepted past
// the window. The record keeps the first dispatch's time and the window.
func TestReconcileNotDoneRespectsTheDownstreamWindow(t *testing.T) {
	const window = 24 * time.Hour
	const margin = 5 * time.Second // Options.LeaseMargin's default
	cases := []struct {
		name    string
		after   time.Duration
		done    bool
		rerun   bool
		wantErr error
		status  lambdaidem.Status
	}{
		{"not done, 1ms before the edge: released and run again", window - margin - time.Millisecond, false, true, nil, lambdaidem.StatusCompleted},
		{"not done, at the edge: refused, stays UNKNOWN", window - margin, false, false, lambdaidem.ErrWindowPassed, lambdaidem.StatusUnknown},
		{"not done, at the window's end: refused, stays UNKNOWN", window, false, false, lambdaidem.ErrWindowPassed, lambdaidem.StatusUnknown},
		{"not done, after the edge: refused, stays UNKNOWN", window + time.Hour, false, false, lambdaidem.ErrWindowPassed, lambdaidem.StatusUnknown},
		{"done, after the edge: completed", window + time.Hour, true, false, nil, lambdaidem.StatusCompleted},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			c := call("k", "x")
			first := f.clock.Now()
			lambdaidem.Do(context.Background(), f.guard, c, chargeWithin(window))
			rec := f.onlyRecord(t)
			if rec.Status != lambdaidem.StatusUnknown || !rec.DispatchedAt.Equal(first) || rec.DispatchWindow != window {
				t.Fatalf("record = %+v; want UNKNOWN, dispatched at %v within %v", rec, first, window)
			}
			f.clock.Advance(tc.after)
			var seen lambdaidem.Unknown
			c.Reconcile = func(_ context.Context, u lambdaidem.Unknown) (string, bool, error) {
				seen = u
				return "charged (reconciled)", tc.done, nil
			}
			reran := false
			_, err := lambdaidem.Do(context.Background(), f.guard, c, func(context.Context) (string, error) {
				reran = true
				return "charged on retry", nil
			})
			if reran != tc.rerun || !errors.Is(err, tc.wantErr) || (tc.wantErr != nil) != (err != nil) {
				t.Fatalf("= %v, reran %v; want %v, reran %v", err, reran, tc.wantErr, tc.rerun)
			}
			if tc.wantErr != nil && !errors.Is(err, lambdaidem.ErrOutcomeUnknown) {
				t.Errorf("the refusal %v does not match ErrOutcomeUnknown", err)
			}
			if !seen.DispatchedAt.Equal(first) || seen.DispatchWindow != window {
				t.Errorf("the reconcile function saw %+v; want the first dispatch and the window", seen)
			}
			if rec := f.onlyRecord(t); rec.Status != tc.status {
				t.Errorf("record %s; want %s", rec.Status, tc.status)
			}
		})
	}
}

// TestSlowReconcileNotDoneJudgedWhenItAnswers: the reconcile function is
// asked an hour before the downstream's window ends and answers "not
// done" two hours later, after the window ended: the downstream it asked
// may have forgotten the operation key, so the answer is refused when it
// comes (ErrWindowPassed), nothing runs again and the record stays
// UNKNOWN. (On the code that judged the window before calling Reconcile,
// the record was released and the charge ran again.)
func TestSlowReconcileNotDoneJudgedWhenItAnswers(t *testing.T) {
	const window = 24 * time.Hour
	f := newFixture(t)
	c := call("k", "x")
	lambdaidem.Do(context.Background(), f.guard, c, chargeWithin(window))
	f.clock.Advance(window - time.Hour)
	c.Reconcile = func(context.Context, lambdaidem.Unknown) (string, bool, error) {
		f.clock.Advance(2 * time.Hour) // the downstream answers slowly
		return "", false, nil
	}
	reran := false
	_, err := lambdaidem.Do(context.Background(), f.guard, c, func(context.Context) (string, error) {
		reran = true
		return "charged again", nil
	})
	if !errors.Is(err, lambdaidem.ErrWindowPassed) || !errors.Is(err, lambdaidem.ErrOutcomeUnknown) || reran {
		t.Fatalf("= %v, reran %v; want ErrWindowPassed and ErrOutcomeUnknown, nothing run", err, reran)
	}
	if rec := f.onlyRecord(t); rec.Status != lambdaidem.StatusUnknown {
		t.Errorf("record %s; want UNKNOWN", rec.Status)
	}
}

// TestBeginExternalWithoutWindowNeverRefuses: BeginExternal without a
// window keeps the old behaviour (no bound: "not done" always
// redispatches), however late.
func TestBeginExternalWithoutWindowNeverRefuses(t *testing.T) {
	f := newFixture(t)
	c := call("k", "x")
	lambdaidem.Do(context.Background(), f.guard, c, chargeThenFail)
	if rec := f.onlyRecord(t); rec.DispatchWindow != 0 {
		t.Fatalf("window %v; want none", rec.DispatchWindow)
	}
	f.clock.Advance(365 * 24 * time.Hour)
	c.Reconcile = func(context.Context, lambdaidem.Unknown) (string, bool, error) { return "", false, nil }
	if _, err := lambdaidem.Do(context.Background(), f.guard, c, func(context.Context) (string, error) { return "again", nil }); err != nil {
		t.Fatal(err)
	}
}

// TestWindowPassedIsOneRule: the gate's predicate at the edge, the one rule
// the core and the outbox relay both ask.
func TestWindowPassedIsOneRule(t *testing.T) {
	first := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		window time.Duration
		now    time.Time
		passed bool
	}{
		{time.Hour, first.Add(time.Hour - time.Millisecond), false},
		{time.Hour, first.Add(time.Hour), true},
		{0, first.Add(1000 * time.Hour), false},
	} {
		if got := lambdaidem.WindowPassed(first, c.window, c.now); got != c.passed {
			t.Errorf("WindowPassed(+%v, %v) = %v", c.now.Sub(first), c.window, got)
		}
	}
	if lambdaidem.WindowPassed(time.Time{}, time.Hour, first) {
		t.Error("a message never dispatched has no window to pass")
	}
	margin := lambdaidem.WindowMargin(5*time.Second, 30*time.Second)
	if margin != 35*time.Second {
		t.Fatalf("WindowMargin = %v; want skew + the dispatch's time", margin)
	}
	for _, c := range []struct {
		now    time.Time
		window time.Duration
		lands  bool
	}{
		{first.Add(time.Hour - margin - time.Millisecond), time.Hour, true},
		{first.Add(time.Hour - margin), time.Hour, false},
		{first.Add(1000 * time.Hour), 0, true},
	} {
		if got := lambdaidem.WithinWindow(first, c.window, c.now, margin); got != c.lands {
			t.Errorf("WithinWindow(+%v, %v, margin %v) = %v", c.now.Sub(first), c.window, margin, got)
		}
	}
	if !lambdaidem.WithinWindow(time.Time{}, time.Hour, first, margin) {
		t.Error("a first dispatch is always within its window")
	}
}
