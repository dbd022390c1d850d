package lambdaidem_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/lambdaidem/lambdaidem/lambdaidem"
)

// lineItems is a JSON outcome of about n bytes with the repetition real API
// responses have (field names, currencies, words).
func lineItems(n int) []map[string]any {
	var lines []map[string]any
	for size := 0; size < n; size += 96 {
		lines = append(lines, map[string]any{"sku": "SKU-" + strings.Repeat("7", 5), "name": "organic cotton shirt", "quantity": 2, "unit_price": 19.99, "currency": "EUR"})
	}
	return lines
}

// incompressible is n bytes of base64 text from a random source: gzip
// cannot make it much shorter than 3/4 of n.
func incompressible(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return base64.StdEncoding.EncodeToString(b)[:n]
}

var gzipMagic = []byte{0x1f, 0x8b}

// An outcome above CompressAbove is stored as a gzip stream of its encoded
// form, shorter; a replay gets the same value; one below is stored as
// before.
func TestOutcomesAboveTheThresholdAreStoredCompressed(t *testing.T) {
	cases := []struct {
		name       string
		size       int
		compressed bool
	}{
		{"small outcome stored as encoded", 200, false},
		{"16 KB outcome stored compressed", 16 << 10, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := newFixture(t)
			want := lineItems(c.size)
			got, err := replayOf(t, f.guard, "k", func(context.Context) ([]map[string]any, error) { return want, nil })
			if err != nil {
				t.Fatal(err)
			}
			wantJSON, _ := json.Marshal(want)
			if gotJSON, _ := json.Marshal(got); !bytes.Equal(gotJSON, wantJSON) {
				t.Fatalf("replayed %d bytes, want the %d bytes the handler returned", len(gotJSON), len(wantJSON))
			}
			stored := f.onlyRecord(t).Outcome
			plain, _ := lambdaidem.EncodeStoredOutcome(lambdaidem.StoredOutcome{Value: wantJSON})
			if c.compressed {
				if !bytes.HasPrefix(stored, gzipMagic) || len(stored)*3 > len(plain) {
					t.Fatalf("stored %d bytes (prefix % x); want a gzip stream under a third of the %d encoded bytes", len(stored), stored[:2], len(plain))
				}
			} else if !bytes.Equal(stored, plain) {
				t.Fatalf("stored %q; want the encoded outcome %q", stored, plain)
			}
			if o, err := lambdaidem.DecodeStoredOutcome(stored); err != nil || !bytes.Equal(o.Value, wantJSON) {
				t.Fatalf("DecodeStoredOutcome: %v; want the value, for tools", err)
			}
		})
	}
}

// Records stored uncompressed (by a Guard with NoCompression, or by a
// version before compression) replay under a Guard that compresses, and
// the other way round.
func TestCompressionReadsEitherForm(t *testing.T) {
	want := lineItems(8 << 10)
	for _, c := range []struct {
		name           string
		writer, reader func(*lambdaidem.Options)
	}{
		{"written uncompressed, read with compression on", func(o *lambdaidem.Options) { o.NoCompression = true }, func(*lambdaidem.Options) {}},
		{"written compressed, read with compression off", func(*lambdaidem.Options) {}, func(o *lambdaidem.Options) { o.NoCompression = true }},
	} {
		t.Run(c.name, func(t *testing.T) {
			w := newFixture(t, c.writer)
			call := lambdaidem.Call[[]map[string]any]{Operation: "Op", Key: "k", Fingerprint: "fp"}
			if _, err := lambdaidem.Do(context.Background(), w.guard, call, func(context.Context) ([]map[string]any, error) { return want, nil }); err != nil {
				t.Fatal(err)
			}
			r := newFixtureWith(t, w.store, c.reader)
			got, err := lambdaidem.Do(context.Background(), r.guard, call, func(context.Context) ([]map[string]any, error) {
				t.Fatal("the duplicate ran")
				return nil, nil
			})
			if err != nil || len(got) != len(want) {
				t.Fatalf("replay = %d lines, %v; want %d lines", len(got), err, len(want))
			}
		})
	}
}

// With NoCompression the stored bytes are exactly EncodeStoredOutcome's.
func TestNoCompressionStoresTheEncodedOutcome(t *testing.T) {
	f := newFixture(t, func(o *lambdaidem.Options) { o.NoCompression = true })
	value := strings.Repeat("a", 4096)
	if _, err := replayOf(t, f.guard, "k", func(context.Context) (string, error) { return value, nil }); err != nil {
		t.Fatal(err)
	}
	raw, _ := json.Marshal(value)
	want, _ := lambdaidem.EncodeStoredOutcome(lambdaidem.StoredOutcome{Value: raw})
	if got := f.onlyRecord(t).Outcome; !bytes.Equal(got, want) {
		t.Fatalf("stored %d bytes, want the %d encoded bytes", len(got), len(want))
	}
}

