package relay_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/lambdaidem/lambdaidem/internal/outboxitem"
)

// TestStaleMarkLeavesTheNextOperationsItem: the outbox model's finding O2.
// Relay A stalls between its publish of message 0 and its mark. Meanwhile
// relay B publishes the whole item, the record expires, and the key is
// reused: a new operation commits a new item under the same record key.
// A's late mark of "message 0 at position 0" must not apply to the new
// item (it would skip the new operation's message 0: never published);
// every message of the new operation is published.
func TestStaleMarkLeavesTheNextOperationsItem(t *testing.T) {
	e, k := accepted(t)
	ctx := context.Background()
	slow, run := stale(t, e, k)
	var next outboxitem.Item
	err := run(func() {
		if err := e.relay.Publish(ctx, k); err != nil {
			t.Errorf("relay B: %v", err)
		}
		e.clock.Advance(2 * time.Hour) // the record (horizon 1 h) expires: the key may be reused
		if _, err := e.client.DeleteItem(ctx, &dynamodb.DeleteItemInput{TableName: aws.String(e.orders),
			Key: map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: "o-1"}}}); err != nil {
			t.Fatal(err)
		}
		if err := e.accept(ctx, e.guard(t), "o-1"); err != nil {
			t.Fatalf("the next operation under the key: %v", err)
		}
		var err error
		if next, err = outboxitem.Decode(e.item(t, k)); err != nil {
			t.Fatal(err)
		}
	})
	if err != nil {
		t.Logf("relay A: %v", err)
	}
	if err := e.relay.Publish(ctx, k); err != nil {
		t.Fatalf("relay B on the next operation's item: %v", err)
	}
	var sent []string
	for _, m := range append(slow.sent(), e.targets.sent()...) {
		sent = append(sent, m.ID)
	}
	for _, m := range next.Messages {
		if !slices.Contains(sent, m.ID) {
			t.Errorf("the next operation's message %d (%s) was never published; sent %v", m.Position, m.ID, sent)
		}
	}
}
