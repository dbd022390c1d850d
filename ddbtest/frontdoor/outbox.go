package frontdoor

import (
	"context"

	"github.com/aws/aws-lambda-go/events"

	"github.com/lambdaidem/lambdaidem/ddbtest"
)

// OutboxEvent returns the batch DynamoDB Streams would deliver to the
// outbox relay for the kit's outbox table as it is now: one record per
// item, with its current image (the in-process endpoint has no Streams
// API; the items themselves are what the stream would carry). An item the
// relay has published is passed over by it, so delivering the batch again
// publishes nothing twice.
func OutboxEvent(ctx context.Context, kit *ddbtest.Kit) (events.DynamoDBEvent, error) {
	items, err := kit.OutboxItems(ctx)
	if err != nil {
		return events.DynamoDBEvent{}, err
	}
	changes := make([]Change, len(items))
	for i, it := range items {
		img, err := Image(it)
		if err != nil {
			return events.DynamoDBEvent{}, err
		}
		changes[i] = Change{Keys: map[string]events.DynamoDBAttributeValue{"id": img["id"]}, NewImage: img}
	}
	return DynamoDBEvent(kit.Outbox, changes...), nil
}

// RelayOutbox runs the outbox relay's handler h (relay.Relay.Handler(),
// built over kit.Client and kit.Outbox) on [OutboxEvent] and returns the
// sequence numbers it reported failed.
func RelayOutbox(ctx context.Context, kit *ddbtest.Kit, h func(context.Context, events.DynamoDBEvent) (events.DynamoDBEventResponse, error)) ([]string, error) {
	e, err := OutboxEvent(ctx, kit)
	if err != nil {
		return nil, err
	}
	out, err := h(ctx, e)
	return identifiers(out.BatchItemFailures, err, func(f events.DynamoDBBatchItemFailure) string { return f.ItemIdentifier })
}
