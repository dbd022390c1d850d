package main

import (
	"errors"

	"github.com/lambdaidem/lambdaidem/examples/internal/idemenv"
)

// settings is the function's configuration, read from its environment.
type settings struct {
	// Idempotency holds the idempotency table, its attribute names and the
	// retry horizon (IDEMPOTENCY_*, as the CDK construct's Table.Bind sets
	// them; see package idemenv). The horizon must be at least the queue's
	// retention period and maxReceiveCount × visibility timeout.
	Idempotency idemenv.Settings
	// OrdersTable is the orders table, partition key id (S) (ORDERS_TABLE).
	OrdersTable string
}

// loadConfig reads the configuration through getenv, reporting every
// missing or invalid variable at once.
func loadConfig(getenv func(string) string) (settings, error) {
	idem, err := idemenv.Read(getenv)
	c := settings{Idempotency: idem, OrdersTable: getenv("ORDERS_TABLE")}
	errs := []error{err}
	if c.OrdersTable == "" {
		errs = append(errs, errors.New("ORDERS_TABLE is not set (the orders table's name)"))
	}
	return c, errors.Join(errs...)
}
