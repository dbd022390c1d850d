package storetest

import (
	"context"
	"testing"
	"time"

	"github.com/lambdaidem/lambdaidem/lambdaidem"
)

// renewAt renews key for token at now: a lease of two minutes from now,
// and a TTL an hour past the claim's.
func renewAt(key, token string, now time.Time) lambdaidem.Renewal {
	return lambdaidem.Renewal{Key: key, Token: token, Now: now, LeaseUntil: now.Add(2 * time.Minute), ExpiresAt: t0.Add(2 * horizon)}
}

func mustRenew(t *testing.T, h Harness, r lambdaidem.Renewal) {
	t.Helper()
	if ok, err := h.Store.Renew(context.Background(), r); err != nil || !ok {
		t.Fatalf("Renew(%s at %v) = %v, %v; want renewed", r.Token, r.Now.Sub(t0), ok, err)
	}
}

// testRenewExtendsLease: a renewal moves the lease, the TTL and RenewedAt,
// so that a claim after the first lease but within the renewed one is
// refused; a takeover after the renewed lease keeps the renewal time (the
// former owner may still be running).
func testRenewExtendsLease(t *testing.T, h Harness) {
	key := newKey()
	mustClaim(t, h, claimAt(key, "A", t0)) // lease until t0+1m
	r := renewAt(key, "A", t0.Add(40*time.Second))
	mustRenew(t, h, r)
	rec := get(t, h, key, r.Now)
	wantStatus(t, rec, lambdaidem.StatusInProgress, "A")
	if !sameTime(rec.LeaseUntil, r.LeaseUntil) || !sameTime(rec.ExpiresAt, r.ExpiresAt) || !sameTime(rec.RenewedAt, r.Now) || rec.Attempts != 1 || rec.Fingerprint != "fp" {
		t.Fatalf("renewed record = %+v; want lease %v, expiration %v, renewed at %v, the rest kept", rec, r.LeaseUntil, r.ExpiresAt, r.Now)
	}
	// Past the first lease, within the renewed one: refused.
	cur, ok, err := h.Store.Claim(context.Background(), claimAt(key, "B", t0.Add(90*time.Second)))
	if err != nil || ok {
		t.Fatalf("Claim within the renewed lease = %v, %v; want refused", ok, err)
	}
	wantStatus(t, cur, lambdaidem.StatusInProgress, "A")
	// The TTL moved too: the record is live past the claim's expiration.
	if got := get(t, h, key, t0.Add(horizon+time.Minute)); !got.Exists() {
		t.Fatal("the renewed record expired at the claim's TTL; want the renewed TTL")
	}
	// Past the renewed lease: a takeover by an owner that renews (its hold
	// runs for its MaxRunTime) and has not renewed yet. The former owner's
	// renewal is not the new owner's: it is cleared.
	b := claimAt(key, "B", r.LeaseUntil.Add(time.Second))
	b.Renews, b.HoldUntil = true, b.Now.Add(30*time.Minute)
	rec = mustClaim(t, h, b)
	wantStatus(t, rec, lambdaidem.StatusInProgress, "B")
	if got := get(t, h, key, b.Now); !got.RenewedAt.IsZero() {
		t.Fatalf("taken-over record renewed at %v; want no renewal (the former owner's cleared)", got.RenewedAt.Sub(t0))
	}
	// B returns an ambiguous error before any renewal: UNKNOWN, reconciled
	// as soon as its lease ends (lambdaidem.OwnerMayRun holds an UNKNOWN
	// record only with a renewal on record), not held for B's MaxRunTime
	// on the strength of A's renewal.
	if ok, err := h.Store.MarkUnknown(context.Background(), lambdaidem.Fence{Key: key, Token: "B"}); err != nil || !ok {
		t.Fatalf("MarkUnknown(B) = %v, %v", ok, err)
	}
	after := b.LeaseUntil.Add(time.Second)
	if v := lambdaidem.Judge(get(t, h, key, after), after, 30*time.Minute); v != lambdaidem.VerdictReconcile {
		t.Fatalf("UNKNOWN record of a taken-over owner that never renewed, after its lease: %v; want %v", v, lambdaidem.VerdictReconcile)
	}
}

