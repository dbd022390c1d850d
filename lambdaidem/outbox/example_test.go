package outbox_test

import (
	"context"
	"fmt"
	"time"

	"github.com/lambdaidem/lambdaidem/lambdaidem"
	"github.com/lambdaidem/lambdaidem/lambdaidem/memstore"
	"github.com/lambdaidem/lambdaidem/lambdaidem/outbox"
)

// A handler stages an "order accepted" event with the order: both are
// committed with the idempotency record, or neither. A relay publishes it
// afterwards (here memstore's; on AWS dynamostore/relay on the outbox
// table's stream). A duplicate replays the outcome and stages nothing.
func ExampleStage() {
	store := memstore.New()
	g, _ := lambdaidem.New(store)
	accept := func(ctx context.Context) (string, error) {
		if err := memstore.Stage(ctx, memstore.Put{Table: "orders", Key: "o-42", Value: []byte(`{"total":700}`)}); err != nil {
			return "", err
		}
		if _, err := outbox.Stage(ctx, outbox.SQSFIFO{
			QueueURL: "https://sqs.eu-west-1.amazonaws.com/123456789012/order-accepted.fifo",
			GroupID:  "o-42", Body: `{"event":"OrderAccepted","order_id":"o-42"}`,
		}); err != nil {
			return "", err
		}
		return "accepted", nil
	}
	c := lambdaidem.Call[string]{Operation: "AcceptOrder", Key: "o-42"}
	for range 2 { // the second is a duplicate
		out, err := lambdaidem.Do(context.Background(), g, c, accept)
		fmt.Println(out, err)
	}
	n, err := store.Relay(context.Background(), time.Now(), outbox.PublisherFunc(func(_ context.Context, m outbox.Message) error {
		fmt.Printf("publish %s to %s, group %s, dedup id ends %q\n", m.Kind, m.Target[len(m.Target)-19:], m.GroupID, m.ID[len(m.ID)-2:])
		return nil
	}))
	fmt.Println(n, err)
	// Output:
	// accepted <nil>
	// accepted <nil>
	// publish sqs-fifo to order-accepted.fifo, group o-42, dedup id ends "-0"
	// 1 <nil>
}