// MaxOutcomeSize applies to the stored bytes: an outcome that compresses
// under the cap is kept; one that does not is refused and nothing stays.
func TestOutcomeCapAppliesToStoredBytes(t *testing.T) {
	f := newFixture(t, func(o *lambdaidem.Options) { o.MaxOutcomeSize = 2000 })
	if _, err := replayOf(t, f.guard, "fits", func(context.Context) ([]map[string]any, error) { return lineItems(10 << 10), nil }); err != nil {
		t.Fatalf("a 10 KB outcome that compresses under 2,000 bytes: %v; want it stored", err)
	}
	if n := len(f.onlyRecord(t).Outcome); n > 2000 {
		t.Fatalf("stored %d bytes over a cap of 2000", n)
	}
	call := lambdaidem.Call[string]{Operation: "Op", Key: "too-large", Fingerprint: "fp"}
	_, err := lambdaidem.Do(context.Background(), f.guard, call, func(context.Context) (string, error) { return incompressible(4000), nil })
	if !errors.Is(err, lambdaidem.ErrOutcomeTooLarge) {
		t.Fatalf("an incompressible 4,000-byte outcome under a 2,000-byte cap: %v; want ErrOutcomeTooLarge", err)
	}
	if len(f.store.Records()) != 1 {
		t.Fatalf("records: %d; want only the first (the refused claim released)", len(f.store.Records()))
	}
}

// The Sealer gets the compressed bytes (compression before encryption,
// which leaves nothing to compress), and Open's result is inflated.
func TestCompressionRunsBeforeTheSealer(t *testing.T) {
	s := &tagSealer{}
	f := newFixture(t, func(o *lambdaidem.Options) { o.Sealer = s })
	want := lineItems(8 << 10)
	got, err := replayOf(t, f.guard, "k", func(context.Context) ([]map[string]any, error) { return want, nil })
	if err != nil || len(got) != len(want) {
		t.Fatalf("replay = %d lines, %v", len(got), err)
	}
	rec := f.onlyRecord(t)
	plain, err := s.Open(context.Background(), rec.Key, rec.Outcome)
	if err != nil || !bytes.HasPrefix(plain, gzipMagic) {
		t.Fatalf("the sealer was given % x…, %v; want a gzip stream", plain[:min(2, len(plain))], err)
	}
}

// tamperSealer stores as it is given, and hands back, on Open, what
// tamper makes of it: a way to put a damaged stored outcome in front of
// the Guard.
type tamperSealer struct{ tamper func([]byte) []byte }

func (s tamperSealer) Seal(_ context.Context, _ string, p []byte) ([]byte, error) { return p, nil }
func (s tamperSealer) Open(_ context.Context, _ string, b []byte) ([]byte, error) {
	return s.tamper(bytes.Clone(b)), nil
}

// A damaged compressed outcome (a flipped byte, a cut stream, a stream
// that inflates past any outcome a Lambda function returns) fails the
// replay with an error; it never replays garbage nor exhausts memory.
func TestDamagedCompressedOutcomesAreRefused(t *testing.T) {
	bomb := func([]byte) []byte {
		var buf bytes.Buffer
		w, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
		// A valid stored outcome, a JSON string of 33 MiB: only the bound
		// refuses it.
		_, _ = w.Write([]byte(`{"value":"`))
		chunk := bytes.Repeat([]byte("a"), 1<<20)
		for range 33 {
			_, _ = w.Write(chunk)
		}
		_, _ = w.Write([]byte(`"}`))
		_ = w.Close()
		return buf.Bytes()
	}
	cases := map[string]func([]byte) []byte{
		"flipped byte in the body": func(b []byte) []byte { b[len(b)/2] ^= 0x40; return b },
		"flipped CRC":              func(b []byte) []byte { b[len(b)-6] ^= 0x01; return b },
		"cut stream":               func(b []byte) []byte { return b[:len(b)/2] },
		"inflates past 32 MiB":     bomb,
	}
	for name, tamper := range cases {
		t.Run(name, func(t *testing.T) {
			f := newFixture(t, func(o *lambdaidem.Options) { o.Sealer = tamperSealer{tamper: tamper} })
			_, err := replayOf(t, f.guard, "k", func(context.Context) ([]map[string]any, error) { return lineItems(8 << 10), nil })
			if err == nil {
				t.Fatal("a damaged stored outcome replayed")
			}
			if _, derr := lambdaidem.DecodeStoredOutcome(tamper(f.onlyRecord(t).Outcome)); derr == nil {
				t.Fatal("DecodeStoredOutcome read a damaged outcome")
			}
		})
	}
}
