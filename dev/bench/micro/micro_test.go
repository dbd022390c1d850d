package micro

import (
	"context"
	"strconv"
	"testing"

	"github.com/lambdaidem/lambdaidem/dev/bench/payload"
	"github.com/lambdaidem/lambdaidem/lambdaidem"
	"github.com/lambdaidem/lambdaidem/lambdaidem/memstore"
)

// Payment is the benchmark event: a payment request whose Note (order
// lines as text, see bench/payload: it compresses about as JSON does)
// pads the JSON encoding to the payload size.
type Payment struct {
	ID       string `json:"id"`
	Amount   int64  `json:"amount"`
	Currency string `json:"currency"`
	Note     string `json:"note"`
}

// Receipt is the handler's result; it echoes the note, so the stored
// outcome is as large as the event.
type Receipt struct {
	ID     string `json:"id"`
	Status string `json:"status"`
	Amount int64  `json:"amount"`
	Note   string `json:"note"`
}

type size struct {
	name string
	n    int
}

func sizes() []size { return []size{{"1KB", 1 << 10}, {"64KB", 64 << 10}} }

// payment returns an event whose JSON encoding is about n bytes.
func payment(id string, n int) Payment {
	const overhead = len(`{"id":"","amount":4200,"currency":"EUR","note":""}`)
	return Payment{ID: id, Amount: 4200, Currency: "EUR", Note: payload.Text(1, max(0, n-overhead-len(id)))}
}

const businessValue = `{"status":"captured"}`

// newHandler returns a handler that writes one business item (a staged
// Put of value) and returns a receipt.
func newHandler(value []byte) func(context.Context, Payment) (Receipt, error) {
	return func(ctx context.Context, p Payment) (Receipt, error) {
		if err := memstore.Stage(ctx, memstore.Put{Table: "payments", Key: p.ID, Value: value}); err != nil {
			return Receipt{}, err
		}
		return Receipt{ID: p.ID, Status: "captured", Amount: p.Amount, Note: p.Note}, nil
	}
}

// bare is the same handler without a store to write to: the floor the
// wrapped handler is compared with.
func bare(_ context.Context, p Payment) (Receipt, error) {
	return Receipt{ID: p.ID, Status: "captured", Amount: p.Amount, Note: p.Note}, nil
}

func spec() lambdaidem.Spec[Payment, Receipt] {
	return lambdaidem.Spec[Payment, Receipt]{
		Operation: "CreatePayment",
		Key:       func(_ context.Context, p Payment) (string, error) { return p.ID, nil },
	}
}

// standardLambda is the environment standard Lambda gives a function ("Defined
// runtime environment variables", Lambda developer guide): RenewAuto then
// starts no renewer, as in the functions the figures describe. The
// "-renewing" rows measure the renewer (Lambda Managed Instances,
// containers).
func standardLambda(name string) string {
	if name == "AWS_LAMBDA_INITIALIZATION_TYPE" {
		return "on-demand"
	}
	return ""
}

func wrapped(b *testing.B, mode lambdaidem.Mode, cacheSize int, optFns ...func(*lambdaidem.Options)) (func(context.Context, Payment) (Receipt, error), *memstore.Store) {
	b.Helper()
	store := memstore.New()
	g, err := lambdaidem.New(store, append([]func(*lambdaidem.Options){func(o *lambdaidem.Options) {
		o.Mode = mode
		o.CacheSize = cacheSize
		o.Getenv = standardLambda
	}}, optFns...)...)
	if err != nil {
		b.Fatal(err)
	}
	w, err := lambdaidem.NewWrapper(g, spec())
	if err != nil {
		b.Fatal(err)
	}
	return w.Wrap(newHandler([]byte(businessValue))), store
}

// ids returns n distinct keys, built outside the timed loop.
func ids(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = "pay-" + strconv.Itoa(i)
	}
	return out
}

// resetEvery bounds the in-memory store: a fresh one every so many first
// requests, outside the timer, so that memory stays flat at 64 KB.
const resetEvery = 512

