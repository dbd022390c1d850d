package idemenv_test

import (
	"encoding/json"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/lambdaidem/lambdaidem/dynamostore"
	"github.com/lambdaidem/lambdaidem/examples/internal/idemenv"
)

// boundEnvironment is the environment lambdaidemcdk's Table.Bind sets for a
// table with a renamed key schema and a sort key; the CDK module's test
// checks that Bind writes exactly this, so the two sides cannot drift apart.
const boundEnvironment = "../../../cdk/lambdaidemcdk/testdata/bound-environment.json"

func TestReadParsesWhatTheCDKBindSets(t *testing.T) {
	b, err := os.ReadFile(boundEnvironment)
	if err != nil {
		t.Fatal(err)
	}
	var env map[string]string
	if err := json.Unmarshal(b, &env); err != nil {
		t.Fatal(err)
	}
	if len(env) != 6 {
		t.Fatalf("the golden environment has %d variables, want all 6: %v", len(env), env)
	}

	s, err := idemenv.Read(func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	want := idemenv.Settings{
		Table: "orders-idempotency", Horizon: 48 * time.Hour,
		KeyAttr: "pk", SortKeyAttr: "sk", SortKeyValue: "idempotency", ExpirationAttr: "ttl",
	}
	if s != want {
		t.Fatalf("Read = %+v, want %+v", s, want)
	}

	var o dynamostore.Options
	s.StoreOptions(&o)
	if wantOpts := (dynamostore.Options{KeyAttr: "pk", SortKeyAttr: "sk", SortKeyValue: "idempotency", ExpirationAttr: "ttl"}); !reflect.DeepEqual(o, wantOpts) {
		t.Fatalf("StoreOptions gave %+v, want %+v", o, wantOpts)
	}
}

func TestRead(t *testing.T) {
	tests := []struct {
		name    string
		env     map[string]string
		want    idemenv.Settings
		wantErr []string // every one must appear in the error
	}{
		{
			name: "only the table: the store's attribute defaults, a 24h horizon",
			env:  map[string]string{"IDEMPOTENCY_TABLE": "idem"},
			want: idemenv.Settings{Table: "idem", Horizon: 24 * time.Hour},
		},
		{
			name: "what Bind sets for a default table",
			env: map[string]string{"IDEMPOTENCY_TABLE": "idem", "IDEMPOTENCY_TTL": "96h0m0s",
				"IDEMPOTENCY_KEY_ATTR": "id", "IDEMPOTENCY_EXPIRATION_ATTR": "expiration"},
			want: idemenv.Settings{Table: "idem", Horizon: 96 * time.Hour, KeyAttr: "id", ExpirationAttr: "expiration"},
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
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := idemenv.Read(func(k string) string { return tt.env[k] })
			if len(tt.wantErr) == 0 {
				if err != nil || got != tt.want {
					t.Fatalf("Read = %+v, %v; want %+v", got, err, tt.want)
				}
				return
			}
			if err == nil {
				t.Fatalf("Read = %+v, want an error", got)
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
// out, and the store accepts the result.
func TestStoreOptionsKeepTheStoreDefaults(t *testing.T) {
	var o dynamostore.Options
	idemenv.Settings{Table: "idem"}.StoreOptions(&o)
	if !reflect.DeepEqual(o, dynamostore.Options{}) {
		t.Fatalf("StoreOptions of empty settings changed the options: %+v", o)
	}
}

// The store takes the settings as they come and refuses names that collide.
func TestTheStoreValidatesTheSettings(t *testing.T) {
	client := dynamodb.New(dynamodb.Options{Region: "us-east-1"})
	good := idemenv.Settings{Table: "idem", KeyAttr: "pk", SortKeyAttr: "sk", SortKeyValue: "v", ExpirationAttr: "ttl"}
	if _, err := dynamostore.New(client, good.Table, good.StoreOptions); err != nil {
		t.Fatalf("dynamostore.New refused %+v: %v", good, err)
	}
	bad := idemenv.Settings{Table: "idem", KeyAttr: "ttl", ExpirationAttr: "ttl"}
	if _, err := dynamostore.New(client, bad.Table, bad.StoreOptions); err == nil {
		t.Fatalf("dynamostore.New accepted %+v, whose key and TTL attributes collide", bad)
	}
}
