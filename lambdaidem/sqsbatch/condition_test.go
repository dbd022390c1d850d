package sqsbatch_test

import (
	"context"
	"errors"
	"testing"

	"github.com/aws/aws-lambda-go/events"

	"github.com/lambdaidem/lambdaidem/lambdaidem"
	"github.com/lambdaidem/lambdaidem/lambdaidem/memstore"
	"github.com/lambdaidem/lambdaidem/lambdaidem/sqsbatch"
)

// A message whose staged writes fail a business condition at commit is a
// batch item failure by default (redelivered, then dead-lettered); with
// ConditionFailed it can be acknowledged instead. Nothing is written or
// stored either way.
func TestConditionFailedAtCommit(t *testing.T) {
	refund := func(ctx context.Context, m events.SQSMessage) error {
		return memstore.Stage(ctx, memstore.Check{Table: "payments", Key: m.Body}) // no such payment
	}
	batch := events.SQSEvent{Records: []events.SQSMessage{{MessageId: "m1", Body: "pay-404"}}}
	cases := []struct {
		name   string
		hook   func(context.Context, events.SQSMessage, error) bool
		failed int
	}{
		{"default", nil, 1},
		{"acknowledged", func(_ context.Context, m events.SQSMessage, err error) bool {
			var cfe *memstore.ConditionFailedError
			return m.MessageId == "m1" && errors.As(err, &cfe) && cfe.Key == "pay-404"
		}, 0},
		{"kept", func(context.Context, events.SQSMessage, error) bool { return false }, 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			store := memstore.New()
			g, err := lambdaidem.New(store)
			if err != nil {
				t.Fatal(err)
			}
			a, err := sqsbatch.New(g, "Refund", func(o *sqsbatch.Options) { o.ConditionFailed = c.hook })
			if err != nil {
				t.Fatal(err)
			}
			resp, err := a.Wrap(refund)(context.Background(), batch)
			if err != nil || len(resp.BatchItemFailures) != c.failed || len(store.Records()) != 0 {
				t.Fatalf("response %+v, %v, %d records; want %d failures and no record", resp, err, len(store.Records()), c.failed)
			}
		})
	}
}
