package dynamostore_test

import (
	"testing"
	"time"

	"github.com/lambdaidem/lambdaidem/lambdaidem"
)

// The cutover model's finding C2 (model/cutover.pml; the old behaviour is
// its mutant FENCED_FOLLOW in model/cutover.sh): a renewing owner's renewal
// applies to its record, its shadow's follow is delayed (the SDK's retries
// of a throttled UpdateItem) past the shadow's old in_progress_expiration,
// and a Powertools instance claims the key there. The follow is then
// refused by shadowFenceCondition, which followShadow treated as no error
// before the fix: Renew reported the lease renewed, and the owner's
// BeginExternal (MarkExternal, whose follow was refused too) succeeded, so
// the external call ran beside the Powertools instance's effect. Both must
// fail while the Powertools key holds another record.
// The store sees the same items whether the renewal's record write came
// before the Powertools claim or after it, so the test sends the
// Powertools claim first.
func TestPowertoolsShadowTakenBeforeTheFollow(t *testing.T) {
	e := newEnv(t, windowOpts(t0.Add(24*time.Hour)))
	ctx := cutoverCtx(t, e.store, "c2", 10)
	c := claimOf(recordKey("c2"), "tok-c2")
	if _, ok, err := e.store.Claim(ctx, c); err != nil || !ok {
		t.Fatalf("Claim = %v, %v", ok, err)
	}
	// Powertools' claim once the shadow's lease (the claim's hold) lapsed.
	pnow := c.HoldUntil.Add(30 * time.Second)
	if err := e.powertoolsClaim(t, "c2", pnow); err != nil {
		t.Fatalf("Powertools could not claim after the shadow lapsed: %v", err)
	}
	later := t0.Add(40 * time.Second) // the renewal, sent before the hold
	ok, err := e.store.Renew(ctx, lambdaidem.Renewal{Key: c.Key, Token: c.Token, Now: later,
		LeaseUntil: later.Add(time.Minute), HoldUntil: later.Add(time.Minute), ExpiresAt: later.Add(horizon)})
	if ok && err == nil {
		t.Errorf("Renew = true, nil while Powertools holds the key: the owner runs on beside a Powertools instance")
	}
	ok, err = e.store.MarkExternal(ctx, lambdaidem.Fence{Key: c.Key, Token: c.Token, Now: later.Add(time.Second)})
	if ok && err == nil {
		t.Errorf("MarkExternal = true, nil while Powertools holds the key: BeginExternal lets the external call run beside the Powertools instance's effect")
	}
}
