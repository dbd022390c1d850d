package orders_test

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/lambdaidem/lambdaidem/ddbtest"
	"github.com/lambdaidem/lambdaidem/examples/sqs/orders"
	"github.com/lambdaidem/lambdaidem/lambdaidem/sqsbatch"
)

// The same order message delivered in three batches, the second while the
// first is still running it, the third afterwards: one order item, the
// handler run once, only the concurrent copy reported for redelivery (it
// replays when SQS delivers it again).
func TestOrderWrittenOnceAcrossThreeDeliveries(t *testing.T) {
	e := newEnv(t)
	msg := message("4c5d6e7f-0000-4000-8000-000000000001", order("o-1001", 1150))
	other := message("4c5d6e7f-0000-4000-8000-000000000002", order("o-1002", 900))
	entered, release := make(chan struct{}), make(chan struct{})
	var once bool
	h := e.handler(t, func(m events.SQSMessage) {
		if m.MessageId == msg.MessageId && !once {
			once = true // only the first batch runs msg; the others never reach the handler
			close(entered)
			<-release
		}
	})

	first := make(chan []string)
	go func() {
		resp, _ := h(context.Background(), events.SQSEvent{Records: []events.SQSMessage{msg, other}})
		first <- failed(resp)
	}()
	<-entered
	second := invoke(t, h, msg)
	close(release)

	if got := <-first; len(got) != 0 {
		t.Errorf("first batch failures = %v, want none", got)
	}
	if got, want := second, []string{msg.MessageId}; !slices.Equal(got, want) {
		t.Errorf("concurrent batch failures = %v, want %v", got, want)
	}
	if got := invoke(t, h, msg); len(got) != 0 {
		t.Errorf("third batch failures = %v, want none", got)
	}
	if got := invoke(t, h, msg); len(got) != 0 { // SQS redelivers the concurrent copy
		t.Errorf("redelivery failures = %v, want none", got)
	}
	if got := e.ran(msg.MessageId); got != 1 {
		t.Errorf("handler ran %d times, want 1", got)
	}
	if got := e.count(t, e.ordersTable); got != 2 {
		t.Errorf("orders = %d, want 2", got)
	}
	item, err := e.client.GetItem(context.Background(), &dynamodb.GetItemInput{
		TableName: aws.String(e.ordersTable), ConsistentRead: aws.Bool(true),
		Key: map[string]types.AttributeValue{"id": &types.AttributeValueMemberS{Value: "o-1001"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if total, ok := item.Item["total"].(*types.AttributeValueMemberN); !ok || total.Value != "1150" {
		t.Errorf("order o-1001 = %v, want total 1150", item.Item)
	}
}

// An invalid order is reported on every delivery (so it reaches the
// dead-letter queue after maxReceiveCount) and leaves nothing behind: no
// order, no idempotency record. A corrected message for the same order is
// then processed, not refused as a reused key.
func TestInvalidOrdersAreReportedAndLeaveNothing(t *testing.T) {
	tests := []struct {
		name, body string
		// orderID, if set, is the order a corrected message then creates.
		orderID string
	}{
		{"not JSON", "order o-1 please", ""},
		{"no order_id", `{"customer":"c-1","items":[{"sku":"tea","qty":1}],"total":5}`, ""},
		{"no customer", `{"order_id":"o-1","items":[{"sku":"tea","qty":1}],"total":5}`, "o-1"},
		{"no items", `{"order_id":"o-1","customer":"c-1","items":[],"total":5}`, "o-1"},
		{"zero quantity", `{"order_id":"o-1","customer":"c-1","items":[{"sku":"tea","qty":0}],"total":5}`, "o-1"},
		{"item without sku", `{"order_id":"o-1","customer":"c-1","items":[{"qty":1}],"total":5}`, "o-1"},
		{"negative total", `{"order_id":"o-1","customer":"c-1","items":[{"sku":"tea","qty":1}],"total":-5}`, "o-1"},
		{"total not a number", `{"order_id":"o-1","customer":"c-1","items":[{"sku":"tea","qty":1}],"total":"5"}`, "o-1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t)
			h := e.handler(t, nil)
			bad := message("bad-1", tt.body)

			for delivery := 1; delivery <= 2; delivery++ {
				if got := invoke(t, h, bad); !slices.Equal(got, []string{"bad-1"}) {
					t.Fatalf("delivery %d: failures = %v, want [bad-1]", delivery, got)
				}
			}
			if n := e.count(t, e.ordersTable); n != 0 {
				t.Errorf("orders = %d, want 0", n)
			}
			if n := e.count(t, e.idemTable); n != 0 {
				t.Errorf("idempotency records = %d, want 0", n)
			}
			if tt.orderID == "" {
				return
			}
			if got := invoke(t, h, message("fixed-1", order(tt.orderID, 5))); len(got) != 0 {
				t.Errorf("corrected message failures = %v, want none", got)
			}
			if n := e.count(t, e.ordersTable); n != 1 {
				t.Errorf("orders after the correction = %d, want 1", n)
			}
		})
	}
}

// DynamoDB fails in the middle of a sequential batch, at the claims
// (UpdateItem) or at the commits (TransactWriteItems), beyond the SDK's
// retries: every message not committed is reported, none is lost, and the
// redelivery of the reported ones writes each remaining order once.
func TestStoreOutageMidBatch(t *testing.T) {
	for _, op := range []string{"UpdateItem", "TransactWriteItems"} {
		t.Run(op, func(t *testing.T) {
			e := newEnv(t)
			proxy := e.ep.RequireProxy(t)
			h := e.handler(t, nil, func(o *sqsbatch.Options) { o.Concurrency = 1 })
			var batch []events.SQSMessage
			for i := range 6 {
				batch = append(batch, message(fmt.Sprintf("m-%d", i), order(fmt.Sprintf("o-%d", 2000+i), 100+i)))
			}
			heal := proxy.Inject(ddbtest.Rule{Op: op, Fault: ddbtest.ServiceUnavailable, After: 2})

			got := invoke(t, h, batch...)

			want := []string{"m-2", "m-3", "m-4", "m-5"}
			if !slices.Equal(got, want) {
				t.Fatalf("failures = %v, want %v", got, want)
			}
			if n := e.count(t, e.ordersTable); n != 2 {
				t.Errorf("orders during the outage = %d, want 2", n)
			}

			heal()
			var retry []events.SQSMessage
			for _, m := range batch {
				if slices.Contains(got, m.MessageId) {
					retry = append(retry, m)
				}
			}
			if got := invoke(t, h, retry...); len(got) != 0 {
				t.Fatalf("retry failures = %v, want none", got)
			}
			if n := e.count(t, e.ordersTable); n != len(batch) {
				t.Errorf("orders = %d, want %d", n, len(batch))
			}
			for _, m := range batch[:2] {
				if n := e.ran(m.MessageId); n != 1 {
					t.Errorf("%s ran %d times, want 1", m.MessageId, n)
				}
			}
			// And a full redelivery of the batch writes nothing more.
			if got := invoke(t, h, batch...); len(got) != 0 {
				t.Errorf("full redelivery failures = %v, want none", got)
			}
		})
	}
}

// The batch handler main builds refuses a missing table.
func TestNewBatchHandlerNeedsATable(t *testing.T) {
	e := newEnv(t)
	if _, err := orders.NewBatchHandler(e.guard, orders.Handler{}); err == nil {
		t.Error("NewBatchHandler accepted an empty table")
	}
	if _, err := orders.NewBatchHandler(e.guard, orders.Handler{Table: e.ordersTable}); err != nil {
		t.Error(err)
	}
}
