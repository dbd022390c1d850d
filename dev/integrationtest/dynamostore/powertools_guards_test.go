package dynamostore_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/lambdaidem/lambdaidem/lambdaidem"
)

// The behavioural tests of the cutover window's guards that make mutate
// (dev/mutate/mutants.txt, the SHADOW_* mutants) found untested.

// Powertools completes a record with an update that sets its status,
// expiration and data and leaves the claim's in_progress_expiration in
// place, long passed: a live COMPLETED record with a lapsed lease is
// replayed, never taken. Only an INPROGRESS record is free at its lapsed
// lease (mutant SHADOW_CLAIM_INPROGRESS: the shadow overwrote the old
// answer and the operation ran again).
func TestPowertoolsCompletedRecordKeepsItsClaimLease(t *testing.T) {
	for _, mode := range modes {
		t.Run(mode.String(), func(t *testing.T) {
			clk := newClock()
			e := newEnv(t, windowOpts(t0.Add(24*time.Hour)))
			g := e.guard(t, clk, func(o *lambdaidem.Options) { o.Mode = mode })
			now := clk.Now()
			e.putItem(t, ptItem(t, "kept", 10, "COMPLETED", now.Add(time.Hour), now.Add(-10*time.Minute), `"old-kept"`))
			got, err := lambdaidem.Do(cutoverCtx(t, e.store, "kept", 10), g, call("kept"), func(ctx context.Context) (string, error) {
				return "new-kept", lambdaidem.Stage(ctx, e.order("kept"))
			})
			if err != nil || got != "old-kept" || e.written(t, "kept") {
				t.Errorf("COMPLETED Powertools record with its claim's lease passed: %q, %v, written %v; want its response replayed, no write", got, err, e.written(t, "kept"))
			}
			if it := e.item(t, e.table, ptKey(t, "kept")); sattr(it, "status") != "COMPLETED" || sattr(it, "data") != `"old-kept"` {
				t.Errorf("Powertools record after the request: %v; want it unchanged", it)
			}
		})
	}
}

// An operation whose external call may have happened (BeginExternal, then
// the handler failed: UNKNOWN) holds its shadow in progress with no lease
// until 2100; its reconcile answering "not done" runs it again, which
// claims the key over its own held shadow (the shadow names this record),
// and the rerun's answer lands on both (claim-first: BeginExternal needs
// it). Mutant SHADOW_CLAIM_OWN: the own shadow refused the claim and
// answered "in progress" until 2100.
func TestPowertoolsRedispatchTakesItsOwnHeldShadow(t *testing.T) {
	clk := newClock()
	e := newEnv(t, windowOpts(t0.Add(24*time.Hour)))
	g := e.guard(t, clk)
	lost := errors.New("provider timed out")
	_, err := lambdaidem.Do(cutoverCtx(t, e.store, "u-1", 10), g, call("u-1"), func(ctx context.Context) (string, error) {
		a, _ := lambdaidem.AttemptFrom(ctx)
		if err := a.BeginExternal(ctx); err != nil {
			return "", err
		}
		return "", lost
	})
	if !errors.Is(err, lost) {
		t.Fatalf("first attempt = %v; want its error", err)
	}
	if held := e.item(t, e.table, ptKey(t, "u-1")); sattr(held, "status") != "INPROGRESS" || num(held, "in_progress_expiration") != "" {
		t.Fatalf("shadow of the UNKNOWN record: %v; want held in progress without a lease", held)
	}
	clk.Advance(time.Second)
	c := call("u-1")
	c.Reconcile = func(context.Context, lambdaidem.Unknown) (string, bool, error) { return "", false, nil }
	got, err := lambdaidem.Do(cutoverCtx(t, e.store, "u-1", 10), g, c, func(ctx context.Context) (string, error) {
		return "again", lambdaidem.Stage(ctx, e.order("u-1"))
	})
	if err != nil || got != "again" || !e.written(t, "u-1") {
		t.Fatalf("reconciled \"not done\": %q, %v, written %v; want the rerun's answer", got, err, e.written(t, "u-1"))
	}
	if sh := e.item(t, e.table, ptKey(t, "u-1")); sattr(sh, "status") != "COMPLETED" || sattr(sh, "data") != `"again"` {
		t.Errorf("shadow after the rerun: %v; want COMPLETED with its answer", sh)
	}
}

// With a retry horizon shorter than the run, the record's expiration is
// the hold's end (lambdaidem.ExpiryFor) and each renewal moves it: the
// shadow's expiration must follow, or Powertools finds the key expired
// (its own claim condition) while the owner, renewed, runs on. Mutant
// SHADOW_RENEW_EXPIRATION: the renewal moved the shadow's lease but left
// its expiration at the claim's.
func TestPowertoolsRenewalMovesTheShadowsExpiration(t *testing.T) {
	e := newEnv(t, windowOpts(t0.Add(24*time.Hour)))
	ctx := cutoverCtx(t, e.store, "short", 10)
	const shortHorizon = 10 * time.Second
	hold := t0.Add(time.Minute)
	c := lambdaidem.Claim{Key: recordKey("short"), Token: "tok-short", Fingerprint: "fp", Now: t0,
		LeaseUntil: hold, HoldUntil: hold, ExpiresAt: lambdaidem.ExpiryFor(t0, hold, shortHorizon)}
	if _, ok, err := e.store.Claim(ctx, c); err != nil || !ok {
		t.Fatalf("Claim = %v, %v", ok, err)
	}
	later := t0.Add(40 * time.Second)
	renewed := later.Add(time.Minute)
	if ok, err := e.store.Renew(ctx, lambdaidem.Renewal{Key: c.Key, Token: c.Token, Now: later,
		LeaseUntil: renewed, HoldUntil: renewed, ExpiresAt: lambdaidem.ExpiryFor(later, renewed, 0)}); !ok || err != nil {
		t.Fatalf("Renew = %v, %v", ok, err)
	}
	// Past the claim's expiration, within the renewed hold.
	pnow := c.ExpiresAt.Add(10 * time.Second)
	var ccf *types.ConditionalCheckFailedException
	if err := e.powertoolsClaim(t, "short", pnow); !errors.As(err, &ccf) {
		t.Errorf("Powertools claim at %v, the owner renewed until %v: %v; want refused (the shadow: %v)", pnow, renewed, err, e.item(t, e.table, ptKey(t, "short")))
	}
}

