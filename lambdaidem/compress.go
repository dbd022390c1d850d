package lambdaidem

import (
	"bytes"
	"compress/flate"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"sync"
)

// Stored outcomes above Options.CompressAbove are kept as a gzip stream
// (RFC 1952, compress/gzip) of their encoded form: Huffman coding only
// (flate.HuffmanOnly) up to huffmanUpTo bytes, at flate.BestSpeed up to
// denseAbove bytes, at flate.DefaultCompression above. The
// encoded form of an outcome is a JSON object, so its first byte is '{';
// a gzip stream starts with the bytes 1f 8b. A reader tells them apart by
// those bytes, so outcomes stored uncompressed (before compression existed,
// or below the threshold, or by a Guard with NoCompression) read as
// before. Compression runs before the Sealer (encrypted bytes do not
// compress) and decompression after it.
//
// Why these levels: bench/micro's BenchmarkCompression compares the
// standard library's flate levels (and lzw) on JSON outcomes (see
// bench/RESULTS.md). On a 1 KB outcome the CPU counts against a
// per-invocation budget of microseconds and what the bytes save is whole
// write units (a KB each): Huffman coding alone (ratio 1.43, about 6 µs)
// brings a 1 KB outcome under the same KB boundary as level 1 (1.92, about
// 9 µs) for two thirds of the CPU; on a 64 KB outcome level 6 stores
// 3.75 times less against 3.14 at level 1, whole write units (a KB each,
// two in a transaction) on every write and every failed duplicate claim,
// for about a millisecond more. gzip rather than raw flate for its CRC-32
// (a damaged record fails to decode rather than replaying garbage) and
// because tools read it (base64 -d | gunzip).

// gzipMagic starts every gzip stream.
var gzipMagic = []byte{0x1f, 0x8b}

// maxInflatedOutcome bounds what a stored outcome may inflate to: a
// record that claims more is refused (a corrupted or hostile record must not
// exhaust memory). It is far above anything a Lambda function returns (6 MB
// for a synchronous invocation).
const maxInflatedOutcome = 32 << 20

// errInflatedTooLarge: a stored outcome inflates past maxInflatedOutcome.
var errInflatedTooLarge = errors.New("lambdaidem: stored outcome inflates past 32 MiB")

// huffmanUpTo is the encoded size up to which outcomes are Huffman-coded
// only (flate.HuffmanOnly), without LZ77 matching.
const huffmanUpTo = 2 << 10

// denseAbove is the encoded size above which outcomes are compressed at
// flate.DefaultCompression rather than flate.BestSpeed.
const denseAbove = 8 << 10

// compressor compresses and inflates stored outcomes, reusing its gzip
// writers and readers (a flate writer allocates hundreds of KB of state).
// It is safe for concurrent use.
type compressor struct {
	huff, fast, dense sync.Pool // *gzip.Writer at flate.HuffmanOnly, BestSpeed, DefaultCompression
	readers           sync.Pool // *gzip.Reader
}

// compress returns data gzip-compressed when that is shorter, else data.
func (c *compressor) compress(data []byte) []byte {
	pool, level := &c.fast, flate.BestSpeed
	switch {
	case len(data) <= huffmanUpTo:
		pool, level = &c.huff, flate.HuffmanOnly
	case len(data) > denseAbove:
		pool, level = &c.dense, flate.DefaultCompression
	}
	var buf bytes.Buffer
	buf.Grow(len(data) / 2)
	w, _ := pool.Get().(*gzip.Writer)
	if w == nil {
		w, _ = gzip.NewWriterLevel(&buf, level) // a valid level: no error
	} else {
		w.Reset(&buf)
	}
	_, _ = w.Write(data) // a bytes.Buffer never fails
	_ = w.Close()
	pool.Put(w)
	if buf.Len() >= len(data) {
		return data
	}
	return buf.Bytes()
}

// inflate returns the encoded outcome a stored outcome holds: data itself,
// or, when it is a gzip stream, what it inflates to.
func (c *compressor) inflate(data []byte) ([]byte, error) {
	if !bytes.HasPrefix(data, gzipMagic) {
		return data, nil
	}
	r, _ := c.readers.Get().(*gzip.Reader)
	var err error
	if r == nil {
		r, err = gzip.NewReader(bytes.NewReader(data))
	} else {
		err = r.Reset(bytes.NewReader(data))
	}
	if err != nil {
		return nil, fmt.Errorf("lambdaidem: inflate stored outcome: %w", err)
	}
	defer c.readers.Put(r)
	r.Multistream(false)
	var out bytes.Buffer
	out.Grow(3 * len(data))
	n, err := io.Copy(&out, io.LimitReader(r, maxInflatedOutcome+1))
	switch {
	case err != nil:
		return nil, fmt.Errorf("lambdaidem: inflate stored outcome: %w", err)
	case n > maxInflatedOutcome:
		return nil, errInflatedTooLarge
	}
	return out.Bytes(), nil
}
