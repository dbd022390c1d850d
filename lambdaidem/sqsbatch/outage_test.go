package sqsbatch_test

import (
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/lambdaidem/lambdaidem/lambdaidem"
	"github.com/lambdaidem/lambdaidem/lambdaidem/memstore"
	"github.com/lambdaidem/lambdaidem/lambdaidem/sqsbatch"
)

// outage is a store fault that starts after a number of calls of one
// store operation and lasts until healed.
type outage struct {
	mu     sync.Mutex
	op     string
	after  int
	seen   int
	healed bool
}

func (o *outage) fault(op, key string) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.healed {
		return nil
	}
	if op == o.op {
		o.seen++
	}
	if o.seen > o.after {
		return fmt.Errorf("injected outage: %w", lambdaidem.ErrStoreUnavailable)
	}
	return nil
}

func (o *outage) heal() {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.healed = true
}

// orderBatch is a standard-queue batch of n distinct orders.
func orderBatch(t testing.TB, n int) events.SQSEvent {
	base := loadEvent(t, "standard.json").Records[0]
	var ev events.SQSEvent
	for i := range n {
		m := base
		m.MessageId = fmt.Sprintf("7a1c0000-0000-4000-8000-%012d", i)
		m.Body = fmt.Sprintf(`{"order_id":"o-%04d","customer":"c-1","items":[{"sku":"tea","qty":1}],"total":%d}`, 5000+i, 100+i)
		ev.Records = append(ev.Records, m)
	}
	return ev
}

// The store goes down in the middle of a sequential batch, at a claim or
// at a commit: every message not committed is reported, none is lost, and
// the redelivery of the reported ones commits each exactly once.
func TestStoreOutageMidBatch(t *testing.T) {
	tests := []struct {
		op string
		// stuck: the message whose commit failed after its handler ran; its
		// release failed too, so its record stays in progress until the lease
		// lapses.
		stuck bool
	}{
		{op: "claim"},
		{op: "commit", stuck: true},
	}
	for _, tt := range tests {
		t.Run(tt.op, func(t *testing.T) {
			ev := orderBatch(t, 8)
			out := &outage{op: tt.op, after: 2}
			h := newOrders()
			s := newSetup(t, h.handle, []func(*memstore.Options){func(o *memstore.Options) { o.Fault = out.fault }},
				func(o *sqsbatch.Options) { o.Concurrency = 1 })

			resp := s.invoke(t, ev)

			if got, want := failedIDs(resp), ids(ev, 2, 3, 4, 5, 6, 7); !slices.Equal(got, want) {
				t.Fatalf("failures = %v, want %v", got, want)
			}
			if got := len(s.store.Items("orders")); got != 2 {
				t.Errorf("orders written during the outage = %d, want 2", got)
			}

			out.heal()
			retry := redeliver(ev, resp)
			resp = s.invoke(t, retry)
			if tt.stuck {
				// The stuck message is still leased to the invocation that
				// ran it: reported again, not run twice at once.
				if got, want := failedIDs(resp), ids(ev, 2); !slices.Equal(got, want) {
					t.Fatalf("first retry failures = %v, want %v", got, want)
				}
				s.clock.Advance(time.Minute) // SQS redelivers after the visibility timeout: the lease has lapsed
				resp = s.invoke(t, redeliver(retry, resp))
			}
			if got := failedIDs(resp); len(got) != 0 {
				t.Fatalf("retry failures = %v, want none", got)
			}

			items := s.store.Items("orders")
			if len(items) != len(ev.Records) {
				t.Errorf("orders written = %d, want %d", len(items), len(ev.Records))
			}
			for i, m := range ev.Records {
				want := 1
				if tt.stuck && i == 2 {
					want = 2 // ran once uncommitted during the outage
				}
				if got := h.ran(m.MessageId); got != want {
					t.Errorf("record %d ran %d times, want %d", i, got, want)
				}
			}
		})
	}
}

// When the store is down for the whole batch, every message is reported
// individually and the batch handler's error stays nil.
func TestStoreDownReportsEveryMessage(t *testing.T) {
	ev := orderBatch(t, 5)
	out := &outage{op: "claim", after: 0}
	h := newOrders()
	s := newSetup(t, h.handle, []func(*memstore.Options){func(o *memstore.Options) { o.Fault = out.fault }})

	resp := s.invoke(t, ev)

	if got, want := failedIDs(resp), ids(ev, 0, 1, 2, 3, 4); !slices.Equal(got, want) {
		t.Errorf("failures = %v, want %v", got, want)
	}
	if got := h.total(); got != 0 {
		t.Errorf("handler runs = %d, want 0", got)
	}
}
