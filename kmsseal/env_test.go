package kmsseal_test

import (
	"context"
	"reflect"
	"strings"
	"testing"

	"github.com/lambdaidem/lambdaidem/kmsseal"
	"github.com/lambdaidem/lambdaidem/lambdaidem/seal"
)

func TestReadEnv(t *testing.T) {
	tests := []struct {
		name    string
		env     map[string]string
		want    kmsseal.Env
		wantErr []string
	}{
		{name: "not sealing", env: map[string]string{}},
		{name: "a key ARN alone (the Sealer's default context)", env: map[string]string{"IDEMPOTENCY_SEAL_KEY": keyARN},
			want: kmsseal.Env{Key: keyARN}},
		{name: "all three, as BindSealing sets them", env: map[string]string{"IDEMPOTENCY_SEAL_KEY": "alias/payments-outcomes",
			"IDEMPOTENCY_SEAL_PREVIOUS_KEYS": keyARN + "," + key2ARN, "IDEMPOTENCY_SEAL_CONTEXT": `{"purpose":"lambdaidem-outcome","table":"t"}`},
			want: kmsseal.Env{Key: "alias/payments-outcomes", PreviousKeys: []string{keyARN, key2ARN},
				EncryptionContext: map[string]string{"purpose": "lambdaidem-outcome", "table": "t"}}},
		{name: "a context without a key", env: map[string]string{"IDEMPOTENCY_SEAL_CONTEXT": `{"purpose":"x"}`},
			wantErr: []string{"IDEMPOTENCY_SEAL_KEY is not set, but IDEMPOTENCY_SEAL_PREVIOUS_KEYS or IDEMPOTENCY_SEAL_CONTEXT is"}},
		{name: "every mistake at once", env: map[string]string{"IDEMPOTENCY_SEAL_KEY": " alias/x", "IDEMPOTENCY_SEAL_PREVIOUS_KEYS": "a,,b",
			"IDEMPOTENCY_SEAL_CONTEXT": `{"purpose":1}`},
			wantErr: []string{`IDEMPOTENCY_SEAL_KEY=" alias/x" has leading or trailing blanks`,
				`IDEMPOTENCY_SEAL_PREVIOUS_KEYS="a,,b": want key ARNs separated by commas`,
				`IDEMPOTENCY_SEAL_CONTEXT="{\"purpose\":1}": want a JSON object of strings`}},
		{name: "an empty context object", env: map[string]string{"IDEMPOTENCY_SEAL_KEY": "alias/x", "IDEMPOTENCY_SEAL_CONTEXT": `{}`},
			wantErr: []string{"want a JSON object of strings"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e, err := kmsseal.ReadEnv(func(k string) string { return tt.env[k] })
			if len(tt.wantErr) == 0 {
				if err != nil || !reflect.DeepEqual(e, tt.want) {
					t.Fatalf("ReadEnv = %+v, %v; want %+v", e, err, tt.want)
				}
				return
			}
			if err == nil {
				t.Fatalf("ReadEnv = %+v, want an error", e)
			}
			for _, w := range tt.wantErr {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
		})
	}
}

// The Sealer an Env describes resolves the alias and the previous key with
// DescribeKey, seals under the current key, and uses the Env's context: a
// Sealer with the default context cannot open what it sealed (the stand-in,
// like KMS, authenticates the context).
func TestEnvSealerUsesTheKeyAndTheContext(t *testing.T) {
	ks, client := newKMS(t)
	ks.pointAlias("alias/payments-outcomes", key2ARN)
	ctx := context.Background()
	e := kmsseal.Env{Key: "alias/payments-outcomes", PreviousKeys: []string{keyARN},
		EncryptionContext: map[string]string{"purpose": "lambdaidem-outcome", "table": "payments-idempotency"}}
	sealer, err := e.Sealer(ctx, client)
	if err != nil || sealer == nil {
		t.Fatalf("Sealer = %v, %v", sealer, err)
	}
	sealed, err := sealer.Seal(ctx, "Refund:r-1", []byte(`{"refund":"sent"}`))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := ks.requested("DescribeKey"), []string{"alias/payments-outcomes", keyARN}; !reflect.DeepEqual(got, want) {
		t.Fatalf("DescribeKey on %v, want %v", got, want)
	}
	if got := ks.requested("GenerateDataKey"); !reflect.DeepEqual(got, []string{key2ARN}) {
		t.Fatalf("GenerateDataKey on %v, want the key the alias names", got)
	}
	same, _ := e.Sealer(ctx, client)
	if plain, err := same.Open(ctx, "Refund:r-1", sealed); err != nil || string(plain) != `{"refund":"sent"}` {
		t.Fatalf("a cold Sealer of the same Env: Open = %q, %v", plain, err)
	}
	keys, _ := kmsseal.New(ctx, client, key2ARN)
	other, _ := seal.New(keys)
	if _, err := other.Open(ctx, "Refund:r-1", sealed); err == nil {
		t.Fatal("a Sealer with the default context opened it: the Env's context was not used")
	}
	if none, err := (kmsseal.Env{}).Sealer(ctx, client); none != nil || err != nil {
		t.Fatalf("no key: Sealer = %v, %v; want nil, nil", none, err)
	}
}
