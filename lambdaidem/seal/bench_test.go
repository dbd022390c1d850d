package seal_test

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"strconv"
	"testing"

	"github.com/lambdaidem/lambdaidem/lambdaidem"
	"github.com/lambdaidem/lambdaidem/lambdaidem/memstore"
)

// BenchmarkGuard runs a first request and its replay of a 1 KB outcome
// through a Guard over memstore, plain and sealed, side by side: the
// sealed run's cost over the plain one is the Sealer's (the key service is
// called once per data key, not per outcome).
func BenchmarkGuard(b *testing.B) {
	raw := make([]byte, 768)
	_, _ = rand.Read(raw)
	outcome := base64.StdEncoding.EncodeToString(raw) // 1 KB that does not compress
	for _, sealed := range []bool{false, true} {
		b.Run(map[bool]string{false: "plain", true: "sealed"}[sealed], func(b *testing.B) {
			g, err := lambdaidem.New(memstore.New(), func(o *lambdaidem.Options) {
				if sealed {
					o.Sealer = newSealer(b, newKeyService(b))
				}
			})
			if err != nil {
				b.Fatal(err)
			}
			fn := func(context.Context) (string, error) { return outcome, nil }
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				c := lambdaidem.Call[string]{Operation: "Op", Key: strconv.Itoa(i), Fingerprint: "fp"}
				for range 2 {
					if _, err := lambdaidem.Do(context.Background(), g, c, fn); err != nil {
						b.Fatal(err)
					}
				}
			}
		})
	}
}
