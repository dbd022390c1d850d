package sqsbatch

import (
	"encoding/json"
	"unicode/utf8"

	"github.com/aws/aws-lambda-go/events"

	"github.com/lambdaidem/lambdaidem/lambdaidem"
)

// subject is what a message's fingerprint covers.
type subject struct {
	Body       string                `json:"body"`
	Attributes map[string]*attribute `json:"attributes,omitempty"`
}

// attribute is the part of a message attribute that carries its value; a
// nil *attribute stands for an absent one.
// Strings are kept as bytes so that invalid UTF-8 is hashed as it is, not
// replaced by the JSON encoder.
type attribute struct {
	DataType   []byte   `json:"type"`
	HasString  bool     `json:"hs"`
	String     []byte   `json:"s"`
	Binary     []byte   `json:"b"`
	StringList [][]byte `json:"sl"`
	BinaryList [][]byte `json:"bl"`
}

// Fingerprint returns the fingerprint of a message: the hash of its body
// (canonical JSON when the body is JSON, so key order and spacing do not
// matter; its bytes otherwise, and for a JSON body with a duplicate name
// or one above lambdaidem.MaxCanonicalJSON, as [lambdaidem.FingerprintJSON]
// says) and of the named message attributes.
func Fingerprint(m events.SQSMessage, attributes ...string) (string, error) {
	s := subject{Body: bodyFingerprint(m.Body)}
	if len(attributes) > 0 {
		s.Attributes = make(map[string]*attribute, len(attributes))
		for _, name := range attributes {
			a, ok := m.MessageAttributes[name]
			if !ok {
				s.Attributes[name] = nil
				continue
			}
			s.Attributes[name] = newAttribute(a)
		}
	}
	b, err := json.Marshal(s)
	if err != nil {
		return "", err
	}
	return lambdaidem.FingerprintBytes(b), nil
}

// bodyFingerprint hashes a body as canonical JSON when it parses, as bytes
// otherwise. The two cannot collide: canonical JSON always parses. A body
// that is not valid UTF-8 is hashed as bytes, since decoding it as JSON
// would replace the invalid bytes.
func bodyFingerprint(body string) string {
	if !utf8.ValidString(body) {
		return lambdaidem.FingerprintBytes([]byte(body))
	}
	if fp, err := lambdaidem.FingerprintJSON([]byte(body)); err == nil {
		return fp
	}
	return lambdaidem.FingerprintBytes([]byte(body))
}

func newAttribute(a events.SQSMessageAttribute) *attribute {
	r := &attribute{DataType: []byte(a.DataType), Binary: a.BinaryValue, BinaryList: a.BinaryListValues}
	if a.StringValue != nil {
		r.HasString, r.String = true, []byte(*a.StringValue)
	}
	for _, v := range a.StringListValues {
		r.StringList = append(r.StringList, []byte(v))
	}
	return r
}
