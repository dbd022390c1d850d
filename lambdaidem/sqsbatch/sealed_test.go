package sqsbatch_test

import (
	"log/slog"
	"slices"
	"strings"
	"testing"

	"github.com/lambdaidem/lambdaidem/lambdaidem"
	"github.com/lambdaidem/lambdaidem/lambdaidem/memstore"
	"github.com/lambdaidem/lambdaidem/lambdaidem/seal"
	"github.com/lambdaidem/lambdaidem/lambdaidem/seal/sealtest"
	"github.com/lambdaidem/lambdaidem/lambdaidem/sqsbatch"
)

// A redelivered message whose stored, sealed outcome the key service will
// not open is a batch item failure (SQS delivers it again; the handler does
// not run again), logged at Warn while the key service is throttled and at
// Error, naming the refusal, while the key is refused. Once the key
// service answers, the redelivery completes without running.
func TestSealedOutcomeTheKeyServiceCannotOpen(t *testing.T) {
	for _, c := range []struct {
		fail  error
		level string
	}{
		{sealtest.Throttled("kms:Decrypt"), "WARN"},
		{sealtest.Denied("kms:Decrypt"), "ERROR"},
	} {
		keys := sealtest.New()
		store := memstore.New()
		var logs syncBuffer
		h := newOrders()
		ev := orderBatch(t, 1)
		first := newSealedSetup(t, store, keys, h, &logs)
		if resp := first.invoke(t, ev); len(resp.BatchItemFailures) != 0 {
			t.Fatalf("first delivery failed: %v", resp.BatchItemFailures)
		}
		keys.Fail(sealtest.Decrypt, c.fail)
		cold := newSealedSetup(t, store, keys, h, &logs)
		if got, want := failedIDs(cold.invoke(t, ev)), ids(ev, 0); !slices.Equal(got, want) {
			t.Fatalf("%v: failures %v; want the message redelivered", c.fail, got)
		}
		var line string
		for _, l := range strings.Split(logs.String(), "\n") {
			if strings.Contains(l, "cannot be opened") && strings.Contains(l, "sqsbatch") {
				line = l
			}
		}
		if !strings.Contains(line, `"level":"`+c.level+`"`) {
			t.Errorf("%v: log line %q; want level %s", c.fail, line, c.level)
		}
		keys.Fail(sealtest.Decrypt, nil)
		if resp := cold.invoke(t, ev); len(resp.BatchItemFailures) != 0 || h.total() != 1 {
			t.Fatalf("once the key service answers: failures %v, %d runs; want none and 1", resp.BatchItemFailures, h.total())
		}
	}
}

// newSealedSetup is a batch handler over store with a Sealer of its own
// (a process) over keys, logging JSON lines to logs.
func newSealedSetup(t *testing.T, store *memstore.Store, keys seal.KeyService, h *orders, logs *syncBuffer) *setup {
	t.Helper()
	sealer, err := seal.New(keys)
	if err != nil {
		t.Fatal(err)
	}
	s := &setup{store: store}
	s.guard, err = lambdaidem.New(store, func(o *lambdaidem.Options) { o.Sealer = sealer })
	if err != nil {
		t.Fatal(err)
	}
	s.handler, err = wrapBatch(s.guard, "CreateOrder", h.handle, func(o *sqsbatch.Options) {
		o.Key = sqsbatch.KeyFromJSONField("order_id")
		o.Logger = slog.New(slog.NewJSONHandler(logs, nil))
	})
	if err != nil {
		t.Fatal(err)
	}
	return s
}
