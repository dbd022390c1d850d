package sqsbatch_test

import (
	"context"
	"slices"
	"testing"

	"github.com/aws/aws-lambda-go/events"
)

// The same message delivered in three batches, the second concurrently
// with the first (it arrives while the first runs the handler), the third
// after both: the handler runs once, one order is written, and only the
// concurrent delivery is reported for redelivery.
func TestSameMessageInThreeBatches(t *testing.T) {
	std := loadEvent(t, "standard.json")
	msg := std.Records[0]
	first := events.SQSEvent{Records: []events.SQSMessage{msg, std.Records[1]}}
	second := events.SQSEvent{Records: []events.SQSMessage{std.Records[2], msg}}
	third := events.SQSEvent{Records: []events.SQSMessage{msg}}

	entered, release := make(chan struct{}), make(chan struct{})
	h := newOrders()
	s := newSetup(t, func(ctx context.Context, m events.SQSMessage) error {
		if m.MessageId == msg.MessageId && h.ran(msg.MessageId) == 0 {
			close(entered)
			<-release
		}
		return h.handle(ctx, m)
	}, nil)

	done := make(chan events.SQSEventResponse)
	go func() {
		resp, _ := s.handler(context.Background(), first)
		done <- resp
	}()
	<-entered // the first batch holds the claim on msg
	secondResp := s.invoke(t, second)
	close(release)
	firstResp := <-done
	thirdResp := s.invoke(t, third)

	if got := failedIDs(firstResp); len(got) != 0 {
		t.Errorf("first batch failures = %v, want none", got)
	}
	if got, want := failedIDs(secondResp), []string{msg.MessageId}; !slices.Equal(got, want) {
		t.Errorf("concurrent batch failures = %v, want %v (in progress)", got, want)
	}
	if got := failedIDs(thirdResp); len(got) != 0 {
		t.Errorf("third batch failures = %v, want none (replayed)", got)
	}
	// SQS redelivers the concurrent copy later: it replays too.
	if got := failedIDs(s.invoke(t, redeliver(second, secondResp))); len(got) != 0 {
		t.Errorf("redelivery failures = %v, want none", got)
	}
	if got := h.ran(msg.MessageId); got != 1 {
		t.Errorf("handler ran %d times for the message, want 1", got)
	}
	if _, ok := s.store.Item("orders", "o-1001"); !ok || len(s.store.Items("orders")) != 3 {
		t.Errorf("orders = %d, want 3 with o-1001", len(s.store.Items("orders")))
	}
}
