package sqsbatch_test

import (
	"testing"

	"github.com/aws/aws-lambda-go/events"

	"github.com/lambdaidem/lambdaidem/lambdaidem/sqsbatch"
)

func TestFingerprint(t *testing.T) {
	msg := func(body string, tenant *string) events.SQSMessage {
		m := events.SQSMessage{Body: body, MessageAttributes: map[string]events.SQSMessageAttribute{}}
		if tenant != nil {
			m.MessageAttributes["tenant"] = events.SQSMessageAttribute{DataType: "String", StringValue: tenant}
		}
		return m
	}
	tests := []struct {
		name  string
		a, b  events.SQSMessage
		attrs []string
		same  bool
	}{
		{"JSON key order and spacing do not matter", msg(`{"a":1,"b":[1,2]}`, nil), msg("{ \"b\": [1, 2],\n \"a\": 1 }", nil), nil, true},
		{"JSON values matter", msg(`{"a":1}`, nil), msg(`{"a":2}`, nil), nil, false},
		{"non-JSON bodies are compared as bytes", msg("a b", nil), msg("a  b", nil), nil, false},
		{"identical non-JSON bodies", msg("hello", nil), msg("hello", nil), nil, true},
		{"invalid UTF-8 is not collapsed", msg("{\"a\":\"\xff\"}", nil), msg("{\"a\":\"\xfe\"}", nil), nil, false},
		{"unchosen attributes do not matter", msg(`{}`, ptr("acme")), msg(`{}`, ptr("globex")), nil, true},
		{"chosen attributes matter", msg(`{}`, ptr("acme")), msg(`{}`, ptr("globex")), []string{"tenant"}, false},
		{"a chosen attribute absent differs from empty", msg(`{}`, nil), msg(`{}`, ptr("")), []string{"tenant"}, false},
		{"same chosen attributes", msg(`{"a":1}`, ptr("acme")), msg(`{"a": 1}`, ptr("acme")), []string{"tenant"}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fa, err := sqsbatch.Fingerprint(tt.a, tt.attrs...)
			if err != nil {
				t.Fatal(err)
			}
			fb, err := sqsbatch.Fingerprint(tt.b, tt.attrs...)
			if err != nil {
				t.Fatal(err)
			}
			if (fa == fb) != tt.same {
				t.Errorf("fingerprints %s and %s: same = %v, want %v", fa, fb, fa == fb, tt.same)
			}
		})
	}
}
