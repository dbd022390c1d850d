package sqsbatch_test

import (
	"context"
	"testing"

	"github.com/aws/aws-lambda-go/events"

	"github.com/lambdaidem/lambdaidem/lambdaidem"
	"github.com/lambdaidem/lambdaidem/lambdaidem/memstore"
	"github.com/lambdaidem/lambdaidem/lambdaidem/sqsbatch"
)

// Wrap refuses a setup that cannot work, with an error, not a panic.
func TestWrapRefusesInvalidSetup(t *testing.T) {
	g, err := lambdaidem.New(memstore.New())
	if err != nil {
		t.Fatal(err)
	}
	h := func(context.Context, events.SQSMessage) error { return nil }
	tests := []struct {
		name      string
		g         *lambdaidem.Guard
		operation string
		h         func(context.Context, events.SQSMessage) error
		opt       func(*sqsbatch.Options)
	}{
		{"nil guard", nil, "Op", h, nil},
		{"nil handler", g, "Op", nil, nil},
		{"empty operation", g, "", h, nil},
		{"negative concurrency", g, "Op", h, func(o *sqsbatch.Options) { o.Concurrency = -1 }},
		{"empty fingerprint attribute", g, "Op", h, func(o *sqsbatch.Options) { o.FingerprintAttributes = []string{""} }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var opts []func(*sqsbatch.Options)
			if tt.opt != nil {
				opts = append(opts, tt.opt)
			}
			if _, err := sqsbatch.Wrap(tt.g, tt.operation, tt.h, opts...); err == nil {
				t.Error("Wrap succeeded, want an error")
			}
		})
	}
}

// An empty batch is a success.
func TestEmptyBatch(t *testing.T) {
	s := newSetup(t, newOrders().handle, nil)
	if resp := s.invoke(t, events.SQSEvent{}); len(resp.BatchItemFailures) != 0 {
		t.Errorf("failures = %v", failedIDs(resp))
	}
}
