package apigw_test

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/lambdaidem/lambdaidem/lambdaidem"
	"github.com/lambdaidem/lambdaidem/lambdaidem/apigw"
)

// FuzzFingerprintBodyFields: for any body, the chosen-fields fingerprint
// never panics, refuses what is not one JSON object, and agrees with
// encoding/json: where the body decodes into a struct with the chosen
// fields, two bodies whose decoded fields differ never share a
// fingerprint with the struct's own canonical body.
func FuzzFingerprintBodyFields(f *testing.F) {
	for _, seed := range []string{
		`{"amount":100,"payee":{"iban":"DE89"}}`,
		`{"Amount":1,"amount":2}`,
		`{"payee":[{"iban":1}],"amount":null}`,
		`{"amount":1e2,"payee":{"iban":"x","IBAN":"y"}}`,
		`[]`, `{`, `{"a":1}{}`, ` {"amount" : "100" } `,
		// Names that fold with a rune outside ASCII, as encoding/json
		// matches them: the long s, the Kelvin sign, the micro sign.
		"{\"status\":\"DE1\",\"\u017ftatus\":null,\"amount\":5}",
		"{\"kind\":\"refund\",\"\u212aind\":\"charge\"}",
		"{\"\u00b5\":1,\"\u03bc\":2,\"\u039c\":3}",
		"{\"\u212aIND\":\"x\",\"payee\":{\"iban\":\"a\",\"IBAN\":\"b\"}}",
	} {
		f.Add(seed)
	}
	fp := apigw.FingerprintBodyFields("amount", "payee.iban", "status", "kind", "μ")
	type payee struct {
		IBAN any `json:"iban"`
	}
	type intent struct {
		Amount any    `json:"amount"`
		Payee  *payee `json:"payee"`
		Status any    `json:"status"`
		Kind   any    `json:"kind"`
		Mu     any    `json:"μ"`
	}
	of := func(body []byte) (string, error) {
		v, err := fp(context.Background(), &apigw.Request{Body: body})
		if err != nil {
			return "", err
		}
		return lambdaidem.Fingerprint(v)
	}
	f.Fuzz(func(t *testing.T, body string) {
		got, err := of([]byte(body))
		dec := json.NewDecoder(strings.NewReader(body))
		dec.UseNumber()
		var in intent
		decErr := dec.Decode(&in)
		if err != nil {
			return // refused: never run, nothing to compare
		}
		if decErr != nil || dec.More() {
			return // the handler would refuse it; bytes or fields, both safe
		}
		// The body the handler effectively reads, written out: its
		// fingerprint must equal the fuzzed body's unless the fuzzed body
		// fell back to its bytes.
		var canon bytes.Buffer
		canon.WriteString(`{"amount":`)
		a, _ := json.Marshal(in.Amount)
		canon.Write(a)
		for _, f := range []struct {
			name string
			v    any
		}{{"status", in.Status}, {"kind", in.Kind}, {"μ", in.Mu}} {
			v, _ := json.Marshal(f.v)
			canon.WriteString(`,"` + f.name + `":`)
			canon.Write(v)
		}
		if in.Payee != nil {
			i, _ := json.Marshal(in.Payee.IBAN)
			canon.WriteString(`,"payee":{"iban":`)
			canon.Write(i)
			canon.WriteString(`}`)
		}
		canon.WriteString(`}`)
		want, err := of(canon.Bytes())
		if err != nil {
			t.Fatalf("canonical body %s refused: %v", canon.Bytes(), err)
		}
		if got != want && got != mustBytesFingerprint(t, body) {
			t.Fatalf("body %q: fingerprint %s is neither the decoded fields' (%s, from %s) nor the bytes'", body, got, want, canon.Bytes())
		}
	})
}

func mustBytesFingerprint(t *testing.T, body string) string {
	t.Helper()
	s, err := lambdaidem.Fingerprint(map[string]string{"body-bytes": lambdaidem.FingerprintBytes([]byte(body))})
	if err != nil {
		t.Fatal(err)
	}
	return s
}
