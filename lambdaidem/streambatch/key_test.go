package streambatch_test

import (
	"errors"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/lambdaidem/lambdaidem/lambdaidem"
	"github.com/lambdaidem/lambdaidem/lambdaidem/streambatch"
)

func kinesisWith(data string) streambatch.Record {
	r := &events.KinesisEventRecord{EventID: "shardId-000000000000:1", EventSourceArn: "arn:aws:kinesis:eu-west-1:111122223333:stream/s"}
	r.Kinesis.Data = []byte(data)
	r.Kinesis.SequenceNumber = "1"
	return streambatch.Record{EventID: r.EventID, EventSourceARN: r.EventSourceArn, Kinesis: r}
}

func dynamoDBWith(name string, image map[string]events.DynamoDBAttributeValue) streambatch.Record {
	r := &events.DynamoDBEventRecord{EventID: "e1", EventName: name, EventSourceArn: "arn:aws:dynamodb:eu-west-1:111122223333:table/t/stream/x"}
	r.Change.NewImage = image
	return streambatch.Record{EventID: r.EventID, EventSourceARN: r.EventSourceArn, DynamoDB: r}
}

func TestKeyHelpers(t *testing.T) {
	s := events.NewStringAttribute
	tests := []struct {
		name    string
		key     streambatch.KeyFunc
		rec     streambatch.Record
		want    string
		wantErr error
	}{
		{"event id with the stream ARN", streambatch.KeyFromEventID, kinesisWith(`{}`),
			"arn:aws:kinesis:eu-west-1:111122223333:stream/s/shardId-000000000000:1", nil},
		{"no event id", streambatch.KeyFromEventID, streambatch.Record{}, "", lambdaidem.ErrMissingKey},

		{"data field, string", streambatch.KeyFromDataField("id"), kinesisWith(`{"id":"t-1"}`), "t-1", nil},
		{"data field, number as written", streambatch.KeyFromDataField("id"), kinesisWith(`{"id":1.50}`), "1.50", nil},
		{"data field, nested", streambatch.KeyFromDataField("a.id"), kinesisWith(`{"a":{"id":"x"}}`), "x", nil},
		{"data field, absent", streambatch.KeyFromDataField("id"), kinesisWith(`{"other":1}`), "", lambdaidem.ErrMissingKey},
		{"data field, null", streambatch.KeyFromDataField("id"), kinesisWith(`{"id":null}`), "", lambdaidem.ErrMissingKey},
		{"data field, empty", streambatch.KeyFromDataField("id"), kinesisWith(`{"id":""}`), "", lambdaidem.ErrMissingKey},
		{"data field, an object", streambatch.KeyFromDataField("id"), kinesisWith(`{"id":{}}`), "", lambdaidem.ErrInvalidKey},
		{"data field, parent not an object", streambatch.KeyFromDataField("a.id"), kinesisWith(`{"a":[1]}`), "", lambdaidem.ErrMissingKey},
		{"data not JSON", streambatch.KeyFromDataField("id"), kinesisWith("\xff\x00binary"), "", lambdaidem.ErrInvalidKey},
		{"data with trailing JSON", streambatch.KeyFromDataField("id"), kinesisWith(`{"id":"a"} {"id":"b"}`), "", lambdaidem.ErrInvalidKey},
		{"data field of a DynamoDB record", streambatch.KeyFromDataField("id"), dynamoDBWith("INSERT", nil), "", lambdaidem.ErrMissingKey},
		{"data field, empty path", streambatch.KeyFromDataField(""), kinesisWith(`{}`), "", lambdaidem.ErrInvalidKey},

		{"new image, String", streambatch.KeyFromNewImage("rid"),
			dynamoDBWith("INSERT", map[string]events.DynamoDBAttributeValue{"rid": s("r-1")}), "r-1", nil},
		{"new image, Number as written", streambatch.KeyFromNewImage("n"),
			dynamoDBWith("INSERT", map[string]events.DynamoDBAttributeValue{"n": events.NewNumberAttribute("12.50")}), "12.50", nil},
		{"new image, Binary as base64", streambatch.KeyFromNewImage("b"),
			dynamoDBWith("INSERT", map[string]events.DynamoDBAttributeValue{"b": events.NewBinaryAttribute([]byte{0, 1, 42})}), "AAEq", nil},
		{"new image, nested map", streambatch.KeyFromNewImage("m.rid"),
			dynamoDBWith("INSERT", map[string]events.DynamoDBAttributeValue{"m": events.NewMapAttribute(map[string]events.DynamoDBAttributeValue{"rid": s("r-2")})}), "r-2", nil},
		{"new image, parent not a map", streambatch.KeyFromNewImage("m.rid"),
			dynamoDBWith("INSERT", map[string]events.DynamoDBAttributeValue{"m": s("x")}), "", lambdaidem.ErrMissingKey},
		{"new image, BOOL", streambatch.KeyFromNewImage("f"),
			dynamoDBWith("INSERT", map[string]events.DynamoDBAttributeValue{"f": events.NewBooleanAttribute(true)}), "", lambdaidem.ErrInvalidKey},
		{"new image, NULL", streambatch.KeyFromNewImage("f"),
			dynamoDBWith("INSERT", map[string]events.DynamoDBAttributeValue{"f": events.NewNullAttribute()}), "", lambdaidem.ErrMissingKey},
		{"new image, a list", streambatch.KeyFromNewImage("f"),
			dynamoDBWith("INSERT", map[string]events.DynamoDBAttributeValue{"f": events.NewListAttribute(nil)}), "", lambdaidem.ErrInvalidKey},
		{"new image, empty String", streambatch.KeyFromNewImage("rid"),
			dynamoDBWith("INSERT", map[string]events.DynamoDBAttributeValue{"rid": s("")}), "", lambdaidem.ErrMissingKey},
		// The zero DynamoDBAttributeValue (as a hand-made map may hold) says
		// it is a Binary with no bytes; reading it must not panic.
		{"new image, zero attribute value", streambatch.KeyFromNewImage("z"),
			dynamoDBWith("INSERT", map[string]events.DynamoDBAttributeValue{"z": {}}), "", lambdaidem.ErrInvalidKey},
		{"new image, absent", streambatch.KeyFromNewImage("rid"),
			dynamoDBWith("INSERT", map[string]events.DynamoDBAttributeValue{}), "", lambdaidem.ErrMissingKey},
		{"a REMOVE has no new image", streambatch.KeyFromNewImage("rid"), dynamoDBWith("REMOVE", nil), "", lambdaidem.ErrMissingKey},
		{"new image of a Kinesis record", streambatch.KeyFromNewImage("rid"), kinesisWith(`{}`), "", lambdaidem.ErrMissingKey},
		{"new image, empty path", streambatch.KeyFromNewImage(""), dynamoDBWith("INSERT", nil), "", lambdaidem.ErrInvalidKey},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.key(t.Context(), tt.rec)
			if tt.wantErr != nil {
				if !errors.Is(err, tt.wantErr) {
					t.Fatalf("err %v, want %v", err, tt.wantErr)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("got %q, %v; want %q", got, err, tt.want)
			}
		})
	}
}

