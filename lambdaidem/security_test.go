package lambdaidem_test

import (
	"testing"

	"github.com/lambdaidem/lambdaidem/lambdaidem"
)

// TestFingerprintJSONRejectsTrailingData: a document followed by anything
// but white space is not JSON, and must not fingerprint as the document
// alone; otherwise `{"amount":100}}` or `{"amount":100}]{"amount":999}`
// would be taken for the same intent as `{"amount":100}` and be answered
// with its stored outcome. Found by apigw's FuzzKeyAndFingerprint.
func TestFingerprintJSONRejectsTrailingData(t *testing.T) {
	base, err := lambdaidem.FingerprintJSON([]byte(`{"amount":100}`))
	if err != nil {
		t.Fatal(err)
	}
	for _, doc := range []string{`{"amount":100}}`, `{"amount":100}]`, `{"amount":100}]{"amount":999}`, `{"amount":100} x`, `""}`} {
		fp, err := lambdaidem.FingerprintJSON([]byte(doc))
		if err == nil {
			t.Errorf("FingerprintJSON(%#q) = %s, want an error (trailing data)", doc, fp)
		}
		if fp == base {
			t.Errorf("FingerprintJSON(%#q) equals the fingerprint of the document without its trailing data", doc)
		}
	}
	if _, err := lambdaidem.FingerprintJSON([]byte("{\"amount\":100} \n\t")); err != nil {
		t.Errorf("trailing white space is JSON: %v", err)
	}
}

// TestWaitersBounded: with InFlight = Wait, every duplicate of an
// in-flight key polls the store until the first attempt ends, so a client
// (or an attacker) who sends many copies of one request multiplies the
// store reads and holds that many invocations open. A Guard needs a bound,
// Options.MaxWaiters: past it, a duplicate is refused at once with
// ErrInProgress instead of waiting.
func TestWaitersBounded(t *testing.T) {
	t.Skip("the core has no bound on waiters yet: needs Options.MaxWaiters (per Guard, per record key; default 8; " +
		"past it a duplicate gets ErrInProgress at once, as in Reject mode). Then: hold one attempt in its handler, " +
		"start 50 Wait duplicates, and check that at most MaxWaiters poll (count memstore Get calls) and the rest " +
		"return ErrInProgress without a Get.")
}
