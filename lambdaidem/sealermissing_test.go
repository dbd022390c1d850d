package lambdaidem_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/lambdaidem/lambdaidem/lambdaidem"
	"github.com/lambdaidem/lambdaidem/lambdaidem/memstore"
	"github.com/lambdaidem/lambdaidem/lambdaidem/seal/sealtest"
)

// A function deployed without the Sealer the table's other functions use
// meets their sealed records: it says so, naming the fix, and never
// answers as if the key had been reused with another request.
func TestASealedRecordWithoutTheSealerNamesTheFix(t *testing.T) {
	for _, status := range []lambdaidem.Status{lambdaidem.StatusCompleted, lambdaidem.StatusInProgress} {
		t.Run(string(status), func(t *testing.T) {
			store := memstore.New()
			c := lambdaidem.Call[string]{Operation: "Charge", Key: "c-1", Fingerprint: "fp"}
			sealed := sealedGuard(t, store, sealtest.New(), nil)
			plain, err := lambdaidem.New(store)
			if err != nil {
				t.Fatal(err)
			}
			check := func() {
				_, err := lambdaidem.Do(context.Background(), plain, c, func(context.Context) (string, error) {
					t.Error("ran against a sealed record")
					return "", nil
				})
				if !errors.Is(err, lambdaidem.ErrSealerMissing) || errors.Is(err, lambdaidem.ErrKeyReused) ||
					!strings.Contains(err.Error(), "BindSealing") || !strings.Contains(err.Error(), "IDEMPOTENCY_SEAL_KEY") {
					t.Fatalf("got %v; want ErrSealerMissing naming BindSealing and IDEMPOTENCY_SEAL_KEY, never ErrKeyReused", err)
				}
			}
			if status == lambdaidem.StatusCompleted {
				if _, err := lambdaidem.Do(context.Background(), sealed, c, func(context.Context) (string, error) { return "charged", nil }); err != nil {
					t.Fatal(err)
				}
				check()
				return
			}
			_, _ = lambdaidem.Do(context.Background(), sealed, c, func(context.Context) (string, error) {
				check() // the sealed attempt still runs
				return "charged", nil
			})
		})
	}
}
