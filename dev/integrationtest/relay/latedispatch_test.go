package relay_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/lambdaidem/lambdaidem/dynamostore/relay"
	"github.com/lambdaidem/lambdaidem/internal/outboxitem"
)

// TestLateDispatchAnswerIsJudgedAgain: the outbox model's finding O1. Relay
// A records a FIFO message's first dispatch (DispatchUpdate); its answer
// comes back six minutes later. Meanwhile relay B, seeing the recorded
// dispatch inside the window, published the item. A must judge the window
// again when the answer arrives: its publish would land past the queue's
// five-minute deduplication window and be delivered a second time.
func TestLateDispatchAnswerIsJudgedAgain(t *testing.T) {
	e, k := accepted(t)
	ctx := context.Background()
	var once sync.Once
	held := heldClient{Client: e.client, after: func(in *dynamodb.UpdateItemInput, err error) {
		if err != nil || in.UpdateExpression == nil || *in.UpdateExpression != outboxitem.DispatchUpdate {
			return
		}
		once.Do(func() {
			if err := e.relay.Publish(ctx, k); err != nil {
				t.Errorf("relay B, while A's answer is on its way: %v", err)
			}
			e.clock.Advance(6 * time.Minute)
		})
	}}
	a, err := relay.New(held, e.outbox, e.targets, func(o *relay.Options) { o.Now = e.clock.Now; o.Retention = retention })
	if err != nil {
		t.Fatal(err)
	}
	_ = a.Publish(ctx, k) // set aside or nothing left: either way it must not send again
	e.targets.mu.Lock()
	delivered := len(e.targets.fifo)
	e.targets.mu.Unlock()
	if delivered != 1 {
		t.Fatalf("the FIFO message delivered %d times; want 1 (relay A published past the window on a late dispatch answer)", delivered)
	}
}
