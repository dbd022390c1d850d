package lambdaidem_test

import (
	"testing"
	"time"

	"github.com/lambdaidem/lambdaidem/lambdaidem"
)

// TestJudge is the gate as a table: for each record, what a caller may do
// with it now. window is the reader's MaxRunTime (10 min), used only for
// records written without a hold.
func TestJudge(t *testing.T) {
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	const window = 10 * time.Minute
	ago := func(d time.Duration) time.Time { return now.Add(-d) }
	in := func(d time.Duration) time.Time { return now.Add(d) }
	running := func(r lambdaidem.Record) lambdaidem.Record {
		r.Key, r.Token = "ns#k", "owner"
		if r.Status == "" {
			r.Status = lambdaidem.StatusInProgress
		}
		return r
	}
	cases := []struct {
		name string
		rec  lambdaidem.Record
		want lambdaidem.Verdict
	}{
		{"absent", lambdaidem.Record{}, lambdaidem.VerdictAbsent},
		{"completed, live", running(lambdaidem.Record{Status: lambdaidem.StatusCompleted, ExpiresAt: in(time.Hour)}), lambdaidem.VerdictReplay},
		{"completed, expired", running(lambdaidem.Record{Status: lambdaidem.StatusCompleted, ExpiresAt: ago(time.Second)}), lambdaidem.VerdictExpired},

		{"in progress, lease runs", running(lambdaidem.Record{LeaseUntil: in(time.Minute), HoldUntil: in(time.Minute), ExpiresAt: in(time.Hour)}), lambdaidem.VerdictHeld},
		{"in progress, lease runs, past its expiration", running(lambdaidem.Record{LeaseUntil: in(time.Minute), HoldUntil: in(time.Minute), ExpiresAt: ago(time.Second)}), lambdaidem.VerdictHeld},
		{"in progress, lapsed, owner does not renew", running(lambdaidem.Record{LeaseUntil: ago(time.Second), HoldUntil: ago(time.Second), ExpiresAt: in(time.Hour)}), lambdaidem.VerdictTakeOver},
		{"in progress, lapsed, not renewing, expired", running(lambdaidem.Record{LeaseUntil: ago(time.Minute), HoldUntil: ago(time.Minute), ExpiresAt: ago(time.Second)}), lambdaidem.VerdictExpired},
		{"in progress, lapsed, owner renews, hold runs", running(lambdaidem.Record{Renews: true, LeaseUntil: ago(time.Minute), RenewedAt: ago(2 * time.Minute), HoldUntil: in(8 * time.Minute), ExpiresAt: in(time.Hour)}), lambdaidem.VerdictHeld},
		{"in progress, renewing owner silent past its hold", running(lambdaidem.Record{Renews: true, LeaseUntil: ago(20 * time.Minute), RenewedAt: ago(21 * time.Minute), HoldUntil: ago(11 * time.Minute), ExpiresAt: in(time.Hour)}), lambdaidem.VerdictTakeOver},
		{"in progress, held past its expiration (written before ExpiryFor)", running(lambdaidem.Record{Renews: true, LeaseUntil: ago(time.Minute), HoldUntil: in(time.Minute), ExpiresAt: ago(time.Second)}), lambdaidem.VerdictHeld},
		{"external, lease runs", running(lambdaidem.Record{External: true, LeaseUntil: in(time.Minute), HoldUntil: in(time.Minute)}), lambdaidem.VerdictHeld},
		{"external, lapsed, not renewing", running(lambdaidem.Record{External: true, LeaseUntil: ago(time.Second), HoldUntil: ago(time.Second)}), lambdaidem.VerdictReconcile},
		{"external, lapsed, renewed within its hold (defect 1)", running(lambdaidem.Record{External: true, Renews: true, LeaseUntil: ago(time.Second), RenewedAt: ago(12 * time.Second), HoldUntil: in(9 * time.Minute)}), lambdaidem.VerdictHeld},
		{"external, lapsed, past an old expiration, held (defect 2)", running(lambdaidem.Record{External: true, Renews: true, LeaseUntil: ago(time.Second), RenewedAt: ago(12 * time.Second), HoldUntil: in(9 * time.Minute), ExpiresAt: ago(time.Second)}), lambdaidem.VerdictHeld},
		{"external, past an old expiration, not held: never expires", running(lambdaidem.Record{External: true, LeaseUntil: ago(time.Hour), HoldUntil: ago(time.Hour), ExpiresAt: ago(time.Minute)}), lambdaidem.VerdictReconcile},

		// An UNKNOWN record is written when its owner's handler returned,
		// and a handler that has returned has no call of its own in flight
		// (docs/guarantees.md; its context ends: TestAttemptContextEndsWhenTheHandlerReturns),
		// so it is held only with a renewal on record (defect 3), not for
		// the hold a renewing owner wrote at claim (model finding F3, by
		// decision: that would make every UNKNOWN record in a container or
		// on Managed Instances wait MaxRunTime for its reconcile).
		{"unknown, owner does not renew", running(lambdaidem.Record{Status: lambdaidem.StatusUnknown, LeaseUntil: in(time.Minute), HoldUntil: in(time.Minute)}), lambdaidem.VerdictReconcile},
		{"unknown, owner renews but never renewed, within its claim's hold: not held (F3)", running(lambdaidem.Record{Status: lambdaidem.StatusUnknown, Renews: true, LeaseUntil: in(time.Minute), HoldUntil: in(time.Minute + window)}), lambdaidem.VerdictReconcile},
		{"unknown, renewed within its hold (defect 3)", running(lambdaidem.Record{Status: lambdaidem.StatusUnknown, Renews: true, LeaseUntil: in(time.Second), RenewedAt: ago(time.Minute), HoldUntil: in(9 * time.Minute)}), lambdaidem.VerdictHeld},
		{"unknown, renewed long ago", running(lambdaidem.Record{Status: lambdaidem.StatusUnknown, Renews: true, LeaseUntil: ago(time.Hour), RenewedAt: ago(time.Hour), HoldUntil: ago(50 * time.Minute)}), lambdaidem.VerdictReconcile},
		{"unknown with an old expiration, passed: never expires (defect 7)", running(lambdaidem.Record{Status: lambdaidem.StatusUnknown, LeaseUntil: ago(time.Hour), ExpiresAt: ago(time.Minute)}), lambdaidem.VerdictReconcile},

		// Written before Renews and HoldUntil were recorded: the owner is
		// assumed to renew, with the reader's window.
		{"legacy in progress, lapsed, never renewed, within the window of its lease end", running(lambdaidem.Record{LeaseUntil: ago(time.Minute), ExpiresAt: in(time.Hour)}), lambdaidem.VerdictHeld},
		{"legacy in progress, lapsed past the window", running(lambdaidem.Record{LeaseUntil: ago(11 * time.Minute), ExpiresAt: in(time.Hour)}), lambdaidem.VerdictTakeOver},
		{"legacy external, renewed 12 s ago, past its expiration", running(lambdaidem.Record{External: true, LeaseUntil: ago(time.Second), RenewedAt: ago(12 * time.Second), ExpiresAt: ago(time.Second)}), lambdaidem.VerdictHeld},
		{"legacy unknown, never renewed, within the window of its lease end", running(lambdaidem.Record{Status: lambdaidem.StatusUnknown, LeaseUntil: ago(time.Minute), ExpiresAt: in(time.Hour)}), lambdaidem.VerdictReconcile},
		{"legacy unknown, renewed within the window", running(lambdaidem.Record{Status: lambdaidem.StatusUnknown, LeaseUntil: ago(time.Minute), RenewedAt: ago(2 * time.Minute), ExpiresAt: in(time.Hour)}), lambdaidem.VerdictHeld},
		{"legacy unknown, renewed before the window, expired", running(lambdaidem.Record{Status: lambdaidem.StatusUnknown, LeaseUntil: ago(time.Hour), RenewedAt: ago(time.Hour), ExpiresAt: ago(time.Minute)}), lambdaidem.VerdictReconcile},

		{"unknown status", running(lambdaidem.Record{Status: "PAUSED", ExpiresAt: ago(time.Hour)}), lambdaidem.VerdictHeld},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := lambdaidem.Judge(c.rec, now, window)
			if got != c.want {
				t.Fatalf("Judge = %v; want %v (hold until %v)", got, c.want, lambdaidem.HoldUntil(c.rec, window))
			}
			if may := lambdaidem.OwnerMayRun(c.rec, now, window); may != (got == lambdaidem.VerdictHeld && c.rec.Status != "PAUSED") {
				t.Fatalf("OwnerMayRun = %v with verdict %v", may, got)
			}
		})
	}
}

