// Package storetest is a conformance suite for [lambdaidem.Store]
// implementations: one function, [Run], checks every case of the store
// contract against a store under test, the way testing/fstest checks an
// fs.FS. The in-memory store and the DynamoDB store both pass it.
package storetest

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/lambdaidem/lambdaidem/lambdaidem"
)

// Harness is what the suite needs of a store under test.
type Harness struct {
	// Store is the store under test, empty.
	Store lambdaidem.Store
	// Effect returns a business write, of a type Store commits, that
	// creates the item id.
	Effect func(id string) any
	// FailingEffect returns a business write whose condition fails (for
	// example a condition check on an item that does not exist).
	FailingEffect func(id string) any
	// Written reports whether the business item id exists.
	Written func(t testing.TB, id string) bool
}

// Run runs every case of the store contract, each on a fresh harness.
func Run(t *testing.T, newHarness func(t *testing.T) Harness) {
	cases := []struct {
		name string
		test func(t *testing.T, h Harness)
	}{
		{"ClaimAbsent", testClaimAbsent},
		{"ClaimLiveLeaseRefused", testClaimLiveLeaseRefused},
		{"ClaimLapsedLeaseTakesOver", testClaimLapsedLeaseTakesOver},
		{"CommitFencedOnToken", testCommitFencedOnToken},
		{"CommitWritesEffectsAtomically", testCommitWritesEffectsAtomically},
		{"StaleOwnerCannotCommit", testStaleOwnerCannotCommit},
		{"FailingEffectWritesNothing", testFailingEffectWritesNothing},
		{"CompletedBlocksUntilExpired", testCompletedBlocksUntilExpired},
		{"ExpiredIsAbsent", testExpiredIsAbsent},
		{"ReleaseFenced", testReleaseFenced},
		{"ReleaseKeepsCompleted", testReleaseKeepsCompleted},
		{"UnknownIsKeptAndResolvable", testUnknownIsKeptAndResolvable},
		{"ExternalEffectBlocksTakeover", testExternalEffectBlocksTakeover},
		{"RenewExtendsLease", testRenewExtendsLease},
		{"RenewFenced", testRenewFenced},
		{"RenewKeepsExternalMark", testRenewKeepsExternalMark},
		{"LateRenewalOfExternalRecord", testLateRenewalOfExternalRecord},
		{"LateRenewalAfterALaterOne", testLateRenewalAfterALaterOne},
		{"OptimisticCommitClaims", testOptimisticCommitClaims},
		{"RecommitReportsOwnCompletion", testRecommitReportsOwnCompletion},
		{"ConcurrentClaimsOneWinner", testConcurrentClaimsOneWinner},
		{"ConcurrentOptimisticOneWinner", testConcurrentOptimisticOneWinner},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { c.test(t, newHarness(t)) })
	}
}

// t0 is the suite's clock origin; stores compare only the times they are given.
var t0 = time.Now().Truncate(time.Millisecond)

const horizon = time.Hour

var keySeq struct {
	sync.Mutex
	n int
}

// newKey returns a record key no other case uses, so that a store backed by
// one shared table can run the suite.
func newKey() string {
	keySeq.Lock()
	defer keySeq.Unlock()
	keySeq.n++
	return lambdaidem.RecordKey("storetest", "", fmt.Sprintf("case-%d-%d", time.Now().UnixNano(), keySeq.n), "k")
}

func claimAt(key, token string, now time.Time) lambdaidem.Claim {
	return lambdaidem.Claim{Key: key, Token: token, Fingerprint: "fp", Now: now, LeaseUntil: now.Add(time.Minute), HoldUntil: now.Add(time.Minute), ExpiresAt: now.Add(horizon)}
}

func commitAt(key, token string, now time.Time, effects ...any) lambdaidem.Commit {
	return lambdaidem.Commit{Key: key, Token: token, Fingerprint: "fp", Outcome: []byte(`{"value":"` + token + `"}`), Now: now, ExpiresAt: now.Add(horizon), Attempts: 1, CreatedAt: now, Effects: effects}
}

func mustClaim(t *testing.T, h Harness, c lambdaidem.Claim) lambdaidem.Record {
	t.Helper()
	rec, ok, err := h.Store.Claim(context.Background(), c)
	if err != nil || !ok {
		t.Fatalf("Claim(%s) = %+v, %v, %v; want a claim", c.Token, rec, ok, err)
	}
	return rec
}

