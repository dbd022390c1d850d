package lambdaidem

import (
	"encoding/json"
	"errors"
	"testing"
)

func TestOutcomeEncodingIsTheEnvelope(t *testing.T) {
	type receipt struct {
		ID   string            `json:"id"`
		Note string            `json:"note"`
		Tags map[string]string `json:"tags"`
	}
	in := receipt{ID: "r-1", Note: "<b>&</b> \u2028", Tags: map[string]string{"b": "2", "a": "1"}}
	data, err := encodeValue(nil, in)
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := json.Marshal(in)
	want, _ := json.Marshal(envelope{Value: raw})
	if string(data) != string(want) {
		t.Fatalf("encodeValue = %s; want the envelope's encoding %s", data, want)
	}
	out, err := decodeOutcome[receipt](nil, data)
	if err != nil || out.ID != in.ID || out.Note != in.Note || out.Tags["a"] != "1" {
		t.Fatalf("decode = %+v, %v; want %+v", out, err, in)
	}
}

func TestDecodeOutcomeGeneralPath(t *testing.T) {
	cases := []struct {
		name    string
		data    string
		want    string
		wantErr bool
	}{
		{"value with white space", `{ "value" : "x" }`, "x", false},
		{"value then error", `{"value":"x","error":{"type":"T","message":"m"}}`, "", true},
		{"error", `{"error":{"type":"T","message":"m"}}`, "", true},
		{"neither", `{}`, "", true},
		{"not JSON", `{"value":`, "", true},
	}
	for _, tc := range cases {
		out, err := decodeOutcome[string](nil, []byte(tc.data))
		if out != tc.want || (err != nil) != tc.wantErr {
			t.Errorf("%s: = %q, %v; want %q, error %v", tc.name, out, err, tc.want, tc.wantErr)
		}
	}
	_, err := decodeOutcome[string](nil, []byte(`{"error":{"type":"declined","message":"no"}}`))
	var re *ReplayedError
	if !errors.As(err, &re) || re.Type != "declined" || re.Message != "no" {
		t.Fatalf("stored error = %#v; want a ReplayedError", err)
	}
}
