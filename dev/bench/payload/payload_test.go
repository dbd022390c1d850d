package payload

import (
	"bytes"
	"compress/flate"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

func TestLinesAreDeterministicAndSized(t *testing.T) {
	for _, n := range []int{2, 1 << 10, 16 << 10, 64 << 10} {
		a, b := Lines(7, n), Lines(7, n)
		enc, _ := json.Marshal(a)
		if len(enc) > n || len(enc) < n-200 || !reflect.DeepEqual(a, b) {
			t.Fatalf("Lines(7, %d): %d bytes of JSON, repeatable %v", n, len(enc), reflect.DeepEqual(a, b))
		}
	}
	if reflect.DeepEqual(Lines(1, 4096), Lines(2, 4096)) {
		t.Fatal("two seeds gave the same lines")
	}
}

// The lines compress like a JSON API response (about 2.5x to 4.5x at the
// fastest level), not like a run of one character (100x) nor like random
// bytes (1x).
func TestLinesCompressLikeRealJSON(t *testing.T) {
	enc, _ := json.Marshal(Lines(1, 64<<10))
	checkRatio(t, enc)
}

// checkRatio fails t unless b compresses at flate.BestSpeed by 2.5x to
// 4.5x.
func checkRatio(t *testing.T, b []byte) {
	t.Helper()
	var buf bytes.Buffer
	w, _ := flate.NewWriter(&buf, flate.BestSpeed)
	_, _ = w.Write(b)
	_ = w.Close()
	if ratio := float64(len(b)) / float64(buf.Len()); ratio < 2.5 || ratio > 4.5 {
		t.Fatalf("compression ratio %.2f; want between 2.5 and 4.5", ratio)
	}
}

func TestTextIsSizedAndCompressesLikeTheLines(t *testing.T) {
	for _, n := range []int{0, 1, 1 << 10, 64 << 10} {
		if got := Text(3, n); len(got) != n || strings.ContainsAny(got, `"\\`) {
			t.Fatalf("Text(3, %d): %d bytes", n, len(got))
		}
	}
	checkRatio(t, []byte(Text(1, 64<<10)))
}