// TestOwnerWritesKeepTheGate: what an owner writes at claim and renewal
// never lets its record expire while it may run: expiration ≥ hold + 1 s,
// and the hold is the lease end (no renewal) or the last sign of life plus
// MaxRunTime plus LeaseMargin (the clock-skew slack: model finding F2, see
// TestHoldCoversClockSkew in dev/integrationtest/dynamostore), never before
// the lease end.
func TestOwnerWritesKeepTheGate(t *testing.T) {
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	lease := now.Add(time.Minute)
	const margin = 5 * time.Second
	for _, c := range []struct {
		name   string
		renews bool
		last   time.Time
		maxRun time.Duration
		want   time.Time
	}{
		{"standard Lambda: the lease", false, lease, time.Hour, lease},
		{"renews, at claim: lease end + MaxRunTime + LeaseMargin", true, lease, 30 * time.Minute, lease.Add(30*time.Minute + margin)},
		{"renews, at a renewal: renewal + MaxRunTime + LeaseMargin", true, now, 30 * time.Minute, now.Add(30*time.Minute + margin)},
		{"MaxRunTime and margin shorter than the lease: the lease", true, now, time.Second, lease},
	} {
		t.Run(c.name, func(t *testing.T) {
			hold := lambdaidem.OwnerHold(lease, c.last, c.renews, c.maxRun, margin)
			if !hold.Equal(c.want) {
				t.Fatalf("OwnerHold = %v; want %v", hold, c.want)
			}
			for _, horizon := range []time.Duration{time.Second, time.Minute, 24 * time.Hour} {
				exp := lambdaidem.ExpiryFor(now, hold, horizon)
				if exp.Before(hold.Add(time.Second)) || exp.Before(now.Add(horizon)) {
					t.Fatalf("ExpiryFor(horizon %v) = %v; want ≥ hold + 1 s (%v) and ≥ now + horizon", horizon, exp, hold.Add(time.Second))
				}
			}
		})
	}
}
