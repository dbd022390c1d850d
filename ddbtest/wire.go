package ddbtest

import (
	"encoding/json"
	"net/http"
	"strings"
)

// The proxy edits DynamoDB JSON without interpreting attribute values: an
// object is a map of raw JSON members.

// rawJSON is a JSON value kept as it is.
type rawJSON = json.RawMessage

// object decodes a JSON object into its raw members.
func object(b []byte) (map[string][]byte, error) {
	var m map[string]rawJSON
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, err
	}
	out := make(map[string][]byte, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out, nil
}

// list decodes a JSON array into its raw elements; nil if b is not one.
func list(b []byte) [][]byte {
	var l []rawJSON
	if json.Unmarshal(b, &l) != nil {
		return nil
	}
	out := make([][]byte, len(l))
	for i, v := range l {
		out[i] = v
	}
	return out
}

// text decodes a JSON string; "" if b is not one.
func text(b []byte) string {
	var s string
	if json.Unmarshal(b, &s) != nil {
		return ""
	}
	return s
}

// edit applies fn to the members of the JSON object b; b is returned
// unchanged if it is not an object.
func edit(b []byte, fn func(map[string][]byte)) []byte {
	m, err := object(b)
	if err != nil {
		return b
	}
	fn(m)
	out := make(map[string]rawJSON, len(m))
	for k, v := range m {
		out[k] = v
	}
	return marshal(out)
}

func marshal(v any) []byte {
	switch v := v.(type) {
	case [][]byte:
		l := make([]rawJSON, len(v))
		for i, e := range v {
			l[i] = e
		}
		b, _ := json.Marshal(l)
		return b
	}
	b, _ := json.Marshal(v)
	return b
}

func unmarshal(b []byte, v any) error { return json.Unmarshal(b, v) }

// canonical is b with its object members sorted and insignificant space
// removed, so that two encodings of one request compare equal (the SDK
// writes map members in random order).
func canonical(b []byte) string {
	var v any
	if json.Unmarshal(b, &v) != nil {
		return string(b)
	}
	return string(marshal(v))
}

// transactAction returns the action name and input object of one
// TransactItems element ({"Put": {...}}).
func transactAction(b []byte) (string, map[string][]byte) {
	m, err := object(b)
	if err != nil {
		return "", nil
	}
	for _, op := range []string{"Put", "Update", "Delete", "ConditionCheck"} {
		if raw, ok := m[op]; ok {
			in, err := object(raw)
			if err != nil {
				return "", nil
			}
			return op, in
		}
	}
	return "", nil
}

// errorType is the short error code of a DynamoDB JSON error body
// ("com.amazonaws.dynamodb.v20120810#ConditionalCheckFailedException" →
// "ConditionalCheckFailedException").
func errorType(body []byte) string {
	var e struct {
		Type string `json:"__type"`
	}
	if json.Unmarshal(body, &e) != nil {
		return ""
	}
	return e.Type[strings.LastIndex(e.Type, "#")+1:]
}

func jsonHeader() http.Header {
	return http.Header{"Content-Type": {"application/x-amz-json-1.0"}}
}

func errorResponse(status int, code, msg string) response {
	return response{status: status, header: jsonHeader(),
		body: marshal(map[string]string{"__type": "com.amazonaws.dynamodb.v20120810#" + code, "message": msg})}
}
