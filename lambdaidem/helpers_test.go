package lambdaidem_test

import (
	"context"
	"errors"
	"fmt"
	"github.com/lambdaidem/lambdaidem/internal/testclock"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lambdaidem/lambdaidem/lambdaidem"
	"github.com/lambdaidem/lambdaidem/lambdaidem/memstore"
)

func newClock() *testclock.Clock {
	return testclock.New(time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC))
}

// tokens is a deterministic token source for the Options.NewToken seam.
type tokens struct{ n atomic.Int64 }

func (s *tokens) Next() string { return fmt.Sprintf("token-%d", s.n.Add(1)) }

// fixture is a Guard over a memstore with a manual clock.
type fixture struct {
	store *memstore.Store
	clock *testclock.Clock
	guard *lambdaidem.Guard
}

func newFixture(t *testing.T, optFns ...func(*lambdaidem.Options)) *fixture {
	t.Helper()
	return newFixtureWith(t, memstore.New(), optFns...)
}

func newFixtureWith(t *testing.T, s *memstore.Store, optFns ...func(*lambdaidem.Options)) *fixture {
	t.Helper()
	f := &fixture{store: s, clock: newClock()}
	var toks tokens
	base := func(o *lambdaidem.Options) {
		o.Now = f.clock.Now
		o.After = f.clock.After
		o.NewToken = toks.Next
		o.PollInterval = time.Millisecond
		// The fixture stands for standard Lambda, which stops a handler at
		// its deadline; tests of renewal set RenewAlways.
		o.Renew = lambdaidem.RenewNever
	}
	g, err := lambdaidem.New(f.store, append([]func(*lambdaidem.Options){base}, optFns...)...)
	if err != nil {
		t.Fatal(err)
	}
	f.guard = g
	return f
}

// call is a Call for the "Pay" operation with the given key and payload.
func call(key, payload string) lambdaidem.Call[string] {
	fp, _ := lambdaidem.Fingerprint(payload)
	return lambdaidem.Call[string]{Operation: "Pay", Key: key, Fingerprint: fp}
}

// onlyRecord returns the store's single record.
func (f *fixture) onlyRecord(t *testing.T) lambdaidem.Record {
	t.Helper()
	recs := f.store.Records()
	if len(recs) != 1 {
		t.Fatalf("store holds %d records; want 1", len(recs))
	}
	for _, r := range recs {
		return r
	}
	panic("unreachable")
}

func (f *fixture) noRecords(t *testing.T) {
	t.Helper()
	if recs := f.store.Records(); len(recs) != 0 {
		t.Fatalf("store holds %v; want no record", recs)
	}
}

// stagePayment stages the business item for key and returns an outcome.
func stagePayment(ctx context.Context, id string) (string, error) {
	if err := memstore.Stage(ctx, memstore.Put{Table: "payments", Key: id, Value: []byte(id)}); err != nil {
		return "", err
	}
	return "paid " + id, nil
}

var errDeclined = errors.New("card declined")

// declinedError is a handler error type that says it is terminal.
type declinedError struct{ reason string }

func (e *declinedError) Error() string  { return "declined: " + e.reason }
func (e *declinedError) Terminal() bool { return true }
