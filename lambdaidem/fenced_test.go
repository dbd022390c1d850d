package lambdaidem_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/lambdaidem/lambdaidem/lambdaidem"
)

// TestFencedOutCommitComparesIntent: an owner stalls in its handler past
// its lease (its process froze, or ignored its deadline); a call with the
// same key and another payload takes the record over (a claim does not
// compare fingerprints: nothing was stored) and commits its own outcome.
// The stalled owner's commit is fenced out and finds a live COMPLETED
// record: it must not replay an outcome stored for another intent
// (property (c) of model/record.pml), but answer ErrKeyReused. make
// mutate's SAME_INTENT_FENCED; with both outcomes the same bytes, the
// stored record is not the owner's own lost commit either (ownLostCommit
// compares the token too: OWN_LOST_COMMIT_TOKEN).
func TestFencedOutCommitComparesIntent(t *testing.T) {
	for _, same := range []bool{false, true} {
		t.Run(map[bool]string{false: "different outcomes", true: "the same outcome bytes"}[same], func(t *testing.T) {
			fencedOutByAnotherIntent(t, same)
		})
	}
}

func fencedOutByAnotherIntent(t *testing.T, sameOutcome bool) {
	outcome := func(ctx context.Context, id string) (string, error) {
		out, err := stagePayment(ctx, id)
		if sameOutcome {
			out = "paid"
		}
		return out, err
	}
	f := newFixture(t, func(o *lambdaidem.Options) { o.Lease = 10 * time.Second })
	entered, release := make(chan struct{}), make(chan struct{})
	type result struct {
		out string
		err error
	}
	owner := make(chan result, 1)
	go func() {
		out, err := lambdaidem.Do(context.Background(), f.guard, call("k", "pay 10 EUR"), func(ctx context.Context) (string, error) {
			close(entered)
			<-release
			return outcome(ctx, "k/10")
		})
		owner <- result{out, err}
	}()
	<-entered
	f.clock.Advance(time.Minute) // the lease (and the hold of an owner that does not renew) ended

	out, err := lambdaidem.Do(context.Background(), f.guard, call("k", "pay 20 EUR"), func(ctx context.Context) (string, error) {
		return outcome(ctx, "k/20")
	})
	if err != nil || (out != "paid k/20" && out != "paid") {
		t.Fatalf("the other intent's call = %q, %v; want it to take the lapsed record over and commit", out, err)
	}
	close(release)
	got := <-owner
	if !errors.Is(got.err, lambdaidem.ErrKeyReused) {
		t.Fatalf("the fenced-out owner = %q, %v; want ErrKeyReused, never the other intent's outcome", got.out, got.err)
	}
	if _, ok := f.store.Item("payments", "k/10"); ok {
		t.Fatal("the fenced-out owner's staged write committed")
	}
}