func mustCommit(t *testing.T, h Harness, c lambdaidem.Commit) lambdaidem.Record {
	t.Helper()
	rec, ok, err := h.Store.Commit(context.Background(), c)
	if err != nil || !ok {
		t.Fatalf("Commit(%s) = %+v, %v, %v; want a commit", c.Token, rec, ok, err)
	}
	return rec
}

func get(t *testing.T, h Harness, key string, now time.Time) lambdaidem.Record {
	t.Helper()
	rec, err := h.Store.Get(context.Background(), key, now)
	if err != nil {
		t.Fatalf("Get: %v", err)
	}
	return rec
}

func wantStatus(t *testing.T, rec lambdaidem.Record, status lambdaidem.Status, token string) {
	t.Helper()
	if rec.Status != status || rec.Token != token {
		t.Fatalf("record is %q owned by %q; want %q owned by %q", rec.Status, rec.Token, status, token)
	}
}

func sameTime(a, b time.Time) bool { return a.Sub(b).Abs() < time.Second }

func testClaimAbsent(t *testing.T, h Harness) {
	key := newKey()
	c := claimAt(key, "A", t0)
	rec := mustClaim(t, h, c)
	wantStatus(t, rec, lambdaidem.StatusInProgress, "A")
	if rec.Attempts != 1 || rec.Fingerprint != "fp" || !sameTime(rec.LeaseUntil, c.LeaseUntil) || !sameTime(rec.ExpiresAt, c.ExpiresAt) {
		t.Fatalf("claimed record = %+v; want attempt 1, fingerprint, lease and expiration as claimed", rec)
	}
	wantStatus(t, get(t, h, key, t0), lambdaidem.StatusInProgress, "A")
}

func testClaimLiveLeaseRefused(t *testing.T, h Harness) {
	key := newKey()
	mustClaim(t, h, claimAt(key, "A", t0))
	rec, ok, err := h.Store.Claim(context.Background(), claimAt(key, "B", t0.Add(59*time.Second)))
	if err != nil || ok {
		t.Fatalf("second Claim = %v, %v; want refused", ok, err)
	}
	wantStatus(t, rec, lambdaidem.StatusInProgress, "A")
}

func testClaimLapsedLeaseTakesOver(t *testing.T, h Harness) {
	key := newKey()
	mustClaim(t, h, claimAt(key, "A", t0))
	rec := mustClaim(t, h, claimAt(key, "B", t0.Add(2*time.Minute)))
	wantStatus(t, rec, lambdaidem.StatusInProgress, "B")
	if rec.Attempts != 2 {
		t.Errorf("takeover attempts = %d; want 2", rec.Attempts)
	}
	if !sameTime(rec.CreatedAt, t0) {
		t.Errorf("takeover created at %v; want the first claim's %v", rec.CreatedAt, t0)
	}
}

func testCommitFencedOnToken(t *testing.T, h Harness) {
	key := newKey()
	mustClaim(t, h, claimAt(key, "A", t0))
	cur, ok, err := h.Store.Commit(context.Background(), commitAt(key, "B", t0))
	if err != nil || ok {
		t.Fatalf("Commit with a foreign token = %v, %v; want refused", ok, err)
	}
	wantStatus(t, cur, lambdaidem.StatusInProgress, "A")
	rec := mustCommit(t, h, commitAt(key, "A", t0.Add(time.Second)))
	wantStatus(t, rec, lambdaidem.StatusCompleted, "A")
	got := get(t, h, key, t0.Add(time.Second))
	wantStatus(t, got, lambdaidem.StatusCompleted, "A")
	if string(got.Outcome) != `{"value":"A"}` || !sameTime(got.ExpiresAt, t0.Add(time.Second+horizon)) {
		t.Fatalf("completed record = %+v; want A's outcome, expiring at completion + horizon", got)
	}
}

func testCommitWritesEffectsAtomically(t *testing.T, h Harness) {
	key := newKey()
	mustClaim(t, h, claimAt(key, "A", t0))
	id1, id2 := key+"/1", key+"/2"
	mustCommit(t, h, commitAt(key, "A", t0, h.Effect(id1), h.Effect(id2)))
	if !h.Written(t, id1) || !h.Written(t, id2) {
		t.Fatal("committed effects are not written")
	}
}

