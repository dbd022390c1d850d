package dynamostore_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/lambdaidem/lambdaidem/dynamostore"
	"github.com/lambdaidem/lambdaidem/lambdaidem"
)

// The settings the CDK construct's variables give, and every missing or bad
// variable named at once. (That ReadEnv reads exactly what Table.Bind writes
// is tested against the construct's own output in the repository's
// dev/integrationtest/dynamostore.)
func TestReadEnv(t *testing.T) {
	tests := []struct {
		name    string
		env     map[string]string
		want    dynamostore.Env
		wantErr []string // every one must appear in the error
	}{
		{
			name: "only the table: the store's attribute defaults, a 24h horizon",
			env:  map[string]string{"IDEMPOTENCY_TABLE": "idem"},
			want: dynamostore.Env{Table: "idem", RetryHorizon: 24 * time.Hour},
		},
		{
			name: "what Bind sets for a default table",
			env: map[string]string{"IDEMPOTENCY_TABLE": "idem", "IDEMPOTENCY_TTL": "96h0m0s",
				"IDEMPOTENCY_KEY_ATTR": "id", "IDEMPOTENCY_EXPIRATION_ATTR": "expiration"},
			want: dynamostore.Env{Table: "idem", RetryHorizon: 96 * time.Hour, KeyAttr: "id", ExpirationAttr: "expiration"},
		},
		{
			name: "a sort key and its value",
			env: map[string]string{"IDEMPOTENCY_TABLE": "idem", "IDEMPOTENCY_SORT_KEY_ATTR": "sk",
				"IDEMPOTENCY_SORT_KEY_VALUE": "idempotency"},
			want: dynamostore.Env{Table: "idem", RetryHorizon: 24 * time.Hour, SortKeyAttr: "sk", SortKeyValue: "idempotency"},
		},
		{
			name: "what GrantStage and Bind of a function in tenant isolation mode add",
			env: map[string]string{"IDEMPOTENCY_TABLE": "idem", "OUTBOX_TABLE": "outbox",
				"IDEMPOTENCY_TENANTS": "required"},
			want: dynamostore.Env{Table: "idem", RetryHorizon: 24 * time.Hour, OutboxTable: "outbox", Tenants: true},
		},
		{
			name:    "a tenants declaration that is not one",
			env:     map[string]string{"IDEMPOTENCY_TABLE": "idem", "IDEMPOTENCY_TENANTS": "true"},
			wantErr: []string{`IDEMPOTENCY_TENANTS="true"`},
		},
		{
			name:    "nothing set",
			env:     map[string]string{},
			wantErr: []string{"IDEMPOTENCY_TABLE is not set"},
		},
		{
			name:    "a sort key without its value, and a bad TTL: both named",
			env:     map[string]string{"IDEMPOTENCY_TABLE": "idem", "IDEMPOTENCY_SORT_KEY_ATTR": "sk", "IDEMPOTENCY_TTL": "4 days"},
			wantErr: []string{"IDEMPOTENCY_SORT_KEY_ATTR and IDEMPOTENCY_SORT_KEY_VALUE are set together", `IDEMPOTENCY_TTL="4 days" is not a Go duration`},
		},
		{
			name:    "a sort key value without the attribute",
			env:     map[string]string{"IDEMPOTENCY_TABLE": "idem", "IDEMPOTENCY_SORT_KEY_VALUE": "v"},
			wantErr: []string{"set together or not at all"},
		},
		{
			name:    "a horizon under one second",
			env:     map[string]string{"IDEMPOTENCY_TABLE": "idem", "IDEMPOTENCY_TTL": "500ms"},
			wantErr: []string{`IDEMPOTENCY_TTL="500ms" must be at least one second`},
		},
		{
			name:    "a negative horizon",
			env:     map[string]string{"IDEMPOTENCY_TABLE": "idem", "IDEMPOTENCY_TTL": "-1h"},
			wantErr: []string{"must be at least one second"},
		},
		{
			name:    "blanks around a name",
			env:     map[string]string{"IDEMPOTENCY_TABLE": "idem", "IDEMPOTENCY_KEY_ATTR": " pk"},
			wantErr: []string{`IDEMPOTENCY_KEY_ATTR=" pk" has leading or trailing blanks`},
		},
		{
			name:    "a table name of blanks is set, and bad",
			env:     map[string]string{"IDEMPOTENCY_TABLE": "  "},
			wantErr: []string{`IDEMPOTENCY_TABLE="  " has leading or trailing blanks`},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := dynamostore.ReadEnv(func(k string) string { return tt.env[k] })
			if len(tt.wantErr) == 0 {
				if err != nil || got != tt.want {
					t.Fatalf("ReadEnv = %+v, %v; want %+v", got, err, tt.want)
				}
				return
			}
			if !errors.Is(err, dynamostore.ErrEnvironment) {
				t.Fatalf("ReadEnv = %+v, %v; want an error matching ErrEnvironment", got, err)
			}
			for _, want := range tt.wantErr {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q lacks %q", err, want)
				}
			}
		})
	}
}

// StoreOptions keeps the store's defaults for what the environment leaves
// out; GuardOptions sets the horizon, and a zero Env keeps the Guard's.
func TestEnvOptionsKeepTheDefaults(t *testing.T) {
	var o dynamostore.Options
	dynamostore.Env{Table: "idem"}.StoreOptions(&o)
	if o != (dynamostore.Options{}) {
		t.Fatalf("StoreOptions of an Env without attributes changed the options: %+v", o)
	}
	dynamostore.Env{Table: "idem", OutboxTable: "outbox"}.StoreOptions(&o)
	if o.OutboxTable != "outbox" {
		t.Fatalf("StoreOptions did not set the outbox table: %+v", o)
	}
	g := lambdaidem.Options{RetryHorizon: time.Hour}
	dynamostore.Env{}.GuardOptions(&g)
	if g.RetryHorizon != time.Hour {
		t.Fatalf("GuardOptions of a zero Env set RetryHorizon to %v", g.RetryHorizon)
	}
	dynamostore.Env{RetryHorizon: 48 * time.Hour}.GuardOptions(&g)
	if g.RetryHorizon != 48*time.Hour {
		t.Fatalf("GuardOptions set RetryHorizon to %v, want 48h", g.RetryHorizon)
	}
}

// The store takes the settings as they come and refuses names that collide.
func TestTheStoreValidatesTheEnv(t *testing.T) {
	client := dynamodb.New(dynamodb.Options{Region: "us-east-1"})
	good := dynamostore.Env{Table: "idem", KeyAttr: "pk", SortKeyAttr: "sk", SortKeyValue: "v", ExpirationAttr: "ttl"}
	if _, err := dynamostore.New(client, good.Table, good.StoreOptions); err != nil {
		t.Fatalf("dynamostore.New refused %+v: %v", good, err)
	}
	bad := dynamostore.Env{Table: "idem", KeyAttr: "ttl", ExpirationAttr: "ttl"}
	if _, err := dynamostore.New(client, bad.Table, bad.StoreOptions); err == nil {
		t.Fatalf("dynamostore.New accepted %+v, whose key and TTL attributes collide", bad)
	}
}
