package micro

import (
	"bytes"
	"compress/flate"
	"compress/gzip"
	"compress/lzw"
	"encoding/json"
	"io"
	"strconv"
	"testing"

	"github.com/lambdaidem/lambdaidem/dev/bench/payload"
)

// BenchmarkCompression compares the standard library's compressors on a
// stored outcome ({"value": <order lines as JSON>}, bench/payload) at 1,
// 16 and 64 KB: the gzip writer at the flate levels the core could use
// (reused, as the core reuses it), lzw, and gzip decompression. Each
// reports its ratio (encoded ÷ compressed bytes). The core's choice
// (lambdaidem/compress.go) is read from these rows; see bench/RESULTS.md.
func BenchmarkCompression(b *testing.B) {
	for _, n := range []int{1 << 10, 16 << 10, 64 << 10} {
		lines, _ := json.Marshal(payload.Lines(1, n-len(`{"value":}`)))
		data := append(append([]byte(`{"value":`), lines...), '}')
		size := strconv.Itoa(n>>10) + "KB"
		for _, level := range []struct {
			name string
			l    int
		}{{"huffman", flate.HuffmanOnly}, {"level1", flate.BestSpeed}, {"level2", 2}, {"level6", flate.DefaultCompression}, {"level9", flate.BestCompression}} {
			b.Run("gzip-"+level.name+"/"+size, func(b *testing.B) {
				var buf bytes.Buffer
				w, _ := gzip.NewWriterLevel(&buf, level.l)
				b.ReportAllocs()
				for b.Loop() {
					buf.Reset()
					w.Reset(&buf)
					_, _ = w.Write(data)
					_ = w.Close()
				}
				b.ReportMetric(float64(len(data))/float64(buf.Len()), "ratio")
			})
		}
		b.Run("lzw/"+size, func(b *testing.B) {
			var buf bytes.Buffer
			b.ReportAllocs()
			for b.Loop() {
				buf.Reset()
				w := lzw.NewWriter(&buf, lzw.LSB, 8)
				_, _ = w.Write(data)
				_ = w.Close()
			}
			b.ReportMetric(float64(len(data))/float64(buf.Len()), "ratio")
		})
		b.Run("gunzip-level1/"+size, func(b *testing.B) {
			var z bytes.Buffer
			w, _ := gzip.NewWriterLevel(&z, flate.BestSpeed)
			_, _ = w.Write(data)
			_ = w.Close()
			r, _ := gzip.NewReader(bytes.NewReader(z.Bytes()))
			var out bytes.Buffer
			b.ReportAllocs()
			for b.Loop() {
				_ = r.Reset(bytes.NewReader(z.Bytes()))
				out.Reset()
				if _, err := io.Copy(&out, r); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
