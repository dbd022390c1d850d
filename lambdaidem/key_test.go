package lambdaidem_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/lambdaidem/lambdaidem/lambdaidem"
)

func TestRecordKeySeparatesItsParts(t *testing.T) {
	base := lambdaidem.RecordKey("svc", "tenant-a", "Pay", "key-1")
	distinct := map[string]string{
		"other scope":     lambdaidem.RecordKey("svc", "tenant-b", "Pay", "key-1"),
		"other operation": lambdaidem.RecordKey("svc", "tenant-a", "Refund", "key-1"),
		"other key":       lambdaidem.RecordKey("svc", "tenant-a", "Pay", "key-2"),
		"shifted parts":   lambdaidem.RecordKey("svc", "tenant-aPay", "", "key-1"),
		"other namespace": lambdaidem.RecordKey("svc2", "tenant-a", "Pay", "key-1"),
	}
	for name, k := range distinct {
		if k == base {
			t.Errorf("%s gives the same record key", name)
		}
	}
	if !strings.HasPrefix(base, "svc#") || strings.Contains(base, "key-1") || strings.Contains(base, "tenant-a") {
		t.Errorf("record key %q: want namespace#hash with no raw part", base)
	}
	if base != lambdaidem.RecordKey("svc", "tenant-a", "Pay", "key-1") {
		t.Error("record key is not deterministic")
	}
}

func TestFingerprint(t *testing.T) {
	type order struct {
		ID    string            `json:"id"`
		Total int               `json:"total"`
		Tags  map[string]string `json:"tags"`
	}
	fp := func(v any) string {
		s, err := lambdaidem.Fingerprint(v)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	fpJSON := func(doc string) string {
		s, err := lambdaidem.FingerprintJSON([]byte(doc))
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	same := []struct{ name, a, b string }{
		{"key order and white space", fpJSON(`{"a":1,"b":[1,2]}`), fpJSON("{ \"b\" : [1, 2],\n \"a\": 1 }")},
		{"raw message", fp(json.RawMessage(`{"b":2,"a":1}`)), fpJSON(`{"a":1,"b":2}`)},
		{"map order", fp(order{"o", 5, map[string]string{"x": "1", "y": "2"}}), fp(order{"o", 5, map[string]string{"y": "2", "x": "1"}})},
	}
	for _, c := range same {
		if c.a != c.b {
			t.Errorf("%s: fingerprints differ", c.name)
		}
	}
	different := []struct{ name, a, b string }{
		{"value", fpJSON(`{"a":1}`), fpJSON(`{"a":2}`)},
		{"number text", fpJSON(`{"a":1}`), fpJSON(`{"a":1.0}`)},
		{"struct field", fp(order{ID: "o", Total: 5}), fp(order{ID: "o", Total: 6})},
	}
	for _, c := range different {
		if c.a == c.b {
			t.Errorf("%s: fingerprints equal", c.name)
		}
	}
	if _, err := lambdaidem.FingerprintJSON([]byte(`{"a":`)); err == nil {
		t.Error("malformed JSON fingerprinted without error")
	}
	if _, err := lambdaidem.FingerprintJSON([]byte(`{} {}`)); err == nil {
		t.Error("trailing JSON fingerprinted without error")
	}
}