func testStaleOwnerCannotCommit(t *testing.T, h Harness) {
	key := newKey()
	mustClaim(t, h, claimAt(key, "A", t0))
	mustClaim(t, h, claimAt(key, "B", t0.Add(2*time.Minute)))
	stale := key + "/A"
	cur, ok, err := h.Store.Commit(context.Background(), commitAt(key, "A", t0.Add(3*time.Minute), h.Effect(stale)))
	if err != nil || ok {
		t.Fatalf("stale Commit = %v, %v; want refused", ok, err)
	}
	wantStatus(t, cur, lambdaidem.StatusInProgress, "B")
	if h.Written(t, stale) {
		t.Fatal("the stale owner's effect was written")
	}
	if ok, err := h.Store.Release(context.Background(), lambdaidem.Fence{Key: key, Token: "A"}); err != nil || ok {
		t.Fatalf("stale Release = %v, %v; want refused", ok, err)
	}
	if ok, err := h.Store.MarkUnknown(context.Background(), lambdaidem.Fence{Key: key, Token: "A"}); err != nil || ok {
		t.Fatalf("stale MarkUnknown = %v, %v; want refused", ok, err)
	}
	wantStatus(t, get(t, h, key, t0.Add(3*time.Minute)), lambdaidem.StatusInProgress, "B")
}

func testFailingEffectWritesNothing(t *testing.T, h Harness) {
	key := newKey()
	mustClaim(t, h, claimAt(key, "A", t0))
	good := key + "/good"
	_, ok, err := h.Store.Commit(context.Background(), commitAt(key, "A", t0, h.Effect(good), h.FailingEffect(key+"/missing")))
	if ok || !errors.Is(err, lambdaidem.ErrEffectRejected) {
		t.Fatalf("Commit with a failing effect = %v, %v; want an error matching ErrEffectRejected", ok, err)
	}
	if h.Written(t, good) {
		t.Fatal("an effect of a failed commit was written")
	}
	wantStatus(t, get(t, h, key, t0), lambdaidem.StatusInProgress, "A")
}

func testCompletedBlocksUntilExpired(t *testing.T, h Harness) {
	key := newKey()
	mustClaim(t, h, claimAt(key, "A", t0))
	mustCommit(t, h, commitAt(key, "A", t0))
	cur, ok, err := h.Store.Claim(context.Background(), claimAt(key, "B", t0.Add(horizon-time.Second)))
	if err != nil || ok {
		t.Fatalf("Claim of a completed record = %v, %v; want refused", ok, err)
	}
	wantStatus(t, cur, lambdaidem.StatusCompleted, "A")
	rec := mustClaim(t, h, claimAt(key, "C", t0.Add(horizon+2*time.Second)))
	wantStatus(t, rec, lambdaidem.StatusInProgress, "C")
	if rec.Attempts != 1 {
		t.Errorf("a claim after expiry counts %d attempts; want a fresh 1", rec.Attempts)
	}
}

func testExpiredIsAbsent(t *testing.T, h Harness) {
	key := newKey()
	mustClaim(t, h, claimAt(key, "A", t0))
	mustCommit(t, h, commitAt(key, "A", t0))
	if rec := get(t, h, key, t0.Add(horizon+2*time.Second)); rec.Exists() {
		t.Fatalf("Get after expiration = %+v; want absent", rec)
	}
	cur, ok, err := h.Store.Commit(context.Background(), commitAt(key, "A", t0.Add(horizon+2*time.Second)))
	if err != nil || ok {
		t.Fatalf("recommit of an expired record = %v, %v; want refused", ok, err)
	}
	if cur.Live(t0.Add(horizon + 2*time.Second)) {
		t.Fatalf("refused commit reports a live record %+v; want absent or expired", cur)
	}
}

func testReleaseFenced(t *testing.T, h Harness) {
	key := newKey()
	mustClaim(t, h, claimAt(key, "A", t0))
	if ok, err := h.Store.Release(context.Background(), lambdaidem.Fence{Key: key, Token: "B"}); err != nil || ok {
		t.Fatalf("Release with a foreign token = %v, %v; want refused", ok, err)
	}
	if ok, err := h.Store.Release(context.Background(), lambdaidem.Fence{Key: key, Token: "A"}); err != nil || !ok {
		t.Fatalf("Release by the owner = %v, %v; want released", ok, err)
	}
	if rec := get(t, h, key, t0); rec.Exists() {
		t.Fatalf("record after release = %+v; want absent", rec)
	}
	mustClaim(t, h, claimAt(key, "C", t0))
}

