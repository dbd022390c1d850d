package main

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/lambdaidem/lambdaidem/lambdaidem"
)

// A charge whose provider deduplicates for a short window is left
// UNKNOWN; once the window has passed, a reconcile's "not done" is refused
// (the record stays UNKNOWN) and show says why and what to do. The
// operator may still decide: resolve --not-done releases it.
func TestShowSaysWhyAWindowedRecordWaits(t *testing.T) {
	w := newWorld(t)
	_, err := lambdaidem.Do(context.Background(), w.guard, payCall("charge-windowed"), func(ctx context.Context) (string, error) {
		a, _ := lambdaidem.AttemptFrom(ctx)
		if err := a.BeginExternalWithin(ctx, 20*time.Millisecond); err != nil {
			return "", err
		}
		return "", errProviderTimeout
	})
	if !errors.Is(err, errProviderTimeout) {
		t.Fatalf("Do = %v", err)
	}
	time.Sleep(50 * time.Millisecond)
	c := payCall("charge-windowed")
	c.Reconcile = func(context.Context, lambdaidem.Unknown) (string, bool, error) { return "", false, nil }
	if _, err := lambdaidem.Do(context.Background(), w.guard, c, func(context.Context) (string, error) {
		t.Error("redispatched past the downstream's window")
		return "", nil
	}); !errors.Is(err, lambdaidem.ErrWindowPassed) {
		t.Fatalf("reconcile not done past the window = %v; want ErrWindowPassed", err)
	}
	key := recordKey("charge-windowed")
	w.cli(t, "", "show", key).expect(t, exitOK, "the downstream's deduplication window has passed since the first dispatch", "")
	w.cli(t, "", "show", key).expect(t, exitOK, "deduplicates for 20ms: PASSED", "")
	w.cli(t, "", "resolve", "--not-done", key).expect(t, exitOK, "as not done: released", "")
}
