package main

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"strings"
	"testing"

	"github.com/aws/aws-lambda-go/events"

	"github.com/lambdaidem/lambdaidem/lambdaidem"
)

func TestSetupRefusesABadConfiguration(t *testing.T) {
	tests := []struct {
		name string
		env  map[string]string
		want string
	}{
		{"no tables", map[string]string{}, "IDEMPOTENCY_TABLE is not set"},
		{"no ledger table", map[string]string{"IDEMPOTENCY_TABLE": "i"}, "LEDGER_TABLE is not set"},
		{"a TTL that is not a duration", map[string]string{"IDEMPOTENCY_TABLE": "i", "LEDGER_TABLE": "l", "IDEMPOTENCY_TTL": "1 day"}, "not a Go duration"},
		{"a negative TTL", map[string]string{"IDEMPOTENCY_TABLE": "i", "LEDGER_TABLE": "l", "IDEMPOTENCY_TTL": "-1h"}, "at least one second"},
		{"an unknown source", map[string]string{"IDEMPOTENCY_TABLE": "i", "LEDGER_TABLE": "l", "LEDGER_SOURCE": "sqs"}, "want kinesis or dynamodb"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := setup(context.Background(), func(k string) string { return tt.env[k] }, slog.New(slog.NewTextHandler(io.Discard, nil)))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err %v, want %q", err, tt.want)
			}
		})
	}
}

// A record that is not a valid transfer fails for good: a terminal error,
// so that its retries replay the failure instead of running it again.
func TestAnInvalidTransferIsTerminal(t *testing.T) {
	for _, data := range []string{`not json`, `{"transfer_id":"t-1","account":"a","amount":0}`, `{"account":"a","amount":5}`, `{"transfer_id":"t-1","amount":5}`} {
		var r events.KinesisEventRecord
		r.Kinesis.Data = []byte(data)
		err := ledger{table: "ledger"}.book(context.Background(), r)
		var term interface{ Terminal() bool }
		if !errors.As(err, &term) || !term.Terminal() {
			t.Errorf("%s: err %v, want a terminal error", data, err)
		}
	}
	// A transfer item with a missing or mistyped attribute is terminal too;
	// reading it never panics.
	for _, image := range []map[string]events.DynamoDBAttributeValue{
		{},
		{"transfer_id": events.NewStringAttribute("t-1"), "account": events.NewStringAttribute("a"), "amount": events.NewStringAttribute("5")},
		{"transfer_id": events.NewNumberAttribute("1"), "account": events.NewStringAttribute("a"), "amount": events.NewNumberAttribute("5")},
		{"transfer_id": events.NewStringAttribute("t-1"), "account": events.NewStringAttribute("a"), "amount": events.NewNumberAttribute("1.5")},
		{"transfer_id": {}, "account": events.NewStringAttribute("a"), "amount": events.NewNumberAttribute("5")},
	} {
		r := events.DynamoDBEventRecord{EventName: "INSERT"}
		r.Change.NewImage = image
		err := ledger{table: "ledger"}.bookInsert(context.Background(), r)
		var term interface{ Terminal() bool }
		if !errors.As(err, &term) || !term.Terminal() {
			t.Errorf("%v: err %v, want a terminal error", image, err)
		}
	}
	// Other changes book nothing.
	if err := (ledger{table: "ledger"}).bookInsert(context.Background(), events.DynamoDBEventRecord{EventName: "REMOVE"}); err != nil {
		t.Errorf("REMOVE: %v", err)
	}
	// A valid transfer outside a wrapped invocation cannot stage its write.
	var r events.KinesisEventRecord
	r.Kinesis.Data = []byte(`{"transfer_id":"t-1","account":"a","amount":5}`)
	if err := (ledger{table: "ledger"}).book(context.Background(), r); !errors.Is(err, lambdaidem.ErrNoAttempt) {
		t.Errorf("outside an attempt: err %v, want ErrNoAttempt", err)
	}
}
