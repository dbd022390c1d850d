package main

import (
	"strings"
	"testing"
	"time"
)

func TestReadSettings(t *testing.T) {
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	s, err := readSettings(env(map[string]string{"IDEMPOTENCY_TABLE": "idem", "PAYMENTS_TABLE": "pay"}))
	if err != nil || s.idempotency.RetryHorizon != 24*time.Hour || s.idempotency.Table != "idem" || s.paymentsTable != "pay" {
		t.Errorf("defaults: %+v %v", s, err)
	}
	s, err = readSettings(env(map[string]string{"IDEMPOTENCY_TABLE": "idem", "PAYMENTS_TABLE": "pay", "IDEMPOTENCY_TTL": "48h",
		"IDEMPOTENCY_KEY_ATTR": "pk", "IDEMPOTENCY_EXPIRATION_ATTR": "ttl"}))
	if err != nil || s.idempotency.RetryHorizon != 48*time.Hour || s.idempotency.KeyAttr != "pk" || s.idempotency.ExpirationAttr != "ttl" {
		t.Errorf("TTL and attribute names: %+v %v", s, err)
	}
	s, err = readSettings(env(map[string]string{"IDEMPOTENCY_TABLE": "idem", "PAYMENTS_TABLE": "pay",
		"IDEMPOTENCY_SEAL_KEY": "alias/lambdaidem-payments-outcomes", "IDEMPOTENCY_SEAL_CONTEXT": `{"purpose":"lambdaidem-outcome"}`}))
	if err != nil || s.sealing.Key != "alias/lambdaidem-payments-outcomes" || s.sealing.EncryptionContext["purpose"] != "lambdaidem-outcome" {
		t.Errorf("sealing, as the CDK stack's -c sealing=true sets it: %+v %v", s, err)
	}
	_, err = readSettings(env(map[string]string{"IDEMPOTENCY_TABLE": "idem", "PAYMENTS_TABLE": "pay", "IDEMPOTENCY_SEAL_CONTEXT": "{}"}))
	if err == nil || !strings.Contains(err.Error(), "IDEMPOTENCY_SEAL_KEY is not set") {
		t.Errorf("a sealing context without a key: %v", err)
	}
	_, err = readSettings(env(map[string]string{"IDEMPOTENCY_TTL": "soon"}))
	for _, want := range []string{"IDEMPOTENCY_TABLE is not set", "PAYMENTS_TABLE is not set", `IDEMPOTENCY_TTL="soon"`} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error %v does not say %q", err, want)
		}
	}
}
