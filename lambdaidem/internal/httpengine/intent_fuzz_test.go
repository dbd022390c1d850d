package httpengine

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/url"
	"reflect"
	"testing"
)

// order is a handler's input type as Go handlers write them: fields
// matched case-insensitively, a pointer a null leaves alone, nested
// structs, a slice, a map and an interface value.
type order struct {
	Amount    int64   `json:"amount"`
	Currency  *string `json:"currency"`
	Reference string  `json:"reference"`
	Customer  struct{ ID, Kind string }
	Items     []struct {
		SKU string `json:"sku"`
		Qty int    `json:"qty"`
	} `json:"items"`
	Meta  map[string]string `json:"meta"`
	Extra any               `json:"extra"`
}

// FuzzFingerprintMeansIntent checks rule 2 of the adapter: any two bodies
// that encoding/json decodes into different values of the handler's input
// type (order, or any) must not share a fingerprint; otherwise the second
// request would be handed the first one's stored response.
func FuzzFingerprintMeansIntent(f *testing.F) {
	seeds := [][2]string{
		{`{"amount":1000,"currency":"EUR","reference":"r1","currency":null}`, `{"amount":1000,"currency":"USD","reference":"r1","currency":null}`},
		{`{"Currency":"EUR","currency":"USD"}`, `{"currency":"USD","Currency":"EUR"}`},
		{"{\"kind\":1,\"customer\":{\"kind\":\"a\",\"\u212aind\":\"b\"}}", "{\"customer\":{\"\u212aind\":\"b\",\"kind\":\"a\"}}"},
		{`{"items":[{"sku":"a","qty":1,"QTY":2}]}`, `{"items":[{"sku":"a","QTY":2,"qty":1}]}`},
		{`{"meta":{"a":"1","A":"2"}}`, `{"meta":{"A":"2","a":"1"}}`},
		{`{"amount":1}`, `{"amount":1.0}`},
		{`{"extra":"\u00e9"}`, `{"extra":"é"}`},
		{`{"extra":"\ud800"}`, `{"extra":"\ufffd"}`},
		{`{"reference":"a"} `, `{"reference":"a"}x`},
	}
	for _, s := range seeds {
		f.Add([]byte(s[0]), []byte(s[1]))
	}
	f.Fuzz(func(t *testing.T, a, b []byte) {
		checkIntent(t, a, b)
		// The same members in reverse order: the same value, unless a name
		// repeats (exactly or case-folded) and the decoder's last one changes.
		if r, ok := reverseMembers(a); ok {
			checkIntent(t, a, r)
		}
	})
}

// checkIntent fails if a and b share a fingerprint although they decode into
// different values of order or of any.
func checkIntent(t *testing.T, a, b []byte) {
	fa, fb := bodyPrint(t, a), bodyPrint(t, b)
	if fa != fb {
		return
	}
	for _, newValue := range []func() any{func() any { return new(order) }, func() any { return new(any) }} {
		va, vb := newValue(), newValue()
		if json.Unmarshal(a, va) != nil || json.Unmarshal(b, vb) != nil {
			continue
		}
		if !reflect.DeepEqual(va, vb) {
			t.Fatalf("%q and %q decode into different %T values but share fingerprint %s", a, b, va, fa)
		}
	}
}

// member is one name and value of a JSON object, in document order.
type member struct {
	name  string
	value any
}

// reverseMembers re-encodes doc with every object's members in reverse
// order, or reports false if doc is not one JSON value.
func reverseMembers(doc []byte) ([]byte, bool) {
	dec := json.NewDecoder(bytes.NewReader(doc))
	dec.UseNumber()
	v, err := orderedValue(dec)
	if err != nil || dec.More() {
		return nil, false
	}
	var out bytes.Buffer
	writeReversed(&out, v)
	return out.Bytes(), true
}

// orderedValue reads one value from dec, keeping object members in order.
func orderedValue(dec *json.Decoder) (any, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch tok {
	case json.Delim('{'):
		var obj []member
		for dec.More() {
			name, err := dec.Token()
			if err != nil {
				return nil, err
			}
			v, err := orderedValue(dec)
			if err != nil {
				return nil, err
			}
			obj = append(obj, member{name.(string), v})
		}
		_, err := dec.Token()
		if obj == nil {
			obj = []member{}
		}
		return obj, err
	case json.Delim('['):
		arr := []any{}
		for dec.More() {
			v, err := orderedValue(dec)
			if err != nil {
				return nil, err
			}
			arr = append(arr, v)
		}
		_, err := dec.Token()
		return arr, err
	}
	return tok, nil
}

func writeReversed(out *bytes.Buffer, v any) {
	switch v := v.(type) {
	case []member:
		out.WriteByte('{')
		for i := len(v) - 1; i >= 0; i-- {
			name, _ := json.Marshal(v[i].name)
			out.Write(name)
			out.WriteByte(':')
			writeReversed(out, v[i].value)
			if i > 0 {
				out.WriteByte(',')
			}
		}
		out.WriteByte('}')
	case []any:
		out.WriteByte('[')
		for i, e := range v {
			if i > 0 {
				out.WriteByte(',')
			}
			writeReversed(out, e)
		}
		out.WriteByte(']')
	default:
		b, _ := json.Marshal(v)
		out.Write(b)
	}
}

// bodyPrint is the fingerprint of a JSON POST with body b.
func bodyPrint(t *testing.T, b []byte) string {
	r := &Request{
		Method: "POST", Route: "POST /orders", Path: "/orders", Query: url.Values{},
		Header: http.Header{"Content-Type": {"application/json"}}, Body: b,
	}
	fp, err := fingerprint(r, AllParts)
	if err != nil {
		t.Fatal(err)
	}
	return fp
}
