package lambdaidem_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/lambdaidem/lambdaidem/lambdaidem"
)

// A document whose objects hold a name twice, as encoding/json matches
// names, is hashed as its bytes: its canonical form would keep a value the
// handler's decoder ignores (the last one wins there, even a null) or keep
// both spellings where the decoder keeps one. Each pair below decodes into
// different values of a struct with a Currency field, so each pair must
// fingerprint differently.
func TestFingerprintJSONDuplicateNames(t *testing.T) {
	pairs := []struct{ name, a, b string }{
		{"exact duplicate, last is null",
			`{"amount":1000,"currency":"EUR","reference":"r1","currency":null}`,
			`{"amount":1000,"currency":"USD","reference":"r1","currency":null}`},
		{"exact duplicate, order swapped",
			`{"currency":"EUR","currency":"USD"}`,
			`{"currency":"USD","currency":"EUR"}`},
		{"case-folded duplicate, order swapped",
			`{"Currency":"EUR","currency":"USD"}`,
			`{"currency":"USD","Currency":"EUR"}`},
		{"Kelvin sign folds to k",
			"{\"kind\":\"refund\",\"\u212aind\":\"charge\"}",
			"{\"\u212aind\":\"charge\",\"kind\":\"refund\"}"},
		{"long s folds to s",
			"{\"status\":\"a\",\"\u017ftatus\":\"b\"}",
			"{\"\u017ftatus\":\"b\",\"status\":\"a\"}"},
		{"nested duplicate",
			`{"items":[{"sku":"a","qty":1,"QTY":2}]}`,
			`{"items":[{"sku":"a","QTY":2,"qty":1}]}`},
	}
	for _, p := range pairs {
		t.Run(p.name, func(t *testing.T) {
			a, errA := lambdaidem.FingerprintJSON([]byte(p.a))
			b, errB := lambdaidem.FingerprintJSON([]byte(p.b))
			if errA != nil || errB != nil {
				t.Fatalf("errors %v, %v", errA, errB)
			}
			if a == b {
				t.Errorf("%s and %s share fingerprint %s", p.a, p.b, a)
			}
			if a != lambdaidem.FingerprintBytes([]byte(p.a)) {
				t.Errorf("%s: want the fingerprint of its bytes", p.a)
			}
		})
	}
	// Names that are distinct for the decoder keep the canonical form.
	x, _ := lambdaidem.FingerprintJSON([]byte(`{"a":{"id":1},"b":{"id":2}}`))
	y, _ := lambdaidem.FingerprintJSON([]byte(`{"b":{"id":2}, "a":{"id":1}}`))
	if x != y {
		t.Error("one name in two sibling objects was taken for a duplicate")
	}
}

// A document above MaxCanonicalJSON is hashed as bytes, without being
// decoded: key order then matters, and invalid JSON is not detected.
func TestFingerprintJSONAboveTheLimitHashesBytes(t *testing.T) {
	pad := strings.Repeat("x", lambdaidem.MaxCanonicalJSON)
	doc := []byte(`{"a":1,"note":"` + pad + `"}`)
	fp, err := lambdaidem.FingerprintJSON(doc)
	if err != nil || fp != lambdaidem.FingerprintBytes(doc) {
		t.Fatalf("got %s, %v; want the fingerprint of the bytes", fp, err)
	}
	reordered := []byte(`{"note":"` + pad + `","a":1}`)
	if other, _ := lambdaidem.FingerprintJSON(reordered); other == fp {
		t.Error("two different byte strings above the limit share a fingerprint")
	}
	small := bytes.Repeat([]byte(" "), lambdaidem.MaxCanonicalJSON-len(`{"a":1}`))
	small = append(small, `{"a":1}`...)
	want, _ := lambdaidem.FingerprintJSON([]byte(`{"a":1}`))
	if got, _ := lambdaidem.FingerprintJSON(small); got != want {
		t.Error("a document of exactly MaxCanonicalJSON bytes was not canonicalized")
	}
}
