package sqsbatch_test

import (
	"context"
	"testing"

	"github.com/aws/aws-lambda-go/events"

	"github.com/lambdaidem/lambdaidem/lambdaidem"
	"github.com/lambdaidem/lambdaidem/lambdaidem/memstore"
	"github.com/lambdaidem/lambdaidem/lambdaidem/sqsbatch"
)

// New refuses a setup that cannot work, with an error, not a panic.
func TestNewRefusesInvalidSetup(t *testing.T) {
	g, err := lambdaidem.New(memstore.New())
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name      string
		g         *lambdaidem.Guard
		operation string
		opt       func(*sqsbatch.Options)
	}{
		{"nil guard", nil, "Op", nil},
		{"empty operation", g, "", nil},
		{"negative concurrency", g, "Op", func(o *sqsbatch.Options) { o.Concurrency = -1 }},
		{"empty fingerprint attribute", g, "Op", func(o *sqsbatch.Options) { o.FingerprintAttributes = []string{""} }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var opts []func(*sqsbatch.Options)
			if tt.opt != nil {
				opts = append(opts, tt.opt)
			}
			if a, err := sqsbatch.New(tt.g, tt.operation, opts...); err == nil || a != nil {
				t.Errorf("New = %v, %v; want an error", a, err)
			}
		})
	}
}

// Wrap cannot fail: a nil handler fails every message of the batch, so
// SQS redelivers them, and never panics.
func TestWrapOfANilHandlerFailsEveryMessage(t *testing.T) {
	g, err := lambdaidem.New(memstore.New())
	if err != nil {
		t.Fatal(err)
	}
	a, err := sqsbatch.New(g, "Op")
	if err != nil {
		t.Fatal(err)
	}
	resp, err := a.Wrap(nil)(context.Background(), events.SQSEvent{Records: []events.SQSMessage{{MessageId: "m1", Body: "{}"}}})
	if err != nil || len(resp.BatchItemFailures) != 1 || resp.BatchItemFailures[0].ItemIdentifier != "m1" {
		t.Fatalf("nil handler: %+v, %v; want m1 reported as a failure", resp, err)
	}
}

// An empty batch is a success.
func TestEmptyBatch(t *testing.T) {
	s := newSetup(t, newOrders().handle, nil)
	if resp := s.invoke(t, events.SQSEvent{}); len(resp.BatchItemFailures) != 0 {
		t.Errorf("failures = %v", failedIDs(resp))
	}
}
