package payments_test

import (
	"encoding/json"
	"strings"
	"testing"
)

const valid = `{"amount": 1250, "currency": "EUR", "reference": "inv-1001"}`

func decodePayment(t *testing.T, body string) map[string]any {
	t.Helper()
	var p map[string]any
	if err := json.Unmarshal([]byte(body), &p); err != nil {
		t.Fatalf("body %q: %v", body, err)
	}
	return p
}

func TestCreateThenReplayThenGet(t *testing.T) {
	e := setup(t)
	first := e.do(t, "POST", "/payments", "key-1", "alice", valid)
	if first.StatusCode != 201 {
		t.Fatalf("POST: %d %s", first.StatusCode, first.Body)
	}
	p := decodePayment(t, first.Body)
	id, _ := p["id"].(string)
	if !strings.HasPrefix(id, "pay_") || p["amount"] != 1250.0 || p["currency"] != "EUR" || p["reference"] != "inv-1001" || p["created_at"] == "" {
		t.Errorf("payment %v", p)
	}
	if first.Headers["Location"] != "/payments/"+id {
		t.Errorf("Location %q", first.Headers["Location"])
	}
	if n := e.count(t, e.paymentsTable); n != 1 {
		t.Errorf("%d payment items after one POST", n)
	}
	if n := e.count(t, e.idempotencyTable); n != 1 {
		t.Errorf("%d idempotency records after one POST", n)
	}

	second := e.do(t, "POST", "/payments", "key-1", "alice", valid)
	if second.StatusCode != 201 || second.Body != first.Body || second.Headers["Idempotent-Replayed"] != "true" {
		t.Errorf("retry: %d %s %v; want the first 201 replayed", second.StatusCode, second.Body, second.Headers)
	}
	if n := e.count(t, e.paymentsTable); n != 1 {
		t.Errorf("%d payment items after a retry", n)
	}

	got := e.do(t, "GET", "/payments/"+id, "", "alice", "")
	if got.StatusCode != 200 || got.Body != first.Body {
		t.Errorf("GET: %d %s, want %s", got.StatusCode, got.Body, first.Body)
	}
	missing := e.do(t, "GET", "/payments/pay_nope", "", "alice", "")
	if missing.StatusCode != 404 || missing.Headers["Content-Type"] != "application/problem+json" {
		t.Errorf("GET missing: %d %s", missing.StatusCode, missing.Body)
	}
}

func TestInvalidPaymentsAre400AndNotStored(t *testing.T) {
	cases := map[string]string{
		"not JSON":           `amount=1250`,
		"truncated":          `{"amount": 1250,`,
		"two values":         valid + valid,
		"unknown field":      `{"amount": 1250, "currency": "EUR", "reference": "x", "extra": 1}`,
		"no amount":          `{"currency": "EUR", "reference": "x"}`,
		"zero amount":        `{"amount": 0, "currency": "EUR", "reference": "x"}`,
		"negative amount":    `{"amount": -5, "currency": "EUR", "reference": "x"}`,
		"fractional amount":  `{"amount": 12.5, "currency": "EUR", "reference": "x"}`,
		"amount as string":   `{"amount": "1250", "currency": "EUR", "reference": "x"}`,
		"huge amount":        `{"amount": 99999999999999999999, "currency": "EUR", "reference": "x"}`,
		"lower-case code":    `{"amount": 1250, "currency": "eur", "reference": "x"}`,
		"four-letter code":   `{"amount": 1250, "currency": "EURO", "reference": "x"}`,
		"no reference":       `{"amount": 1250, "currency": "EUR"}`,
		"too long reference": `{"amount": 1250, "currency": "EUR", "reference": "` + strings.Repeat("r", 129) + `"}`,
	}
	e := setup(t)
	for name, body := range cases {
		t.Run(name, func(t *testing.T) {
			key := "bad-" + strings.ReplaceAll(name, " ", "-")
			r := e.do(t, "POST", "/payments", key, "alice", body)
			if r.StatusCode != 400 || r.Headers["Content-Type"] != "application/problem+json" {
				t.Errorf("%d %s", r.StatusCode, r.Body)
			}
			if r.Headers["Idempotent-Replayed"] != "" {
				t.Error("a 400 was replayed")
			}
		})
	}
	if n := e.count(t, e.paymentsTable); n != 0 {
		t.Errorf("%d payment items after invalid requests", n)
	}
	if n := e.count(t, e.idempotencyTable); n != 0 {
		t.Errorf("%d idempotency records after invalid requests: a 400 must not be stored", n)
	}
	// The key was released: the client fixes the request and reuses it.
	if r := e.do(t, "POST", "/payments", "bad-zero-amount", "alice", valid); r.StatusCode != 201 {
		t.Errorf("fixed request with the same key: %d %s", r.StatusCode, r.Body)
	}
}

func TestTwoPrincipalsSameKeyMakeTwoPayments(t *testing.T) {
	e := setup(t)
	a := e.do(t, "POST", "/payments", "shared-key", "alice", valid)
	b := e.do(t, "POST", "/payments", "shared-key", "bob", valid)
	if a.StatusCode != 201 || b.StatusCode != 201 || a.Body == b.Body || b.Headers["Idempotent-Replayed"] != "" {
		t.Errorf("alice %d %s, bob %d %s: want two distinct payments", a.StatusCode, a.Body, b.StatusCode, b.Body)
	}
	if n := e.count(t, e.paymentsTable); n != 2 {
		t.Errorf("%d payment items, want 2", n)
	}
}

func TestSameKeyOtherPaymentIs422(t *testing.T) {
	e := setup(t)
	e.do(t, "POST", "/payments", "key-9", "alice", valid)
	r := e.do(t, "POST", "/payments", "key-9", "alice", `{"amount": 999, "currency": "EUR", "reference": "inv-1001"}`)
	if r.StatusCode != 422 || strings.Contains(r.Body, "pay_") {
		t.Errorf("%d %s", r.StatusCode, r.Body)
	}
}

func TestMissingKeyIs400(t *testing.T) {
	e := setup(t)
	if r := e.do(t, "POST", "/payments", "", "alice", valid); r.StatusCode != 400 {
		t.Errorf("%d %s", r.StatusCode, r.Body)
	}
	if n := e.count(t, e.paymentsTable); n != 0 {
		t.Errorf("%d payment items", n)
	}
}