func TestFingerprint(t *testing.T) {
	fp := func(r streambatch.Record) string {
		t.Helper()
		s, err := streambatch.Fingerprint(t.Context(), r)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	if fp(kinesisWith(`{"a":1,"b":[1,2]}`)) != fp(kinesisWith(` { "b" : [1,2], "a":1 }`)) {
		t.Error("Kinesis: key order and spacing must not matter")
	}
	if fp(kinesisWith(`{"a":1}`)) == fp(kinesisWith(`{"a":2}`)) {
		t.Error("Kinesis: different data, same fingerprint")
	}
	if fp(kinesisWith("\xff\xfe")) == fp(kinesisWith("\xff\xfd")) {
		t.Error("Kinesis: invalid UTF-8 must be hashed as bytes")
	}
	img := func(v string) map[string]events.DynamoDBAttributeValue {
		return map[string]events.DynamoDBAttributeValue{"id": events.NewStringAttribute("o-1"), "v": events.NewStringAttribute(v)}
	}
	if a, b := fp(dynamoDBWith("INSERT", img("x"))), fp(dynamoDBWith("INSERT", img("x"))); a != b {
		t.Error("DynamoDB: same change, different fingerprints")
	}
	if fp(dynamoDBWith("INSERT", img("x"))) == fp(dynamoDBWith("MODIFY", img("x"))) {
		t.Error("DynamoDB: the event name must count")
	}
	if fp(dynamoDBWith("INSERT", img("x"))) == fp(dynamoDBWith("INSERT", img("y"))) {
		t.Error("DynamoDB: the new image must count")
	}
	if _, err := streambatch.Fingerprint(t.Context(), streambatch.Record{}); err == nil {
		t.Error("a record of neither kind: want an error")
	}
}

func TestHorizon(t *testing.T) {
	h := 24 * time.Hour
	tests := []struct{ retention, maxAge, want time.Duration }{
		{streambatch.DynamoDBStreamRetention, 0, h},
		{streambatch.KinesisMaxRetention, 0, 365 * h},
		{7 * h, -1, 7 * h}, // -1: the mapping's "infinite"
		{7 * h, 6 * time.Hour, 6 * time.Hour},
		{h, 7 * h, h},
	}
	for _, tt := range tests {
		if got := streambatch.Horizon(tt.retention, tt.maxAge); got != tt.want {
			t.Errorf("Horizon(%v, %v) = %v, want %v", tt.retention, tt.maxAge, got, tt.want)
		}
	}
}
