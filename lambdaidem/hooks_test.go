package lambdaidem_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"github.com/lambdaidem/lambdaidem/lambdaidem"
)

func TestHooksAndLogsObserveEveryPath(t *testing.T) {
	var mu sync.Mutex
	var seen []string
	record := func(what string) func(context.Context, lambdaidem.Event) {
		return func(_ context.Context, e lambdaidem.Event) {
			mu.Lock()
			defer mu.Unlock()
			seen = append(seen, what+" "+e.Operation+" "+string(e.Status))
		}
	}
	var logs bytes.Buffer
	f := newFixture(t, func(o *lambdaidem.Options) {
		o.Hooks = lambdaidem.Hooks{
			OnClaim:  record("claim"),
			OnReplay: record("replay"),
			OnConflict: func(ctx context.Context, e lambdaidem.Event, err error) {
				if !errors.Is(err, lambdaidem.ErrKeyReused) {
					t.Errorf("conflict hook got %v", err)
				}
				record("conflict")(ctx, e)
			},
		}
		o.Logger = slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	})
	const rawKey = "customer-secret-key-123"
	h := func(ctx context.Context) (string, error) { return "ok", nil }
	lambdaidem.Do(context.Background(), f.guard, call(rawKey, "a"), h)
	lambdaidem.Do(context.Background(), f.guard, call(rawKey, "a"), h)
	lambdaidem.Do(context.Background(), f.guard, call(rawKey, "b"), h)

	want := []string{"claim Pay INPROGRESS", "replay Pay COMPLETED", "conflict Pay COMPLETED"}
	if strings.Join(seen, "; ") != strings.Join(want, "; ") {
		t.Fatalf("hooks saw %q; want %q", seen, want)
	}
	out := logs.String()
	if !strings.Contains(out, "replayed") || !strings.Contains(out, "refused") {
		t.Fatalf("logs lack the replay and the refusal:\n%s", out)
	}
	if strings.Contains(out, rawKey) {
		t.Fatalf("logs reveal the raw idempotency key:\n%s", out)
	}
}
