package streambatch

import (
	"context"
	"encoding/json"
	"errors"
	"unicode/utf8"

	"github.com/aws/aws-lambda-go/events"

	"github.com/lambdaidem/lambdaidem/lambdaidem"
)

// Fingerprint is the default fingerprint of a record. For a Kinesis record
// it hashes the data: as canonical JSON when the data is UTF-8 JSON (so key
// order and spacing do not matter), as bytes otherwise. For a DynamoDB
// stream record it hashes the event name (INSERT, MODIFY, REMOVE), the
// item's keys and its new image; the old image and the record's metadata
// are left out.
func Fingerprint(_ context.Context, r Record) (string, error) {
	switch {
	case r.Kinesis != nil:
		return dataFingerprint(r.Kinesis.Kinesis.Data), nil
	case r.DynamoDB != nil:
		b, err := json.Marshal(change{
			Event:    r.DynamoDB.EventName,
			Keys:     r.DynamoDB.Change.Keys,
			NewImage: r.DynamoDB.Change.NewImage,
		})
		if err != nil {
			return "", err
		}
		return lambdaidem.FingerprintBytes(b), nil
	}
	return "", errors.New("streambatch: the record is neither a Kinesis nor a DynamoDB stream record")
}

// change is what a DynamoDB stream record's fingerprint covers. Its JSON
// encoding is canonical: maps are encoded with sorted keys.
type change struct {
	Event    string                                   `json:"event"`
	Keys     map[string]events.DynamoDBAttributeValue `json:"keys"`
	NewImage map[string]events.DynamoDBAttributeValue `json:"new"`
}

// dataFingerprint hashes data as canonical JSON when it parses, as bytes
// otherwise: bytes equal to a canonical document are that document. Data
// that is not valid UTF-8 is never decoded, since a decoder would replace
// the invalid bytes and make different data look the same.
func dataFingerprint(data []byte) string {
	if utf8.Valid(data) {
		if fp, err := lambdaidem.FingerprintJSON(data); err == nil {
			return fp
		}
	}
	return lambdaidem.FingerprintBytes(data)
}
