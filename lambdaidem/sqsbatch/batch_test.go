package sqsbatch_test

import (
	"context"
	"fmt"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/lambdaidem/lambdaidem/lambdaidem"
	"github.com/lambdaidem/lambdaidem/lambdaidem/sqsbatch"
)

// A handler that fails for one message: exactly that message is reported,
// the others are committed.
func TestHandlerFailureReportsExactlyThatMessage(t *testing.T) {
	ev := records(loadEvent(t, "standard.json"), 0, 1, 2)
	h := newOrders()
	h.fail[ev.Records[1].MessageId] = errDeclined
	s := newSetup(t, h.handle, nil)

	resp := s.invoke(t, ev)

	if got, want := failedIDs(resp), ids(ev, 1); !slices.Equal(got, want) {
		t.Errorf("failures = %v, want %v", got, want)
	}
	if got := len(s.store.Items("orders")); got != 2 {
		t.Errorf("orders written = %d, want 2", got)
	}
	if recs := s.store.Records(); len(recs) != 2 {
		t.Errorf("records = %d, want 2: the failed message's claim is released", len(recs))
	}
}

// What each kind of message gets, one batch at a time over a fresh store.
func TestMessageOutcomes(t *testing.T) {
	std := loadEvent(t, "standard.json")
	o1, o1Reformatted := std.Records[0], std.Records[3] // same order, same JSON, other spacing and key order
	other := o1
	other.MessageId = "9d0c1b2a-0000-4000-8000-000000000009"
	other.Body = `{"order_id":"o-1001","customer":"c-99","items":[],"total":1}`
	noKey := o1
	noKey.MessageId = "9d0c1b2a-0000-4000-8000-00000000000a"
	noKey.Body = `{"customer":"c-17","items":[],"total":1}`
	notJSON := o1
	notJSON.MessageId = "9d0c1b2a-0000-4000-8000-00000000000b"
	notJSON.Body = "order o-1001 please"

	tests := []struct {
		name string
		// earlier batches delivered before the one under test
		earlier []events.SQSMessage
		batch   []events.SQSMessage
		// wantFailed are indexes into batch
		wantFailed []int
		// wantRuns is the handler's total run count over all batches
		wantRuns  int
		wantItems int
	}{
		{name: "first delivery succeeds", batch: []events.SQSMessage{o1}, wantRuns: 1, wantItems: 1},
		{name: "completed duplicate in a later batch succeeds without running",
			earlier: []events.SQSMessage{o1}, batch: []events.SQSMessage{o1}, wantRuns: 1, wantItems: 1},
		{name: "producer retry with reformatted JSON body is the same intent",
			earlier: []events.SQSMessage{o1}, batch: []events.SQSMessage{o1Reformatted}, wantRuns: 1, wantItems: 1},
		{name: "same key twice in one batch: one run, both succeed",
			batch: []events.SQSMessage{o1, o1Reformatted}, wantRuns: 1, wantItems: 1},
		{name: "reused key with a different body fails and is not processed",
			earlier: []events.SQSMessage{o1}, batch: []events.SQSMessage{other}, wantFailed: []int{0}, wantRuns: 1, wantItems: 1},
		{name: "reused key with a different body in the same batch fails",
			batch: []events.SQSMessage{o1, other}, wantFailed: []int{1}, wantRuns: 1, wantItems: 1},
		{name: "no key in the body fails and is not processed",
			batch: []events.SQSMessage{noKey, o1}, wantFailed: []int{0}, wantRuns: 1, wantItems: 1},
		{name: "a body that is not JSON fails and is not processed",
			batch: []events.SQSMessage{notJSON}, wantFailed: []int{0}, wantRuns: 0, wantItems: 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newOrders()
			h.delay = 5 * time.Millisecond // same-key messages would overlap if they ran concurrently
			s := newSetup(t, h.handle, nil)
			if len(tt.earlier) > 0 {
				if resp := s.invoke(t, events.SQSEvent{Records: tt.earlier}); len(resp.BatchItemFailures) != 0 {
					t.Fatalf("earlier batch failed: %v", failedIDs(resp))
				}
			}
			ev := events.SQSEvent{Records: tt.batch}

			resp := s.invoke(t, ev)

			if got, want := failedIDs(resp), ids(ev, tt.wantFailed...); !slices.Equal(got, want) {
				t.Errorf("failures = %v, want %v", got, want)
			}
			if got := h.total(); got != tt.wantRuns {
				t.Errorf("handler runs = %d, want %d", got, tt.wantRuns)
			}
			if got := len(s.store.Items("orders")); got != tt.wantItems {
				t.Errorf("orders written = %d, want %d", got, tt.wantItems)
			}
		})
	}
}