// Two lambdaidem operations the old function keyed alike: the first
// outlives its hold, the second takes the Powertools key once the first's
// shadow lapsed, and commits. The first's late commit, fenced on its own
// shadow (its record was never taken over), is then refused with none of
// its writes: the Powertools key holds the second's answer, one order in
// all. Mutant SHADOW_FENCE_TOKEN: the fence asked only for a shadow, any
// shadow, and the first's commit overwrote the second's: both orders.
func TestPowertoolsLateCommitOverAnotherShadow(t *testing.T) {
	clk := newClock()
	e := newEnv(t, windowOpts(t0.Add(24*time.Hour)))
	g := e.guard(t, clk)
	var gotB string
	var errB error
	gotA, errA := lambdaidem.Do(cutoverCtx(t, e.store, "o-z", 10), g, call("a"), func(ctx context.Context) (string, error) {
		clk.Advance(2 * time.Hour) // past the first's lease, hold and the window's skew
		gotB, errB = lambdaidem.Do(cutoverCtx(t, e.store, "o-z", 10), g, call("b"), func(ctx context.Context) (string, error) {
			return "new-b", lambdaidem.Stage(ctx, e.order("b"))
		})
		return "new-a", lambdaidem.Stage(ctx, e.order("a"))
	})
	if errB != nil || gotB != "new-b" || !e.written(t, "b") {
		t.Fatalf("second operation: %q, %v, written %v; want its run committed", gotB, errB, e.written(t, "b"))
	}
	if errA == nil || e.written(t, "a") || e.orderCount(t) != 1 {
		t.Errorf("first operation's late commit: %q, %v, written %v, %d orders; want it refused, none of its writes, one order", gotA, errA, e.written(t, "a"), e.orderCount(t))
	}
	if sh := e.item(t, e.table, ptKey(t, "o-z")); sattr(sh, "data") != `"new-b"` || sattr(sh, "lambdaidem_shadow_of") != recordKey("b") {
		t.Errorf("the Powertools key after both: %v; want the second's COMPLETED shadow", sh)
	}
}

// An INPROGRESS Powertools record with no in_progress_expiration (written
// by a Powertools version before that attribute, or a held shadow of
// another lambdaidem operation) is in progress until its expiration:
// Powertools' own claim waits that long, so a request meets ErrInProgress
// with that lease (its Retry-After), and runs once it passed (and the skew
// with it). Mutant POWERTOOLS_HELD_NO_LEASE: the lease read as the missing
// attribute's zero (1970); the request was still refused, but its error
// carried no lease, so a caller was told to retry every second for an hour.
func TestPowertoolsRecordWithoutALeaseHoldsUntilItsExpiration(t *testing.T) {
	for _, mode := range modes {
		t.Run(mode.String(), func(t *testing.T) {
			clk := newClock()
			e := newEnv(t, windowOpts(t0.Add(24*time.Hour)))
			g := e.guard(t, clk, func(o *lambdaidem.Options) { o.Mode = mode })
			expiration := clk.Now().Add(time.Hour).Truncate(time.Second)
			e.putItem(t, ptItem(t, "held", 10, "INPROGRESS", expiration, time.Time{}, ""))
			runs := 0
			handler := func(ctx context.Context) (string, error) {
				runs++
				return "new-held", lambdaidem.Stage(ctx, e.order("held"))
			}
			_, err := lambdaidem.Do(cutoverCtx(t, e.store, "held", 10), g, call("held"), handler)
			var re *lambdaidem.RecordError
			if !errors.As(err, &re) || !errors.Is(err, lambdaidem.ErrInProgress) || !re.LeaseUntil.Equal(expiration) {
				t.Fatalf("INPROGRESS Powertools record without a lease: %v; want ErrInProgress with the lease at its expiration %v", err, expiration)
			}
			if e.written(t, "held") || (mode == lambdaidem.ClaimFirst && runs != 0) {
				t.Errorf("in progress: ran %d, written %v; want no write (claim-first: no run)", runs, e.written(t, "held"))
			}
			if it := e.item(t, e.table, ptKey(t, "held")); sattr(it, "status") != "INPROGRESS" || it["in_progress_expiration"] != nil {
				t.Errorf("Powertools record after the request: %v; want it unchanged", it)
			}

			clk.Advance(time.Hour + time.Minute)
			runs = 0
			if got, err := lambdaidem.Do(cutoverCtx(t, e.store, "held", 10), g, call("held"), handler); err != nil || got != "new-held" || runs != 1 || !e.written(t, "held") {
				t.Errorf("past its expiration: %q, %v, ran %d; want one run", got, err, runs)
			}
		})
	}
}
