package dynamostore_test

import (
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/lambdaidem/lambdaidem/dynamostore"
)

// TestNewValidates: New refuses what cannot work, with an error, never a
// panic.
func TestNewValidates(t *testing.T) {
	client := dynamodb.New(dynamodb.Options{Region: "us-east-1"})
	for _, c := range []struct {
		name   string
		client dynamostore.Client
		table  string
		opt    func(*dynamostore.Options)
		want   string
	}{
		{"NilClient", nil, "t", nil, "nil client"},
		{"NoTable", client, "", nil, "empty table"},
		{"SameNames", client, "t", func(o *dynamostore.Options) { o.DataAttr = "status" }, `StatusAttr and DataAttr are both "status"`},
		{"SortKeyIsKey", client, "t", func(o *dynamostore.Options) { o.SortKeyAttr = "id"; o.SortKeyValue = "x" }, "both"},
		{"SortKeyWithoutValue", client, "t", func(o *dynamostore.Options) { o.SortKeyAttr = "sk" }, "SortKeyValue is required"},
		{"NegativeBackoff", client, "t", func(o *dynamostore.Options) { o.ConflictBackoff = -time.Second }, "negative"},
		{"MaxBelowBase", client, "t", func(o *dynamostore.Options) { o.ConflictBackoff = time.Second; o.ConflictMaxBackoff = time.Millisecond }, "shorter"},
	} {
		t.Run(c.name, func(t *testing.T) {
			var opts []func(*dynamostore.Options)
			if c.opt != nil {
				opts = append(opts, c.opt)
			}
			s, err := dynamostore.New(c.client, c.table, opts...)
			if err == nil || !strings.Contains(err.Error(), c.want) || s != nil {
				t.Fatalf("New = %v, %v; want an error saying %q", s, err, c.want)
			}
		})
	}
}

// TestDefaults: the zero Options are Powertools' attribute names and the
// documented retry settings.
func TestDefaults(t *testing.T) {
	s, err := dynamostore.New(dynamodb.New(dynamodb.Options{Region: "us-east-1"}), "idempotency")
	if err != nil {
		t.Fatal(err)
	}
	want := dynamostore.Options{
		KeyAttr: "id", StatusAttr: "status", ExpirationAttr: "expiration", InProgressExpirationAttr: "in_progress_expiration",
		ValidationAttr: "validation", DataAttr: "data", AttemptAttr: "attempt", AttemptsAttr: "attempts",
		CreatedAtAttr: "created_at", CompletedAtAttr: "completed_at", ExternalAttr: "external", RenewedAtAttr: "renewed_at",
		RenewsAttr: "renews", HoldUntilAttr: "hold_until", DispatchedAtAttr: "dispatched_at", DispatchWindowAttr: "dispatch_window", MaxRunTime: 30 * time.Minute,
		ConflictRetries: 8, ConflictBackoff: 25 * time.Millisecond, ConflictMaxBackoff: 400 * time.Millisecond,
	}
	if got := s.Options(); got != want {
		t.Fatalf("defaults = %+v; want %+v", got, want)
	}
	if s.Table() != "idempotency" {
		t.Fatalf("Table() = %q", s.Table())
	}
	s, _ = dynamostore.New(dynamodb.New(dynamodb.Options{}), "t", func(o *dynamostore.Options) { o.ConflictRetries = -1 })
	if s.Options().ConflictRetries != 0 {
		t.Fatalf("ConflictRetries -1 gives %d; want 0 (no retries)", s.Options().ConflictRetries)
	}
}
