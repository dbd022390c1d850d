package main

import (
	"errors"

	"github.com/lambdaidem/lambdaidem/dynamostore"
)

// settings is the function's configuration, read from its environment.
type settings struct {
	// Idempotency holds the idempotency table, its attribute names, the
	// retry horizon and the outbox table (IDEMPOTENCY_*, OUTBOX_TABLE, as the
	// CDK construct's Table.Bind and Outbox.GrantStage set them; see
	// dynamostore.ReadEnv). The horizon must be at least the queue's
	// retention period and maxReceiveCount × visibility timeout. The outbox
	// table, if set, is the one the commits write "order accepted" events
	// to.
	Idempotency dynamostore.Env
	// OrdersTable is the orders table, partition key id (S) (ORDERS_TABLE).
	OrdersTable string
	// AcceptedQueue is the FIFO queue the relay publishes "order accepted"
	// events to (ORDER_ACCEPTED_QUEUE); set with the outbox table or not at
	// all.
	AcceptedQueue string
}

// loadConfig reads the configuration through getenv, reporting every
// missing or invalid variable at once.
func loadConfig(getenv func(string) string) (settings, error) {
	idem, err := dynamostore.ReadEnv(getenv)
	c := settings{Idempotency: idem, OrdersTable: getenv("ORDERS_TABLE"), AcceptedQueue: getenv("ORDER_ACCEPTED_QUEUE")}
	errs := []error{err}
	if c.OrdersTable == "" {
		errs = append(errs, errors.New("ORDERS_TABLE is not set (the orders table's name)"))
	}
	if (c.Idempotency.OutboxTable == "") != (c.AcceptedQueue == "") {
		errs = append(errs, errors.New("OUTBOX_TABLE and ORDER_ACCEPTED_QUEUE go together: set both (publish order accepted events) or neither"))
	}
	return c, errors.Join(errs...)
}