func testReleaseKeepsCompleted(t *testing.T, h Harness) {
	key := newKey()
	mustClaim(t, h, claimAt(key, "A", t0))
	mustCommit(t, h, commitAt(key, "A", t0))
	if ok, err := h.Store.Release(context.Background(), lambdaidem.Fence{Key: key, Token: "A"}); err != nil || ok {
		t.Fatalf("Release of a completed record = %v, %v; want refused", ok, err)
	}
	if ok, err := h.Store.MarkUnknown(context.Background(), lambdaidem.Fence{Key: key, Token: "A"}); err != nil || ok {
		t.Fatalf("MarkUnknown of a completed record = %v, %v; want refused", ok, err)
	}
	wantStatus(t, get(t, h, key, t0), lambdaidem.StatusCompleted, "A")
}

func testUnknownIsKeptAndResolvable(t *testing.T, h Harness) {
	key := newKey()
	mustClaim(t, h, claimAt(key, "A", t0))
	if ok, err := h.Store.MarkUnknown(context.Background(), lambdaidem.Fence{Key: key, Token: "A"}); err != nil || !ok {
		t.Fatalf("MarkUnknown by the owner = %v, %v; want marked", ok, err)
	}
	later := t0.Add(10 * time.Minute) // long after the lease
	cur, ok, err := h.Store.Claim(context.Background(), claimAt(key, "B", later))
	if err != nil || ok {
		t.Fatalf("Claim of an unknown record = %v, %v; want refused", ok, err)
	}
	wantStatus(t, cur, lambdaidem.StatusUnknown, "A")
	// A reconciler that learned the effect happened completes it under A's token.
	rec := mustCommit(t, h, commitAt(key, "A", later))
	wantStatus(t, rec, lambdaidem.StatusCompleted, "A")

	// One that learned it did not happen releases it.
	key2 := newKey()
	mustClaim(t, h, claimAt(key2, "A", t0))
	if ok, err := h.Store.MarkUnknown(context.Background(), lambdaidem.Fence{Key: key2, Token: "A"}); err != nil || !ok {
		t.Fatalf("MarkUnknown = %v, %v", ok, err)
	}
	if ok, err := h.Store.Release(context.Background(), lambdaidem.Fence{Key: key2, Token: "A"}); err != nil || !ok {
		t.Fatalf("Release of an unknown record = %v, %v; want released", ok, err)
	}
	mustClaim(t, h, claimAt(key2, "B", later))
}

func testExternalEffectBlocksTakeover(t *testing.T, h Harness) {
	key := newKey()
	mustClaim(t, h, claimAt(key, "A", t0))
	if ok, err := h.Store.MarkExternal(context.Background(), lambdaidem.Fence{Key: key, Token: "B"}); err != nil || ok {
		t.Fatalf("MarkExternal with a foreign token = %v, %v; want refused", ok, err)
	}
	if ok, err := h.Store.MarkExternal(context.Background(), lambdaidem.Fence{Key: key, Token: "A"}); err != nil || !ok {
		t.Fatalf("MarkExternal by the owner = %v, %v; want marked", ok, err)
	}
	if rec := get(t, h, key, t0); !rec.External || rec.Status != lambdaidem.StatusInProgress {
		t.Fatalf("marked record = %+v; want in progress with External set", rec)
	}
	// Long after the lease: a claim must not take it over, nor an optimistic commit.
	later := t0.Add(10 * time.Minute)
	cur, ok, err := h.Store.Claim(context.Background(), claimAt(key, "B", later))
	if err != nil || ok {
		t.Fatalf("Claim of a lapsed record with an external effect = %v, %v; want refused", ok, err)
	}
	if cur.Token != "A" || !cur.External {
		t.Fatalf("refused claim reports %+v; want A's marked record", cur)
	}
	opt := commitAt(key, "C", later, h.Effect(key+"/C"))
	opt.Claim = true
	if _, ok, err := h.Store.Commit(context.Background(), opt); err != nil || ok {
		t.Fatalf("optimistic Commit over a marked record = %v, %v; want refused", ok, err)
	}
	if h.Written(t, key+"/C") {
		t.Fatal("the refused optimistic commit's effect was written")
	}
	// A reconciler resolves it under A's token; the completed record is unmarked.
	rec := mustCommit(t, h, commitAt(key, "A", later))
	wantStatus(t, rec, lambdaidem.StatusCompleted, "A")
	if got := get(t, h, key, later); got.External {
		t.Fatalf("completed record = %+v; want External cleared", got)
	}
	// A completed record cannot be marked.
	if ok, err := h.Store.MarkExternal(context.Background(), lambdaidem.Fence{Key: key, Token: "A"}); err != nil || ok {
		t.Fatalf("MarkExternal of a completed record = %v, %v; want refused", ok, err)
	}
}

