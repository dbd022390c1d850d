package lambdaidem_test

import (
	"context"
	"errors"
	"testing"

	"github.com/lambdaidem/lambdaidem/lambdaidem"
	"github.com/lambdaidem/lambdaidem/lambdaidem/memstore"
	"github.com/lambdaidem/lambdaidem/lambdaidem/outbox"
)

// TestReconcileDoneCommitsWhatItStages: the UNKNOWN attempt's staged order
// and message died with it; the reconcile function that finds the charge
// done stages them again through its context, and they commit with the
// outcome in the one commit: the record COMPLETED, the order written, the
// message in the outbox under the operation's own id (the record's
// creation time and position 0). (Before, Stage inside Reconcile failed
// with ErrNoAttempt: "done" committed the outcome alone.)
func TestReconcileDoneCommitsWhatItStages(t *testing.T) {
	f := newFixture(t)
	c := call("k", "x")
	lambdaidem.Do(context.Background(), f.guard, c, chargeThenFail)
	rec := f.onlyRecord(t)
	if rec.Status != lambdaidem.StatusUnknown {
		t.Fatalf("record %s; want UNKNOWN", rec.Status)
	}
	var id string
	c.Reconcile = func(ctx context.Context, u lambdaidem.Unknown) (string, bool, error) {
		if err := memstore.Stage(ctx, memstore.Put{Table: "orders", Key: "o-1", Value: []byte("paid"), IfAbsent: true}); err != nil {
			return "", false, err
		}
		var err error
		if id, err = outbox.Stage(ctx, outbox.Item{Target: "ledger", Body: "charged"}); err != nil {
			return "", false, err
		}
		a, _ := lambdaidem.AttemptFrom(ctx)
		if err := a.BeginExternal(ctx); err == nil {
			t.Error("a reconcile function began an external effect")
		}
		return "charged (reconciled)", true, nil
	}
	out, err := lambdaidem.Do(context.Background(), f.guard, c, mustNotRun(t))
	if err != nil || out != "charged (reconciled)" {
		t.Fatalf("= %q, %v", out, err)
	}
	if rec := f.onlyRecord(t); rec.Status != lambdaidem.StatusCompleted {
		t.Fatalf("record %s; want COMPLETED", rec.Status)
	}
	if v, ok := f.store.Item("orders", "o-1"); !ok || string(v) != "paid" {
		t.Errorf("the order the reconcile staged was not committed (%q, %v)", v, ok)
	}
	entries := f.store.Outbox()
	if len(entries) != 1 || len(entries[0].Messages) != 1 || entries[0].Messages[0].ID != id ||
		id != outbox.ID(lambdaidem.OperationKey(rec.Key), rec.CreatedAt, 0) {
		t.Errorf("outbox %+v; want the one message %s under the operation's id", entries, id)
	}
}

// onlyUnknownKey returns the key of the store's one UNKNOWN record.
func (f *fixture) onlyUnknownKey(t *testing.T) string {
	t.Helper()
	var keys []string
	for k, rec := range f.store.Records() {
		if rec.Status == lambdaidem.StatusUnknown {
			keys = append(keys, k)
		}
	}
	if len(keys) != 1 {
		t.Fatalf("%d UNKNOWN records; want 1", len(keys))
	}
	return keys[0]
}

// TestReconcileStagedWritesAreAtomic: a reconcile whose staged write's
// condition fails commits nothing, neither the outcome nor the message:
// the caller gets the refusal and the record stays UNKNOWN. A reconcile
// that says "not done" has its staged writes dropped with the release.
func TestReconcileStagedWritesAreAtomic(t *testing.T) {
	t.Run("refused", func(t *testing.T) {
		f := newFixture(t)
		s := f.store
		if _, err := lambdaidem.Do(context.Background(), f.guard, call("other", "y"), func(ctx context.Context) (string, error) {
			return "ok", memstore.Stage(ctx, memstore.Put{Table: "orders", Key: "o-1", Value: []byte("someone else's")})
		}); err != nil {
			t.Fatal(err)
		}
		c := call("k", "x")
		lambdaidem.Do(context.Background(), f.guard, c, chargeThenFail)
		c.Reconcile = func(ctx context.Context, u lambdaidem.Unknown) (string, bool, error) {
			if err := memstore.Stage(ctx, memstore.Put{Table: "orders", Key: "o-1", Value: []byte("paid"), IfAbsent: true}); err != nil {
				return "", false, err
			}
			_, err := outbox.Stage(ctx, outbox.Item{Target: "ledger", Body: "charged"})
			return "charged", true, err
		}
		_, err := lambdaidem.Do(context.Background(), f.guard, c, mustNotRun(t))
		if !errors.Is(err, lambdaidem.ErrConditionFailed) {
			t.Fatalf("= %v; want ErrConditionFailed", err)
		}
		if rec := s.Records()[f.onlyUnknownKey(t)]; rec.Status != lambdaidem.StatusUnknown {
			t.Errorf("record %s; want UNKNOWN", rec.Status)
		}
		if len(s.Outbox()) != 0 {
			t.Error("the message committed without the outcome")
		}
	})
	t.Run("not done", func(t *testing.T) {
		f := newFixture(t)
		c := call("k", "x")
		lambdaidem.Do(context.Background(), f.guard, c, chargeThenFail)
		c.Reconcile = func(ctx context.Context, u lambdaidem.Unknown) (string, bool, error) {
			_, err := outbox.Stage(ctx, outbox.Item{Target: "ledger", Body: "charged"})
			return "", false, err
		}
		if _, err := lambdaidem.Do(context.Background(), f.guard, c, func(context.Context) (string, error) { return "charged again", nil }); err != nil {
			t.Fatal(err)
		}
		if n := len(f.store.Outbox()); n != 0 {
			t.Errorf("%d outbox entries; a 'not done' reconcile's message was committed", n)
		}
	})
}
