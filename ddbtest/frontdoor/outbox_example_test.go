package frontdoor_test

import (
	"context"
	"fmt"

	"github.com/lambdaidem/lambdaidem/ddbtest"
	"github.com/lambdaidem/lambdaidem/ddbtest/frontdoor"
	"github.com/lambdaidem/lambdaidem/dynamostore/relay"
	"github.com/lambdaidem/lambdaidem/lambdaidem"
	"github.com/lambdaidem/lambdaidem/lambdaidem/outbox"
)

// A handler stages a message in the outbox; it commits with the record in
// the kit's outbox table, and the relay, run on what the table's stream
// would carry, publishes it once.
func ExampleRelayOutbox() {
	ctx := context.Background()
	kit, err := ddbtest.OpenKit(ctx) // ddbtest.NewKit(t) in a test
	if err != nil {
		panic(err)
	}
	defer kit.Close()
	guard, _ := lambdaidem.New(kit.Store)
	call := lambdaidem.Call[string]{Operation: "AcceptOrder", Key: "o-1"}
	for range 2 { // the retry replays: nothing staged twice
		_, err := lambdaidem.Do(ctx, guard, call, func(ctx context.Context) (string, error) {
			_, err := outbox.Stage(ctx, outbox.SQS{QueueURL: "https://sqs.us-east-1.amazonaws.com/123456789012/accepted", Body: `{"order":"o-1"}`})
			return "accepted", err
		})
		if err != nil {
			panic(err)
		}
	}
	sent := outbox.PublisherFunc(func(_ context.Context, m outbox.Message) error {
		fmt.Println("published", m.Body)
		return nil
	})
	r, err := relay.New(kit.Client, kit.Outbox, sent)
	if err != nil {
		panic(err)
	}
	for range 2 { // the stream delivered twice: published once
		failed, err := frontdoor.RelayOutbox(ctx, kit, r.Handler())
		fmt.Println("failed:", failed, err)
	}
	// Output:
	// published {"order":"o-1"}
	// failed: [] <nil>
	// failed: [] <nil>
}
