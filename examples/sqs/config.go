package main

import (
	"errors"

	"github.com/lambdaidem/lambdaidem/dynamostore"
)

// settings is the function's configuration, read from its environment.
type settings struct {
	// Idempotency holds the idempotency table, its attribute names and the
	// retry horizon (IDEMPOTENCY_*, as the CDK construct's Table.Bind sets
	// them; see dynamostore.ReadEnv). The horizon must be at least the queue's
	// retention period and maxReceiveCount × visibility timeout.
	Idempotency dynamostore.Env
	// OrdersTable is the orders table, partition key id (S) (ORDERS_TABLE).
	OrdersTable string
	// OutboxTable and AcceptedQueue (OUTBOX_TABLE, ORDER_ACCEPTED_QUEUE),
	// both or neither: the outbox table the commits write "order accepted"
	// events to, and the FIFO queue the relay publishes them to.
	OutboxTable, AcceptedQueue string
}

// loadConfig reads the configuration through getenv, reporting every
// missing or invalid variable at once.
func loadConfig(getenv func(string) string) (settings, error) {
	idem, err := dynamostore.ReadEnv(getenv)
	c := settings{Idempotency: idem, OrdersTable: getenv("ORDERS_TABLE"),
		OutboxTable: getenv("OUTBOX_TABLE"), AcceptedQueue: getenv("ORDER_ACCEPTED_QUEUE")}
	errs := []error{err}
	if c.OrdersTable == "" {
		errs = append(errs, errors.New("ORDERS_TABLE is not set (the orders table's name)"))
	}
	if (c.OutboxTable == "") != (c.AcceptedQueue == "") {
		errs = append(errs, errors.New("OUTBOX_TABLE and ORDER_ACCEPTED_QUEUE go together: set both (publish order accepted events) or neither"))
	}
	return c, errors.Join(errs...)
}
