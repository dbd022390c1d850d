package main

import (
	"context"
	"strings"
	"testing"

	"github.com/lambdaidem/lambdaidem/dynamostore"
	"github.com/lambdaidem/lambdaidem/lambdaidem"
	"github.com/lambdaidem/lambdaidem/lambdaidem/seal"
	"github.com/lambdaidem/lambdaidem/lambdaidem/seal/sealtest"
)

// On a table whose functions seal outcomes, --kms-key gives the command
// their Sealer: resolve --done stores a sealed outcome the functions
// replay, show --reveal prints the opened outcome. Without it both refuse
// (exit 9) with a message naming the flag, and nothing is written.
func TestSealedTable(t *testing.T) {
	w := newWorld(t)
	w.keys = sealtest.New()
	sealer, err := seal.New(w.keys)
	if err != nil {
		t.Fatal(err)
	}
	store, err := dynamostore.New(w.client, w.table)
	if err != nil {
		t.Fatal(err)
	}
	w.guard, err = lambdaidem.New(store, func(o *lambdaidem.Options) { o.Sealer = sealer })
	if err != nil {
		t.Fatal(err)
	}
	key := w.unknown(t, "pay-sealed")

	w.cli(t, "", "resolve", "--done", "--outcome", `"charged"`, key).expect(t, exitSealed, "", "--kms-key")
	w.cli(t, "", "show", key).expect(t, exitOK, "UNKNOWN", "")
	w.cli(t, "", "resolve", "--done", "--outcome", `"charged"`, "--kms-key", "alias/outcomes", key).expect(t, exitOK, "as done", "")
	out, err := lambdaidem.Do(context.Background(), w.guard, payCall("pay-sealed"), func(context.Context) (string, error) {
		t.Fatal("ran again")
		return "", nil
	})
	if err != nil || out != "charged" {
		t.Fatalf("the functions' duplicate = %q, %v; want the operator's outcome", out, err)
	}
	w.cli(t, "", "show", "--reveal", key).expect(t, exitSealed, "", "--kms-key")
	r := w.cli(t, "", "show", "--reveal", "--kms-key", "alias/outcomes", key)
	r.expect(t, exitOK, `"charged"`, "")
	if strings.Contains(r.out, "LIS1") {
		t.Fatalf("show printed ciphertext:\n%s", r.out)
	}
}