// A terminal error is the message's decided outcome: reported failed (so
// the message reaches the dead-letter queue) and, on redelivery, reported
// failed again without running.
func TestTerminalErrorIsReplayedAsFailure(t *testing.T) {
	ev := records(loadEvent(t, "standard.json"), 1)
	h := newOrders()
	h.fail[ev.Records[0].MessageId] = lambdaidem.Terminal(errDeclined)
	s := newSetup(t, h.handle, nil)

	for delivery := 1; delivery <= 3; delivery++ {
		if got, want := failedIDs(s.invoke(t, ev)), ids(ev, 0); !slices.Equal(got, want) {
			t.Errorf("delivery %d: failures = %v, want %v", delivery, got, want)
		}
	}
	if got := h.total(); got != 1 {
		t.Errorf("handler runs = %d, want 1", got)
	}
}

// A panicking handler fails its message, not the process or the batch.
func TestHandlerPanicFailsOnlyItsMessage(t *testing.T) {
	ev := records(loadEvent(t, "standard.json"), 0, 1, 2)
	h := newOrders()
	s := newSetup(t, func(ctx context.Context, m events.SQSMessage) error {
		if m.MessageId == ev.Records[2].MessageId {
			panic("boom")
		}
		return h.handle(ctx, m)
	}, nil)

	resp := s.invoke(t, ev)

	if got, want := failedIDs(resp), ids(ev, 2); !slices.Equal(got, want) {
		t.Errorf("failures = %v, want %v", got, want)
	}
	if recs := s.store.Records(); len(recs) != 2 {
		t.Errorf("records = %d, want 2: the panicking message's claim is released", len(recs))
	}
}

// Records of a standard queue run concurrently up to the bound; a bound of
// 1 runs them one at a time.
func TestConcurrencyBound(t *testing.T) {
	for _, bound := range []int{1, 3} {
		t.Run(fmt.Sprint(bound), func(t *testing.T) {
			var running, peak atomic.Int32
			h := func(ctx context.Context, m events.SQSMessage) error {
				n := running.Add(1)
				defer running.Add(-1)
				for p := peak.Load(); n > p && !peak.CompareAndSwap(p, n); p = peak.Load() {
				}
				time.Sleep(10 * time.Millisecond)
				return nil
			}
			s := newSetup(t, h, nil, func(o *sqsbatch.Options) { o.Concurrency = bound }, keyFromMessageID)
			var ev events.SQSEvent
			for i := range 12 {
				m := loadEvent(t, "standard.json").Records[0]
				m.MessageId = fmt.Sprintf("msg-%02d", i)
				ev.Records = append(ev.Records, m)
			}

			if resp := s.invoke(t, ev); len(resp.BatchItemFailures) != 0 {
				t.Fatalf("failures = %v", failedIDs(resp))
			}
			if got := peak.Load(); got != int32(bound) {
				t.Errorf("peak concurrency = %d, want %d", got, bound)
			}
		})
	}
}

// A message in progress in another invocation is reported failed, so that
// SQS redelivers it after the first attempt has committed.
func TestInFlightDuplicateFails(t *testing.T) {
	ev := records(loadEvent(t, "standard.json"), 0)
	entered, release := make(chan struct{}), make(chan struct{})
	h := newOrders()
	s := newSetup(t, func(ctx context.Context, m events.SQSMessage) error {
		close(entered)
		<-release
		return h.handle(ctx, m)
	}, nil)

	first := make(chan events.SQSEventResponse)
	go func() {
		resp, _ := s.handler(context.Background(), ev)
		first <- resp
	}()
	<-entered
	second := s.invoke(t, ev)
	close(release)

	if got, want := failedIDs(second), ids(ev, 0); !slices.Equal(got, want) {
		t.Errorf("in-flight duplicate: failures = %v, want %v", got, want)
	}
	if got := failedIDs(<-first); len(got) != 0 {
		t.Errorf("first delivery: failures = %v, want none", got)
	}
}

// A failed message without a messageId cannot be named in the response:
// the whole batch is retried, and its successes replay.
func TestFailureWithoutMessageIDFailsTheBatch(t *testing.T) {
	ev := records(loadEvent(t, "standard.json"), 0)
	ev.Records[0].MessageId = ""
	s := newSetup(t, newOrders().handle, nil, keyFromMessageID)

	_, err := s.handler(context.Background(), ev)

	if err != sqsbatch.ErrUnreportable {
		t.Errorf("err = %v, want ErrUnreportable", err)
	}
}
