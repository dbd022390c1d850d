package lambdaidem_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/lambdaidem/lambdaidem/lambdaidem"
	"github.com/lambdaidem/lambdaidem/lambdaidem/memstore"
)

// lostClaimStore applies every claim and then reports an outage, as a
// claim whose response was lost and whose every SDK retry met a 5xx does.
type lostClaimStore struct {
	*memstore.Store
	released []lambdaidem.Fence
}

func (s *lostClaimStore) Claim(ctx context.Context, c lambdaidem.Claim) (lambdaidem.Record, bool, error) {
	if _, _, err := s.Store.Claim(ctx, c); err != nil {
		return lambdaidem.Record{}, false, err
	}
	return lambdaidem.Record{}, false, fmt.Errorf("claim answer lost, then 5xx: %w", lambdaidem.ErrStoreUnavailable)
}

func (s *lostClaimStore) Release(ctx context.Context, f lambdaidem.Fence) (bool, error) {
	s.released = append(s.released, f)
	return s.Store.Release(ctx, f)
}

// An errored claim may have been applied: the core releases it, fenced on
// the token it claimed with, so that the retry runs instead of waiting out
// a lease nobody holds.
func TestErroredClaimIsReleased(t *testing.T) {
	mem := memstore.New()
	lost := &lostClaimStore{Store: mem}
	g, err := lambdaidem.New(lost, func(o *lambdaidem.Options) { o.NewToken = func() string { return "tok-1" } })
	if err != nil {
		t.Fatal(err)
	}
	ran := 0
	_, err = lambdaidem.Do(context.Background(), g, call("k", "x"), func(ctx context.Context) (string, error) {
		ran++
		return "paid", nil
	})
	if !errors.Is(err, lambdaidem.ErrStoreUnavailable) || ran != 0 {
		t.Fatalf("Do = %v after %d runs; want ErrStoreUnavailable, handler not run", err, ran)
	}
	if len(lost.released) != 1 || lost.released[0].Token != "tok-1" {
		t.Fatalf("released %+v; want one release fenced on the claim's token", lost.released)
	}
	if recs := mem.Records(); len(recs) != 0 {
		t.Fatalf("records after the errored claim: %v; want none (released)", recs)
	}

	// The retry, on a store that answers again, runs the handler.
	g2, _ := lambdaidem.New(mem)
	out, err := lambdaidem.Do(context.Background(), g2, call("k", "x"), func(ctx context.Context) (string, error) {
		ran++
		return "paid", nil
	})
	if err != nil || out != "paid" || ran != 1 {
		t.Fatalf("retry = %q, %v after %d runs; want it to run once", out, err, ran)
	}
}

// conflictStore answers every claim with a conflict that outlasted the
// store's retries.
type conflictStore struct{ *memstore.Store }

func (s conflictStore) Claim(context.Context, lambdaidem.Claim) (lambdaidem.Record, bool, error) {
	return lambdaidem.Record{}, false, fmt.Errorf("transaction conflict after 9 tries: %w", lambdaidem.ErrInProgress)
}

// A claim that keeps meeting another attempt's write is "in progress": a
// *RecordError the adapters answer with 409 and Retry-After, never a store
// failure (500/503).
func TestClaimConflictIsInProgress(t *testing.T) {
	g, err := lambdaidem.New(conflictStore{memstore.New()})
	if err != nil {
		t.Fatal(err)
	}
	_, err = lambdaidem.Do(context.Background(), g, call("k", "x"), func(ctx context.Context) (string, error) {
		t.Fatal("the handler ran without a claim")
		return "", nil
	})
	var rec *lambdaidem.RecordError
	var store *lambdaidem.StoreError
	if !errors.As(err, &rec) || !errors.Is(err, lambdaidem.ErrInProgress) || errors.As(err, &store) {
		t.Fatalf("Do = %#v; want a *RecordError matching ErrInProgress, not a *StoreError", err)
	}
}

// secondsStore keeps expirations in whole seconds, as DynamoDB's TTL
// attribute does.
type secondsStore struct{ *memstore.Store }

func (s secondsStore) Commit(ctx context.Context, c lambdaidem.Commit) (lambdaidem.Record, bool, error) {
	c.ExpiresAt = time.Unix(c.ExpiresAt.Unix(), 0)
	return s.Store.Commit(ctx, c)
}

// The local cache never replays a record the store holds as expired: its
// entry ends with the stored expiration (whole seconds), not at the exact
// instant the commit asked for.
func TestCacheNeverOutlivesStoredExpiration(t *testing.T) {
	for name, store := range map[string]lambdaidem.Store{
		"whole seconds":           secondsStore{memstore.New()},
		"exact, record not known": &noRecordStore{memstore.New()},
	} {
		t.Run(name, func(t *testing.T) {
			clk := newClock()
			clk.Advance(700 * time.Millisecond) // commit at hh:mm:ss.7
			g, err := lambdaidem.New(store, func(o *lambdaidem.Options) {
				o.Now = clk.Now
				o.CacheSize = 8
				o.RetryHorizon = time.Hour
			})
			if err != nil {
				t.Fatal(err)
			}
			runs := 0
			pay := func(ctx context.Context) (string, error) {
				runs++
				return fmt.Sprintf("run %d", runs), nil
			}
			if _, err := lambdaidem.Do(context.Background(), g, call("k", "x"), pay); err != nil {
				t.Fatal(err)
			}
			clk.Advance(time.Hour - 200*time.Millisecond) // past the stored second, before the asked instant
			out, err := lambdaidem.Do(context.Background(), g, call("k", "x"), pay)
			if err != nil || out != "run 2" {
				t.Fatalf("after the stored expiration: %q, %v; want a new run, not a cached replay", out, err)
			}
		})
	}
}

// noRecordStore commits but returns no record, as a store may after a
// lost response it recognized.
type noRecordStore struct{ *memstore.Store }

func (s *noRecordStore) Commit(ctx context.Context, c lambdaidem.Commit) (lambdaidem.Record, bool, error) {
	c.ExpiresAt = time.Unix(c.ExpiresAt.Unix(), 0)
	_, ok, err := s.Store.Commit(ctx, c)
	return lambdaidem.Record{}, ok, err
}

// expiredWinnerStore fences every commit out with a completed record of the
// same request that has already expired.
type expiredWinnerStore struct {
	*memstore.Store
	now func() time.Time
}

func (s expiredWinnerStore) Commit(ctx context.Context, c lambdaidem.Commit) (lambdaidem.Record, bool, error) {
	return lambdaidem.Record{Key: c.Key, Status: lambdaidem.StatusCompleted, Fingerprint: c.Fingerprint, Token: "other",
		Outcome: []byte(`{"value":"theirs"}`), ExpiresAt: s.now().Add(-time.Second)}, false, nil
}

// A fenced-out attempt replays the record in its way only while it is
// live: an expired record is absent, and its outcome is no answer.
func TestFencedOutReplaysOnlyLiveRecord(t *testing.T) {
	clk := newClock()
	g, err := lambdaidem.New(expiredWinnerStore{memstore.New(), clk.Now}, func(o *lambdaidem.Options) { o.Now = clk.Now })
	if err != nil {
		t.Fatal(err)
	}
	out, err := lambdaidem.Do(context.Background(), g, call("k", "x"), func(ctx context.Context) (string, error) {
		return "mine", nil
	})
	if out == "theirs" || !errors.Is(err, lambdaidem.ErrLeaseLost) {
		t.Fatalf("fenced out by an expired record: %q, %v; want ErrLeaseLost, not its outcome", out, err)
	}
}
