package sqsbatch_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/aws/aws-lambda-go/events"

	"github.com/lambdaidem/lambdaidem/lambdaidem"
	"github.com/lambdaidem/lambdaidem/lambdaidem/sqsbatch"
)

func ptr(s string) *string { return &s }

func TestKeyFuncs(t *testing.T) {
	withBody := func(body string) events.SQSMessage { return events.SQSMessage{MessageId: "m-1", Body: body} }
	withAttr := func(a events.SQSMessageAttribute) events.SQSMessage {
		return events.SQSMessage{MessageAttributes: map[string]events.SQSMessageAttribute{"idempotency-key": a}}
	}
	tests := []struct {
		name    string
		key     sqsbatch.KeyFunc
		msg     events.SQSMessage
		want    string
		wantErr error
	}{
		{"message id", sqsbatch.KeyFromMessageID, events.SQSMessage{MessageId: "m-1"}, "m-1", nil},
		{"message id absent", sqsbatch.KeyFromMessageID, events.SQSMessage{}, "", lambdaidem.ErrMissingKey},

		{"deduplication id", sqsbatch.KeyFromDeduplicationID,
			events.SQSMessage{Attributes: map[string]string{"MessageDeduplicationId": "d-1"}}, "d-1", nil},
		{"deduplication id on a standard queue", sqsbatch.KeyFromDeduplicationID, events.SQSMessage{}, "", lambdaidem.ErrMissingKey},

		{"string attribute", sqsbatch.KeyFromAttribute("idempotency-key"),
			withAttr(events.SQSMessageAttribute{DataType: "String", StringValue: ptr("k-1")}), "k-1", nil},
		{"number attribute", sqsbatch.KeyFromAttribute("idempotency-key"),
			withAttr(events.SQSMessageAttribute{DataType: "Number", StringValue: ptr("42")}), "42", nil},
		{"binary attribute is base64", sqsbatch.KeyFromAttribute("idempotency-key"),
			withAttr(events.SQSMessageAttribute{DataType: "Binary", BinaryValue: []byte{1, 2, 3}}), "AQID", nil},
		{"attribute absent", sqsbatch.KeyFromAttribute("other"),
			withAttr(events.SQSMessageAttribute{DataType: "String", StringValue: ptr("k-1")}), "", lambdaidem.ErrMissingKey},
		{"attribute empty", sqsbatch.KeyFromAttribute("idempotency-key"),
			withAttr(events.SQSMessageAttribute{DataType: "String", StringValue: ptr("")}), "", lambdaidem.ErrMissingKey},

		{"JSON string field", sqsbatch.KeyFromJSONField("order_id"), withBody(`{"order_id":"o-1"}`), "o-1", nil},
		{"JSON number field as written", sqsbatch.KeyFromJSONField("order_id"), withBody(`{"order_id": 12345678901234567890}`), "12345678901234567890", nil},
		{"JSON dotted path", sqsbatch.KeyFromJSONField("order.id"), withBody(`{"order":{"id":"o-2"}}`), "o-2", nil},
		{"JSON field absent", sqsbatch.KeyFromJSONField("order_id"), withBody(`{"id":"o-1"}`), "", lambdaidem.ErrMissingKey},
		{"JSON field null", sqsbatch.KeyFromJSONField("order_id"), withBody(`{"order_id":null}`), "", lambdaidem.ErrMissingKey},
		{"JSON field empty", sqsbatch.KeyFromJSONField("order_id"), withBody(`{"order_id":""}`), "", lambdaidem.ErrMissingKey},
		{"JSON field an object", sqsbatch.KeyFromJSONField("order"), withBody(`{"order":{"id":"o-2"}}`), "", lambdaidem.ErrInvalidKey},
		{"JSON parent not an object", sqsbatch.KeyFromJSONField("order.id"), withBody(`{"order":"o-2"}`), "", lambdaidem.ErrMissingKey},
		{"body an array", sqsbatch.KeyFromJSONField("order_id"), withBody(`[1,2]`), "", lambdaidem.ErrMissingKey},
		{"body not JSON", sqsbatch.KeyFromJSONField("order_id"), withBody(`order_id=o-1`), "", lambdaidem.ErrInvalidKey},
		{"body with trailing data", sqsbatch.KeyFromJSONField("order_id"), withBody(`{"order_id":"o-1"} {}`), "", lambdaidem.ErrInvalidKey},
		{"empty path", sqsbatch.KeyFromJSONField(""), withBody(`{"":"x"}`), "", lambdaidem.ErrInvalidKey},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.key(context.Background(), tt.msg)
			if !errors.Is(err, tt.wantErr) || got != tt.want {
				t.Fatalf("key = %q, %v; want %q, %v", got, err, tt.want, tt.wantErr)
			}
			if err != nil && strings.Contains(err.Error(), "o-1") {
				t.Errorf("error %q quotes the body", err)
			}
		})
	}
}
