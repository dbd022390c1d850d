package main

import (
	"strings"
	"testing"
	"time"

	"github.com/lambdaidem/lambdaidem/dynamostore"
)

func TestLoadConfig(t *testing.T) {
	tests := []struct {
		name    string
		env     map[string]string
		want    settings
		wantErr []string // every one must appear in the error
	}{
		{
			name: "defaults",
			env:  map[string]string{"IDEMPOTENCY_TABLE": "idem", "ORDERS_TABLE": "orders"},
			want: settings{Idempotency: dynamostore.Env{Table: "idem", RetryHorizon: 24 * time.Hour}, OrdersTable: "orders"},
		},
		{
			name: "TTL and the attribute names the CDK binds",
			env: map[string]string{"IDEMPOTENCY_TABLE": "idem", "ORDERS_TABLE": "orders", "IDEMPOTENCY_TTL": "96h",
				"IDEMPOTENCY_KEY_ATTR": "id", "IDEMPOTENCY_EXPIRATION_ATTR": "expiration"},
			want: settings{Idempotency: dynamostore.Env{Table: "idem", RetryHorizon: 96 * time.Hour, KeyAttr: "id", ExpirationAttr: "expiration"},
				OrdersTable: "orders"},
		},
		{
			name:    "nothing set: every missing variable named",
			env:     map[string]string{},
			wantErr: []string{"IDEMPOTENCY_TABLE is not set", "ORDERS_TABLE is not set"},
		},
		{
			name: "the outbox: order accepted events",
			env:  map[string]string{"IDEMPOTENCY_TABLE": "idem", "ORDERS_TABLE": "orders", "OUTBOX_TABLE": "outbox", "ORDER_ACCEPTED_QUEUE": "https://q.fifo"},
			want: settings{Idempotency: dynamostore.Env{Table: "idem", RetryHorizon: 24 * time.Hour, OutboxTable: "outbox"}, OrdersTable: "orders",
				AcceptedQueue: "https://q.fifo"},
		},
		{
			name:    "an outbox without its queue",
			env:     map[string]string{"IDEMPOTENCY_TABLE": "idem", "ORDERS_TABLE": "orders", "OUTBOX_TABLE": "outbox"},
			wantErr: []string{"OUTBOX_TABLE and ORDER_ACCEPTED_QUEUE go together"},
		},
		{
			name:    "TTL not a duration",
			env:     map[string]string{"IDEMPOTENCY_TABLE": "idem", "ORDERS_TABLE": "orders", "IDEMPOTENCY_TTL": "4 days"},
			wantErr: []string{`IDEMPOTENCY_TTL="4 days" is not a Go duration`},
		},
		{
			name:    "TTL not positive",
			env:     map[string]string{"IDEMPOTENCY_TABLE": "idem", "ORDERS_TABLE": "orders", "IDEMPOTENCY_TTL": "-1h"},
			wantErr: []string{"must be at least one second"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := loadConfig(func(k string) string { return tt.env[k] })
			if len(tt.wantErr) == 0 {
				if err != nil || got != tt.want {
					t.Fatalf("loadConfig = %+v, %v; want %+v", got, err, tt.want)
				}
				return
			}
			if err == nil {
				t.Fatalf("loadConfig = %+v, want an error", got)
			}
			for _, want := range tt.wantErr {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q lacks %q", err, want)
				}
			}
		})
	}
}
