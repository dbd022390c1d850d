package emf_test

import (
	"context"
	"io"
	"strconv"
	"testing"

	"github.com/lambdaidem/lambdaidem/lambdaidem"
	"github.com/lambdaidem/lambdaidem/lambdaidem/emf"
	"github.com/lambdaidem/lambdaidem/lambdaidem/memstore"
)

// BenchmarkGuard measures a first request (claim, handler, commit) over the
// in-memory store, without hooks and with the emf hooks writing to
// io.Discard: the metrics' own cost, side by side in one run.
func BenchmarkGuard(b *testing.B) {
	m, err := emf.New(io.Discard)
	if err != nil {
		b.Fatal(err)
	}
	for _, bc := range []struct {
		name  string
		hooks lambdaidem.Hooks
	}{{"plain", lambdaidem.Hooks{}}, {"emf", m.Hooks()}} {
		b.Run(bc.name, func(b *testing.B) {
			g, err := lambdaidem.New(memstore.New(), func(o *lambdaidem.Options) { o.Hooks = bc.hooks })
			if err != nil {
				b.Fatal(err)
			}
			ok := func(context.Context) (string, error) { return "ok", nil }
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				if _, err := lambdaidem.Do(context.Background(), g, lambdaidem.Call[string]{Operation: "CreatePayment", Key: strconv.Itoa(i)}, ok); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
