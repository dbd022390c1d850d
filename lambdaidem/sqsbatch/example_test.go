package sqsbatch_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/aws/aws-lambda-go/events"

	"github.com/lambdaidem/lambdaidem/lambdaidem"
	"github.com/lambdaidem/lambdaidem/lambdaidem/memstore"
	"github.com/lambdaidem/lambdaidem/lambdaidem/sqsbatch"
)

// A consumer keyed by a field of the JSON body: the first batch processes
// both orders except the one the handler rejects; a redelivery of the
// whole batch replays the successes without running them.
func ExampleAdapter_Wrap() {
	store := memstore.New()
	guard, _ := lambdaidem.New(store)
	orders, err := sqsbatch.New(guard, "CreateOrder", func(o *sqsbatch.Options) {
		o.Key = sqsbatch.KeyFromJSONField("order_id")
		o.Concurrency = 1 // sequential, for a stable output
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	handler := orders.Wrap(func(ctx context.Context, m events.SQSMessage) error {
		var order struct {
			ID    string `json:"order_id"`
			Total int    `json:"total"`
		}
		if err := json.Unmarshal([]byte(m.Body), &order); err != nil {
			return err
		}
		if order.Total <= 0 {
			return errors.New("order total must be positive")
		}
		fmt.Println("processing", order.ID)
		return memstore.Stage(ctx, memstore.Put{Table: "orders", Key: order.ID, Value: []byte(m.Body)})
	})
	batch := events.SQSEvent{Records: []events.SQSMessage{
		{MessageId: "m1", Body: `{"order_id":"o-1","total":100}`},
		{MessageId: "m2", Body: `{"order_id":"o-2","total":0}`},
		{MessageId: "m3", Body: `{"order_id":"o-3","total":250}`},
	}}

	resp, _ := handler(context.Background(), batch)
	fmt.Println("failed:", resp.BatchItemFailures)
	resp, _ = handler(context.Background(), batch)
	fmt.Println("failed on redelivery:", resp.BatchItemFailures)
	fmt.Println("orders:", len(store.Items("orders")))
	// Output:
	// processing o-1
	// processing o-3
	// failed: [{m2}]
	// failed on redelivery: [{m2}]
	// orders: 2
}

// On a FIFO queue, a failure stops the rest of its message group in this
// batch; the other groups go on.
func ExampleAdapter_Wrap_fifo() {
	guard, _ := lambdaidem.New(memstore.New())
	shipments, _ := sqsbatch.New(guard, "Ship", func(o *sqsbatch.Options) {
		o.Key = sqsbatch.KeyFromDeduplicationID
		o.Concurrency = 1
	})
	handler := shipments.Wrap(func(ctx context.Context, m events.SQSMessage) error {
		if m.Body == "a2" {
			return errors.New("warehouse unreachable")
		}
		fmt.Println("shipped", m.Body)
		return nil
	})
	fifo := func(id, group, body string) events.SQSMessage {
		return events.SQSMessage{
			MessageId: id, Body: body, EventSourceARN: "arn:aws:sqs:eu-west-1:123456789012:shipments.fifo",
			Attributes: map[string]string{"MessageGroupId": group, "MessageDeduplicationId": "dedup-" + id},
		}
	}

	resp, _ := handler(context.Background(), events.SQSEvent{Records: []events.SQSMessage{
		fifo("1", "A", "a1"), fifo("2", "A", "a2"), fifo("3", "B", "b1"), fifo("4", "A", "a3"), fifo("5", "B", "b2"),
	}})
	fmt.Println("failed:", resp.BatchItemFailures)
	// Output:
	// shipped a1
	// shipped b1
	// shipped b2
	// failed: [{2} {4}]
}
