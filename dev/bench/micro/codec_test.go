package micro

import (
	"bytes"
	"encoding/json"
	"testing"
)

// The core stores an outcome as {"value":<the handler's result as JSON>}
// (lambdaidem/outcome.go). These benchmarks measure that codec as the core
// runs it today against a proposed one that produces and accepts the very
// same bytes with fewer passes over them; see bench/RESULTS.md.

// envelope mirrors the core's stored form of a successful outcome.
type envelope struct {
	Value json.RawMessage `json:"value,omitempty"`
}

const valuePrefix = `{"value":`

// encodeNested is today's encoding: marshal the value, then marshal the
// envelope, which validates and compacts the raw value again.
func encodeNested(r Receipt) ([]byte, error) {
	v, err := json.Marshal(r)
	if err != nil {
		return nil, err
	}
	return json.Marshal(envelope{Value: v})
}

// encodeConcat writes the envelope around the marshalled value: the value
// is already compact, valid JSON, so the bytes are the same.
func encodeConcat(r Receipt) ([]byte, error) {
	v, err := json.Marshal(r)
	if err != nil {
		return nil, err
	}
	out := make([]byte, 0, len(valuePrefix)+len(v)+1)
	out = append(append(append(out, valuePrefix...), v...), '}')
	return out, nil
}

// decodeTwoPass is today's decoding: unmarshal the envelope (which scans
// the value to skip it), then unmarshal the value.
func decodeTwoPass(data []byte) (Receipt, error) {
	var r Receipt
	var env envelope
	if err := json.Unmarshal(data, &env); err != nil {
		return r, err
	}
	err := json.Unmarshal(env.Value, &r)
	return r, err
}

// decodeSliced unmarshals the value in place when the data has exactly the
// shape the encoder writes, and falls back to the two-pass decoding.
func decodeSliced(data []byte) (Receipt, error) {
	var r Receipt
	if bytes.HasPrefix(data, []byte(valuePrefix)) && bytes.HasSuffix(data, []byte("}")) {
		if err := json.Unmarshal(data[len(valuePrefix):len(data)-1], &r); err == nil {
			return r, nil
		}
	}
	return decodeTwoPass(data)
}

func TestCodecsAgree(t *testing.T) {
	for _, sz := range sizes() {
		p := payment("pay-0", sz.n)
		r := Receipt{ID: p.ID, Status: "captured", Amount: p.Amount, Note: p.Note}
		a, err1 := encodeNested(r)
		b, err2 := encodeConcat(r)
		if err1 != nil || err2 != nil || !bytes.Equal(a, b) {
			t.Fatalf("%s: encodings differ (%v, %v)", sz.name, err1, err2)
		}
		x, err1 := decodeTwoPass(a)
		y, err2 := decodeSliced(a)
		if err1 != nil || err2 != nil || x != r || y != r {
			t.Fatalf("%s: decodings differ (%v, %v)", sz.name, err1, err2)
		}
	}
	if _, err := decodeSliced([]byte(`{"value":1,"x":2}`)); err == nil {
		t.Error("decodeSliced accepted a value that is not a Receipt")
	}
}

// BenchmarkOutcomeCodec compares today's outcome codec with the proposed
// one, at each payload size.
func BenchmarkOutcomeCodec(b *testing.B) {
	for _, sz := range sizes() {
		p := payment("pay-0", sz.n)
		r := Receipt{ID: p.ID, Status: "captured", Amount: p.Amount, Note: p.Note}
		data, err := encodeNested(r)
		if err != nil {
			b.Fatal(err)
		}
		b.Run("encode-nested/"+sz.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				_, _ = encodeNested(r)
			}
		})
		b.Run("encode-concat/"+sz.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				_, _ = encodeConcat(r)
			}
		})
		b.Run("decode-twopass/"+sz.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				_, _ = decodeTwoPass(data)
			}
		})
		b.Run("decode-sliced/"+sz.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				_, _ = decodeSliced(data)
			}
		})
	}
}