// BenchmarkBare is the handler called directly, without the wrapper.
func BenchmarkBare(b *testing.B) {
	for _, sz := range sizes() {
		b.Run(sz.name, func(b *testing.B) {
			ev := payment("pay-0", sz.n)
			ctx := context.Background()
			b.ReportAllocs()
			for b.Loop() {
				if _, err := bare(ctx, ev); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// uncompressed turns outcome compression off, for the rows that show what
// it costs.
func uncompressed(o *lambdaidem.Options) { o.NoCompression = true }

// renewing starts a renewer for every attempt, as RenewAuto does on Lambda
// Managed Instances and in containers.
func renewing(o *lambdaidem.Options) { o.Renew = lambdaidem.RenewAlways }

// BenchmarkFirst is a first request: key, fingerprint, claim (claim-first
// only), handler, staging, outcome encoding (and compression) and commit.
// The "uncompressed" rows are claim-first with NoCompression, the "renewing"
// rows claim-first with a renewer (which does no store call: the handler
// ends long before a renewal is due).
func BenchmarkFirst(b *testing.B) {
	for _, c := range []struct {
		name string
		mode lambdaidem.Mode
		opts []func(*lambdaidem.Options)
	}{
		{lambdaidem.ClaimFirst.String(), lambdaidem.ClaimFirst, nil},
		{lambdaidem.Optimistic.String(), lambdaidem.Optimistic, nil},
		{lambdaidem.ClaimFirst.String() + "-uncompressed", lambdaidem.ClaimFirst, []func(*lambdaidem.Options){uncompressed}},
		{lambdaidem.ClaimFirst.String() + "-renewing", lambdaidem.ClaimFirst, []func(*lambdaidem.Options){renewing}},
	} {
		mode := c.mode
		for _, sz := range sizes() {
			b.Run(c.name+"/"+sz.name, func(b *testing.B) {
				keys := ids(resetEvery)
				events := make([]Payment, len(keys))
				for i, k := range keys {
					events[i] = payment(k, sz.n)
				}
				h, _ := wrapped(b, mode, 0, c.opts...)
				ctx := context.Background()
				b.ReportAllocs()
				i := 0
				for b.Loop() {
					if i == len(events) {
						b.StopTimer()
						h, _ = wrapped(b, mode, 0, c.opts...)
						i = 0
						b.StartTimer()
					}
					if _, err := h(ctx, events[i]); err != nil {
						b.Fatal(err)
					}
					i++
				}
			})
		}
	}
}

// BenchmarkReplay is a duplicate of a completed request answered from the
// store (no cache) and from the local cache.
func BenchmarkReplay(b *testing.B) {
	for _, c := range []struct {
		name  string
		cache int
		opts  []func(*lambdaidem.Options)
	}{{"store", 0, nil}, {"cache", 64, nil}, {"store-uncompressed", 0, []func(*lambdaidem.Options){uncompressed}}} {
		for _, sz := range sizes() {
			b.Run(c.name+"/"+sz.name, func(b *testing.B) {
				h, _ := wrapped(b, lambdaidem.ClaimFirst, c.cache, c.opts...)
				ctx := context.Background()
				ev := payment("pay-0", sz.n)
				if _, err := h(ctx, ev); err != nil {
					b.Fatal(err)
				}
				b.ReportAllocs()
				for b.Loop() {
					r, err := h(ctx, ev)
					if err != nil || r.ID != ev.ID {
						b.Fatal(r, err)
					}
				}
			})
		}
	}
}

// BenchmarkRecordKey is the record key derivation alone.
func BenchmarkRecordKey(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		_ = lambdaidem.RecordKey("lambdaidem", "tenant-42", "CreatePayment", "7b0c6f1e-3a52-4a8e-9d1c-5f2e8a9b0c11")
	}
}

// BenchmarkFingerprint is the fingerprint of the event alone: a Go value
// (JSON-encoded) and raw JSON (canonicalized first).
func BenchmarkFingerprint(b *testing.B) {
	for _, sz := range sizes() {
		ev := payment("pay-0", sz.n)
		b.Run("value/"+sz.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := lambdaidem.Fingerprint(ev); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run("json/"+sz.name, func(b *testing.B) {
			doc := []byte(`{"currency":"EUR","amount":4200,"id":"pay-0","note":"` + ev.Note + `"}`)
			b.ReportAllocs()
			for b.Loop() {
				if _, err := lambdaidem.FingerprintJSON(doc); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
