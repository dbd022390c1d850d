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
	w := sealedWorld(t)
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

// Functions whose Sealer has an encryption context of its own (as
// lambdaidemcdk.BindSealing sets in IDEMPOTENCY_SEAL_CONTEXT): the
// command seals with it from --kms-context or that variable. Without it,
// resolve --done refuses (the outcome would never open for the functions:
// KMS Decrypt fails on another encryption context, AWS KMS Developer
// Guide, "Encryption context") and writes nothing.
func TestSealedTableWithAnEncryptionContext(t *testing.T) {
	w := sealedWorld(t, func(o *seal.Options) { o.EncryptionContext = map[string]string{"purpose": "payments-outcome"} })
	key := w.unknown(t, "pay-context")

	w.cli(t, "", "resolve", "--done", "--outcome", `"charged"`, "--kms-key", "alias/outcomes", key).expect(t, exitFailure, "", "--kms-context")
	w.cli(t, "", "show", key).expect(t, exitOK, "UNKNOWN", "")
	w.cli(t, "", "resolve", "--done", "--outcome", `"charged"`, "--kms-key", "alias/outcomes", "--kms-context", `{"purpose":"payments-outcome"}`, key).expect(t, exitOK, "as done", "")
	out, err := lambdaidem.Do(context.Background(), w.guard, payCall("pay-context"), func(context.Context) (string, error) {
		t.Fatal("ran again")
		return "", nil
	})
	if err != nil || out != "charged" {
		t.Fatalf("the functions' duplicate = %q, %v; want the operator's outcome", out, err)
	}
	var r result
	var buf, errBuf strings.Builder
	code := run(context.Background(), []string{"show", "--reveal", "--kms-key", "alias/outcomes", key}, streams{in: strings.NewReader(""), out: &buf, err: &errBuf},
		w.env(map[string]string{"AWS_ENDPOINT_URL_DYNAMODB": w.ep.URL, "IDEMPOTENCY_SEAL_CONTEXT": `{"purpose":"payments-outcome"}`}))
	r = result{code, buf.String(), errBuf.String()}
	r.expect(t, exitOK, `"charged"`, "")
	w.cli(t, "", "show", "--reveal", "--kms-key", "alias/outcomes", "--kms-context", `{"purpose"`, key).expect(t, exitUsage, "", "--kms-context")
}

// sealedWorld is a world whose functions seal outcomes with a Sealer of
// the options over the key service --kms-key names.
func sealedWorld(t *testing.T, optFns ...func(*seal.Options)) *world {
	t.Helper()
	w := newWorld(t)
	w.keys = sealtest.New()
	sealer, err := seal.New(w.keys, optFns...)
	if err != nil {
		t.Fatal(err)
	}
	store, err := dynamostore.New(w.client, w.table)
	if err != nil {
		t.Fatal(err)
	}
	if w.guard, err = lambdaidem.New(store, func(o *lambdaidem.Options) { o.Sealer = sealer }); err != nil {
		t.Fatal(err)
	}
	return w
}
