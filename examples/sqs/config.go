package main

import (
	"errors"
	"fmt"
	"time"
)

// settings is the function's configuration, read from its environment.
type settings struct {
	// IdempotencyTable is the idempotency table (IDEMPOTENCY_TABLE).
	IdempotencyTable string
	// OrdersTable is the orders table, partition key id (S) (ORDERS_TABLE).
	OrdersTable string
	// TTL is the retry horizon (IDEMPOTENCY_TTL, a Go duration, default
	// 24h): at least the queue's retention period and maxReceiveCount ×
	// visibility timeout.
	TTL time.Duration
}

// defaultTTL is the retry horizon when IDEMPOTENCY_TTL is not set.
const defaultTTL = 24 * time.Hour

// loadConfig reads the configuration through getenv, reporting every
// missing or invalid variable at once.
func loadConfig(getenv func(string) string) (settings, error) {
	c := settings{IdempotencyTable: getenv("IDEMPOTENCY_TABLE"), OrdersTable: getenv("ORDERS_TABLE"), TTL: defaultTTL}
	var errs []error
	if c.IdempotencyTable == "" {
		errs = append(errs, errors.New("IDEMPOTENCY_TABLE is not set (the idempotency table's name)"))
	}
	if c.OrdersTable == "" {
		errs = append(errs, errors.New("ORDERS_TABLE is not set (the orders table's name)"))
	}
	if s := getenv("IDEMPOTENCY_TTL"); s != "" {
		d, err := time.ParseDuration(s)
		switch {
		case err != nil:
			errs = append(errs, fmt.Errorf("IDEMPOTENCY_TTL=%q is not a Go duration such as 24h or 96h", s))
		case d <= 0:
			errs = append(errs, fmt.Errorf("IDEMPOTENCY_TTL=%q must be positive", s))
		default:
			c.TTL = d
		}
	}
	return c, errors.Join(errs...)
}
