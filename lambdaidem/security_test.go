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