// testRenewFenced: only the owner of a live, in-progress lease renews; a
// refused renewal changes nothing.
func testRenewFenced(t *testing.T, h Harness) {
	ctx := context.Background()
	cases := []struct {
		name  string
		setup func(t *testing.T, key string) // after A's claim at t0
		renew lambdaidem.Renewal             // for key "KEY"
		want  lambdaidem.Status              // the record's status afterwards ("" for absent)
		owner string
	}{
		{"another attempt's token", func(*testing.T, string) {}, renewAt("KEY", "B", t0.Add(30*time.Second)), lambdaidem.StatusInProgress, "A"},
		{"lease already lapsed", func(*testing.T, string) {}, renewAt("KEY", "A", t0.Add(61*time.Second)), lambdaidem.StatusInProgress, "A"},
		{"taken over", func(t *testing.T, key string) { mustClaim(t, h, claimAt(key, "B", t0.Add(2*time.Minute))) },
			renewAt("KEY", "A", t0.Add(2*time.Minute)), lambdaidem.StatusInProgress, "B"},
		{"completed", func(t *testing.T, key string) { mustCommit(t, h, commitAt(key, "A", t0.Add(time.Second))) },
			renewAt("KEY", "A", t0.Add(30*time.Second)), lambdaidem.StatusCompleted, "A"},
		{"unknown", func(t *testing.T, key string) {
			if ok, err := h.Store.MarkUnknown(ctx, lambdaidem.Fence{Key: key, Token: "A"}); err != nil || !ok {
				t.Fatalf("MarkUnknown = %v, %v", ok, err)
			}
		}, renewAt("KEY", "A", t0.Add(30*time.Second)), lambdaidem.StatusUnknown, "A"},
		{"released", func(t *testing.T, key string) {
			if ok, err := h.Store.Release(ctx, lambdaidem.Fence{Key: key, Token: "A"}); err != nil || !ok {
				t.Fatalf("Release = %v, %v", ok, err)
			}
		}, renewAt("KEY", "A", t0.Add(30*time.Second)), "", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			key := newKey()
			mustClaim(t, h, claimAt(key, "A", t0))
			c.setup(t, key)
			before := get(t, h, key, c.renew.Now)
			r := c.renew
			r.Key = key
			if ok, err := h.Store.Renew(ctx, r); err != nil || ok {
				t.Fatalf("Renew = %v, %v; want refused", ok, err)
			}
			after := get(t, h, key, c.renew.Now)
			if after.Status != c.want || after.Token != c.owner {
				t.Fatalf("record after the refused renewal is %q owned by %q; want %q owned by %q", after.Status, after.Token, c.want, c.owner)
			}
			if !after.LeaseUntil.Equal(before.LeaseUntil) || !after.RenewedAt.Equal(before.RenewedAt) || !after.ExpiresAt.Equal(before.ExpiresAt) {
				t.Fatalf("the refused renewal changed the record:\nbefore %+v\nafter  %+v", before, after)
			}
		})
	}
}

// testRenewKeepsExternalMark: a renewal keeps the external-effect mark, so
// that after the renewed lease lapses the record is still never taken
// over, and a record marked UNKNOWN keeps its renewal time.
func testRenewKeepsExternalMark(t *testing.T, h Harness) {
	ctx := context.Background()
	key := newKey()
	mustClaim(t, h, claimAt(key, "A", t0))
	if ok, err := h.Store.MarkExternal(ctx, lambdaidem.Fence{Key: key, Token: "A"}); err != nil || !ok {
		t.Fatalf("MarkExternal = %v, %v", ok, err)
	}
	r := renewAt(key, "A", t0.Add(50*time.Second))
	r.External = true // the renewer knows the attempt marked it
	mustRenew(t, h, r)
	if rec := get(t, h, key, r.Now); !rec.External {
		t.Fatalf("renewed record = %+v; want the external mark kept", rec)
	}
	if _, ok, err := h.Store.Claim(ctx, claimAt(key, "B", r.LeaseUntil.Add(time.Minute))); err != nil || ok {
		t.Fatalf("Claim after the renewed lease of a marked record = %v, %v; want refused", ok, err)
	}
	if ok, err := h.Store.MarkUnknown(ctx, lambdaidem.Fence{Key: key, Token: "A"}); err != nil || !ok {
		t.Fatalf("MarkUnknown = %v, %v", ok, err)
	}
	if rec := get(t, h, key, r.Now); rec.Status != lambdaidem.StatusUnknown || !sameTime(rec.RenewedAt, r.Now) {
		t.Fatalf("unknown record = %+v; want UNKNOWN, renewed at %v", rec, r.Now)
	}
}

