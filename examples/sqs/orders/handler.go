package orders

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/lambdaidem/lambdaidem/dynamostore"
	"github.com/lambdaidem/lambdaidem/lambdaidem"
	"github.com/lambdaidem/lambdaidem/lambdaidem/outbox"
	"github.com/lambdaidem/lambdaidem/lambdaidem/sqsbatch"
)

// Operation is the idempotency operation name of creating an order.
const Operation = "CreateOrder"

// Handler writes orders to one table.
type Handler struct {
	// Table is the orders table.
	Table string
	// Accepted, if set, is the URL of an SQS FIFO queue that hears of every
	// accepted order: the handler stages an "order accepted" event for it in
	// the outbox, so that the event is committed with the order (both or
	// neither) and published by the relay (examples/relay). The store needs
	// dynamostore.Options.OutboxTable.
	Accepted string
}

// AcceptedEvent is the body of the "order accepted" event.
type AcceptedEvent struct {
	Event   string `json:"event"` // "OrderAccepted"
	OrderID string `json:"order_id"`
	Total   int64  `json:"total"`
}

// Handle processes one order message: it validates the body and stages
// the order's Put, which dynamostore commits in one TransactWriteItems with
// the idempotency record. It must run inside a wrapped invocation (see
// [NewBatchHandler]); elsewhere staging fails.
func (h Handler) Handle(ctx context.Context, m events.SQSMessage) error {
	o, err := Parse(m.Body)
	if err != nil {
		return err
	}
	if err := dynamostore.Stage(ctx, types.Put{
		TableName:           aws.String(h.Table),
		Item:                o.Item(),
		ConditionExpression: aws.String("attribute_not_exists(id)"),
	}); err != nil {
		return err
	}
	if h.Accepted == "" {
		return nil
	}
	body, err := json.Marshal(AcceptedEvent{Event: "OrderAccepted", OrderID: o.ID, Total: o.Total})
	if err != nil {
		return err
	}
	// The queue deduplicates on the message's id (the operation key and its
	// position), so the relay's resends after a crash reach it once.
	_, err = outbox.Stage(ctx, outbox.SQSFIFO{QueueURL: h.Accepted, GroupID: o.ID, Body: string(body)})
	return err
}

// Configure sets the batch options of the orders consumer: the key is the
// body's order_id.
func Configure(o *sqsbatch.Options) {
	o.Key = sqsbatch.KeyFromJSONField("order_id")
}

// NewBatchHandler returns the Lambda handler of the orders consumer: h
// made idempotent by g, one message at a time, with partial batch
// responses. optFns adjust the options after [Configure].
func NewBatchHandler(g *lambdaidem.Guard, h Handler, optFns ...func(*sqsbatch.Options)) (func(context.Context, events.SQSEvent) (events.SQSEventResponse, error), error) {
	if h.Table == "" {
		return nil, errors.New("orders: Handler.Table is empty")
	}
	a, err := sqsbatch.New(g, Operation, append([]func(*sqsbatch.Options){Configure}, optFns...)...)
	if err != nil {
		return nil, err
	}
	return a.Wrap(h.Handle), nil
}
