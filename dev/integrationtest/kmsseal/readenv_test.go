package kmsseal_test

import (
	"encoding/json"
	"maps"
	"os"
	"reflect"
	"slices"
	"testing"

	"github.com/lambdaidem/lambdaidem/kmsseal"
)

// sealingEnvironment is the environment the CDK construct's BindSealing sets
// for an alias, a previous key and a context of two pairs:
// cdk/lambdaidemcdk's TestBindSealingEnvironmentIsTheGoldenOneTheExamplesRead
// checks that BindSealing writes exactly this file, and this test that
// kmsseal.ReadEnv reads all of it, so the two cannot drift.
const sealingEnvironment = "../../../cdk/lambdaidemcdk/testdata/sealing-environment.json"

func TestReadEnvReadsWhatTheCDKBindSealingSets(t *testing.T) {
	b, err := os.ReadFile(sealingEnvironment)
	if err != nil {
		t.Fatal(err)
	}
	var bound map[string]string
	if err := json.Unmarshal(b, &bound); err != nil {
		t.Fatal(err)
	}
	read := []string{kmsseal.EnvKey, kmsseal.EnvPreviousKeys, kmsseal.EnvContext}
	if got := slices.Sorted(maps.Keys(bound)); !slices.Equal(got, slices.Sorted(slices.Values(read))) {
		t.Fatalf("BindSealing sets %v, ReadEnv reads %v", got, read)
	}
	got, err := kmsseal.ReadEnv(func(k string) string { return bound[k] })
	if err != nil {
		t.Fatal(err)
	}
	want := kmsseal.Env{
		Key:               "alias/payments-outcomes",
		PreviousKeys:      []string{"arn:aws:kms:eu-west-1:111122223333:key/1234abcd-12ab-34cd-56ef-1234567890ab"},
		EncryptionContext: map[string]string{"purpose": "lambdaidem-outcome", "table": "payments-idempotency"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("ReadEnv = %+v, want %+v", got, want)
	}
}