// testLateRenewalOfExternalRecord: a renewal sent before the attempt's
// external mark but applied after it (DynamoDB applies a request when it
// arrives, also one whose client gave up waiting) is refused, and the
// record keeps no expiration: otherwise TTL deletion would remove the
// unresolved external record and a retry would call the provider again
// (found by the model, model/record.pml, finding F1).
func testLateRenewalOfExternalRecord(t *testing.T, h Harness) {
	ctx := context.Background()
	key := newKey()
	mustClaim(t, h, claimAt(key, "A", t0))
	late := renewAt(key, "A", t0.Add(40*time.Second)) // built before the mark: External false
	if ok, err := h.Store.MarkExternal(ctx, lambdaidem.Fence{Key: key, Token: "A"}); err != nil || !ok {
		t.Fatalf("MarkExternal = %v, %v", ok, err)
	}
	marked := get(t, h, key, late.Now)
	if ok, err := h.Store.Renew(ctx, late); err != nil || ok {
		t.Fatalf("a renewal built before the external mark, applied after it = %v, %v; want refused", ok, err)
	}
	rec := get(t, h, key, late.Now)
	if !rec.External || !sameTime(rec.ExpiresAt, marked.ExpiresAt) || !sameTime(rec.LeaseUntil, marked.LeaseUntil) {
		t.Fatalf("record after the late renewal = %+v; want it as marked (external, expiration %v)", rec, marked.ExpiresAt)
	}
}

// testLateRenewalAfterALaterOne: a renewal applied after a later one of
// the same attempt (its client gave up, and DynamoDB applied it when it
// arrived: the spin model's counterexample F4) is refused, so that it
// never moves the owner's last renewal, lease and hold back: a reader
// would otherwise end the hold before the owner has been silent for
// MaxRunTime since the renewal that got through. Once with the later
// renewal's lease further out, once with both capped at the same lease
// (the attempt's MaxRunTime), where only the renewal time tells them
// apart.
func testLateRenewalAfterALaterOne(t *testing.T, h Harness) {
	ctx := context.Background()
	for _, c := range []struct {
		name   string
		capped bool
	}{{"later lease", false}, {"both leases capped at MaxRunTime", true}} {
		t.Run(c.name, func(t *testing.T) {
			key := newKey()
			mustClaim(t, h, claimAt(key, "A", t0))
			early := renewAt(key, "A", t0.Add(40*time.Second))
			early.HoldUntil = early.Now.Add(30 * time.Minute)
			later := renewAt(key, "A", t0.Add(50*time.Second))
			later.HoldUntil = later.Now.Add(30 * time.Minute)
			if c.capped {
				early.LeaseUntil, later.LeaseUntil = t0.Add(90*time.Second), t0.Add(90*time.Second)
			}
			mustRenew(t, h, later)
			if ok, err := h.Store.Renew(ctx, early); err != nil || ok {
				t.Fatalf("a renewal from %v applied after one from %v = %v, %v; want refused", early.Now.Sub(t0), later.Now.Sub(t0), ok, err)
			}
			rec := get(t, h, key, later.Now)
			if !sameTime(rec.RenewedAt, later.Now) || !sameTime(rec.LeaseUntil, later.LeaseUntil) || !sameTime(rec.HoldUntil, later.HoldUntil) {
				t.Fatalf("record after the late renewal: renewed %v, lease %v, hold %v; want the later renewal's %v, %v, %v",
					rec.RenewedAt, rec.LeaseUntil, rec.HoldUntil, later.Now, later.LeaseUntil, later.HoldUntil)
			}
		})
	}
}
