package lambdaidem_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"

	"github.com/lambdaidem/lambdaidem/lambdaidem"
	"github.com/lambdaidem/lambdaidem/lambdaidem/memstore"
)

// captureDefault points slog.Default() at a buffer for the test (not
// parallel: the default logger is process-wide).
func captureDefault(t *testing.T) *bytes.Buffer {
	t.Helper()
	var buf bytes.Buffer
	old := slog.Default()
	slog.SetDefault(slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug})))
	t.Cleanup(func() { slog.SetDefault(old) })
	return &buf
}

// By default a Guard logs its failures, and only its failures, to
// slog.Default(), even one set after the Guard was built.
func TestFailuresAreLoggedByDefault(t *testing.T) {
	failCommit := true
	store := memstore.New(func(o *memstore.Options) {
		o.Fault = func(op, key string) error {
			if op == "commit" && failCommit {
				return lambdaidem.ErrStoreUnavailable
			}
			return nil
		}
	})
	g, err := lambdaidem.New(store)
	if err != nil {
		t.Fatal(err)
	}
	buf := captureDefault(t)
	w, _ := lambdaidem.NewWrapper(g, lambdaidem.Spec[order, receipt]{Operation: "Pay", Key: func(_ context.Context, o order) (string, error) { return o.ID, nil }})
	h := w.Wrap(func(ctx context.Context, o order) (receipt, error) {
		if o.Total < 0 {
			return receipt{}, errors.New("negative total")
		}
		return receipt{OrderID: o.ID}, nil
	})

	if _, err := h(context.Background(), order{ID: "a"}); err == nil {
		t.Fatal("commit against a failing store succeeded")
	}
	if !strings.Contains(buf.String(), "level=ERROR") || !strings.Contains(buf.String(), "commit failed") {
		t.Fatalf("default log = %q; want the commit failure at level ERROR", buf)
	}
	buf.Reset()
	failCommit = false
	if _, err := h(context.Background(), order{ID: "b", Total: -1}); err == nil {
		t.Fatal("handler error vanished")
	}
	if !strings.Contains(buf.String(), "level=ERROR") || !strings.Contains(buf.String(), "negative total") {
		t.Fatalf("default log = %q; want the handler failure at level ERROR", buf)
	}
	buf.Reset()
	for range 2 {
		if _, err := h(context.Background(), order{ID: "c"}); err != nil {
			t.Fatal(err)
		}
	}
	if buf.Len() != 0 {
		t.Fatalf("default log = %q after a run and a replay; want nothing below level Error", buf)
	}
}

func TestADiscardLoggerSilencesTheGuard(t *testing.T) {
	buf := captureDefault(t)
	store := memstore.New(func(o *memstore.Options) {
		o.Fault = func(op, key string) error { return lambdaidem.ErrStoreUnavailable }
	})
	g, _ := lambdaidem.New(store, func(o *lambdaidem.Options) { o.Logger = slog.New(slog.DiscardHandler) })
	if _, err := lambdaidem.Do(context.Background(), g, call("k", "p"), func(context.Context) (string, error) { return "", nil }); err == nil {
		t.Fatal("claim against a failing store succeeded")
	}
	if buf.Len() != 0 {
		t.Fatalf("default log = %q; want nothing from a silenced Guard", buf)
	}
}

// A handler that fails after BeginExternal leaves its record UNKNOWN: the
// Error line says so, and what resolves it, instead of "nothing committed,
// claim released", which would tell on-call that a retry simply reruns.
func TestHandlerFailureAfterBeginExternalSaysUnknown(t *testing.T) {
	store := memstore.New()
	g, err := lambdaidem.New(store)
	if err != nil {
		t.Fatal(err)
	}
	buf := captureDefault(t)
	w, _ := lambdaidem.NewWrapper(g, lambdaidem.Spec[order, receipt]{Operation: "Pay", Key: func(_ context.Context, o order) (string, error) { return o.ID, nil }})
	h := w.Wrap(func(ctx context.Context, o order) (receipt, error) {
		if o.Total > 0 {
			a, _ := lambdaidem.AttemptFrom(ctx)
			if err := a.BeginExternal(ctx); err != nil {
				return receipt{}, err
			}
		}
		return receipt{}, errors.New("card network timed out")
	})
	if _, err := h(context.Background(), order{ID: "a", Total: 5}); err == nil {
		t.Fatal("handler error vanished")
	}
	line := buf.String()
	for _, want := range []string{"level=ERROR", "kept UNKNOWN", "Spec.Reconcile", "lambdaidem resolve"} {
		if !strings.Contains(line, want) {
			t.Errorf("log %q lacks %q", line, want)
		}
	}
	if strings.Contains(line, "released") {
		t.Errorf("log %q says the claim was released; the record is UNKNOWN", line)
	}
	for _, r := range store.Records() {
		if r.Status != lambdaidem.StatusUnknown {
			t.Fatalf("record %+v; want it UNKNOWN", r)
		}
	}
	buf.Reset()
	if _, err := h(context.Background(), order{ID: "b"}); err == nil {
		t.Fatal("handler error vanished")
	}
	if line := buf.String(); !strings.Contains(line, "claim released") || strings.Contains(line, "UNKNOWN") {
		t.Errorf("log %q; want the claim released, no UNKNOWN", line)
	}
}