func testOptimisticCommitClaims(t *testing.T, h Harness) {
	key := newKey()
	first := commitAt(key, "A", t0, h.Effect(key+"/A"))
	first.Claim = true
	wantStatus(t, mustCommit(t, h, first), lambdaidem.StatusCompleted, "A")
	second := commitAt(key, "B", t0, h.Effect(key+"/B"))
	second.Claim = true
	cur, ok, err := h.Store.Commit(context.Background(), second)
	if err != nil || ok {
		t.Fatalf("second optimistic Commit = %v, %v; want refused", ok, err)
	}
	wantStatus(t, cur, lambdaidem.StatusCompleted, "A")
	if !h.Written(t, key+"/A") || h.Written(t, key+"/B") {
		t.Fatal("want exactly the winner's effect written")
	}
	// An in-progress record with a lapsed lease does not block it.
	key2 := newKey()
	mustClaim(t, h, claimAt(key2, "A", t0))
	late := commitAt(key2, "B", t0.Add(2*time.Minute))
	late.Claim = true
	wantStatus(t, mustCommit(t, h, late), lambdaidem.StatusCompleted, "B")
}

func testRecommitReportsOwnCompletion(t *testing.T, h Harness) {
	// A commit whose response was lost is retried: the retry is refused,
	// and the record it reports shows the caller's own token.
	key := newKey()
	mustClaim(t, h, claimAt(key, "A", t0))
	mustCommit(t, h, commitAt(key, "A", t0))
	cur, ok, err := h.Store.Commit(context.Background(), commitAt(key, "A", t0))
	if err != nil {
		t.Fatalf("recommit: %v", err)
	}
	if !ok {
		wantStatus(t, cur, lambdaidem.StatusCompleted, "A")
	}
}

// contenders are how many synchronized callers race for one record.
const contenders = 20

// race runs try for tokens T0…T19 released together and returns the tokens
// for which try reported a win.
func race(try func(token string) bool) []string {
	var wg sync.WaitGroup
	start := make(chan struct{})
	wins := make(chan string, contenders)
	for i := range contenders {
		wg.Go(func() {
			token := fmt.Sprintf("T%d", i)
			<-start
			if try(token) {
				wins <- token
			}
		})
	}
	close(start)
	wg.Wait()
	close(wins)
	var winners []string
	for w := range wins {
		winners = append(winners, w)
	}
	return winners
}

func testConcurrentClaimsOneWinner(t *testing.T, h Harness) {
	key := newKey()
	winners := race(func(token string) bool {
		_, ok, err := h.Store.Claim(context.Background(), claimAt(key, token, t0))
		if err != nil {
			t.Errorf("Claim: %v", err)
		}
		return ok
	})
	if len(winners) != 1 {
		t.Fatalf("%d contenders claimed the record (%v); want exactly 1", len(winners), winners)
	}
	wantStatus(t, get(t, h, key, t0), lambdaidem.StatusInProgress, winners[0])
}

func testConcurrentOptimisticOneWinner(t *testing.T, h Harness) {
	key := newKey()
	winners := race(func(token string) bool {
		c := commitAt(key, token, t0, h.Effect(key+"/"+token))
		c.Claim = true
		cur, ok, err := h.Store.Commit(context.Background(), c)
		switch {
		case err != nil:
			t.Errorf("Commit: %v", err)
		case !ok && cur.Status != lambdaidem.StatusCompleted:
			t.Errorf("refused Commit reports %+v; want the winner's completed record", cur)
		}
		return ok
	})
	if len(winners) != 1 {
		t.Fatalf("%d optimistic commits won (%v); want exactly 1", len(winners), winners)
	}
	for i := range contenders {
		token := fmt.Sprintf("T%d", i)
		if written := h.Written(t, key+"/"+token); written != (token == winners[0]) {
			t.Errorf("effect of %s written = %v; want only the winner's", token, written)
		}
	}
}
