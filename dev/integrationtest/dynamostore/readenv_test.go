package dynamostore_test

import (
	"encoding/json"
	"maps"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/lambdaidem/lambdaidem/dynamostore"
)

// boundEnvironment is the environment the CDK construct's Table.Bind sets for
// a table with a renamed key schema and a sort key: cdk/lambdaidemcdk's
// TestBindEnvironmentIsTheGoldenOneTheExamplesRead checks that Bind writes exactly this file, and
// this test that dynamostore.ReadEnv reads all of it, so the two cannot drift.
const boundEnvironment = "../../../cdk/lambdaidemcdk/testdata/bound-environment.json"

func TestReadEnvReadsWhatTheCDKBindSets(t *testing.T) {
	b, err := os.ReadFile(boundEnvironment)
	if err != nil {
		t.Fatal(err)
	}
	var bound map[string]string
	if err := json.Unmarshal(b, &bound); err != nil {
		t.Fatal(err)
	}
	// Every variable Bind sets is one ReadEnv reads, and the other way round.
	read := []string{dynamostore.EnvTable, dynamostore.EnvTTL, dynamostore.EnvKeyAttr,
		dynamostore.EnvSortKeyAttr, dynamostore.EnvSortKeyValue, dynamostore.EnvExpirationAttr}
	if got := slices.Sorted(maps.Keys(bound)); !slices.Equal(got, slices.Sorted(slices.Values(read))) {
		t.Fatalf("Bind sets %v, ReadEnv reads %v", got, read)
	}
	got, err := dynamostore.ReadEnv(func(k string) string { return bound[k] })
	if err != nil {
		t.Fatal(err)
	}
	want := dynamostore.Env{
		Table: "orders-idempotency", RetryHorizon: 48 * time.Hour,
		KeyAttr: "pk", SortKeyAttr: "sk", SortKeyValue: "idempotency", ExpirationAttr: "ttl",
	}
	if got != want {
		t.Fatalf("ReadEnv = %+v, want %+v", got, want)
	}
	var o dynamostore.Options
	got.StoreOptions(&o)
	if want := (dynamostore.Options{KeyAttr: "pk", SortKeyAttr: "sk", SortKeyValue: "idempotency", ExpirationAttr: "ttl"}); o != want {
		t.Fatalf("StoreOptions gave %+v, want %+v", o, want)
	}
}
