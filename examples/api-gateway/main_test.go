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
	_, err = readSettings(env(map[string]string{"IDEMPOTENCY_TTL": "soon"}))
	for _, want := range []string{"IDEMPOTENCY_TABLE is not set", "PAYMENTS_TABLE is not set", `IDEMPOTENCY_TTL="soon"`} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error %v does not say %q", err, want)
		}
	}
}
