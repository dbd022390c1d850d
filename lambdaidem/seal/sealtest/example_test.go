package sealtest_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/lambdaidem/lambdaidem/lambdaidem"
	"github.com/lambdaidem/lambdaidem/lambdaidem/memstore"
	"github.com/lambdaidem/lambdaidem/lambdaidem/seal"
	"github.com/lambdaidem/lambdaidem/lambdaidem/seal/sealtest"
)

// A handler's test with sealed outcomes: the KeyService stands in for KMS,
// counts its calls, and fails on demand. A cold process (a new Sealer)
// opens a stored outcome with one Decrypt; while Decrypt is throttled the
// duplicate gets ErrKeyUnavailable, and the outcome stays stored.
func Example() {
	keys := sealtest.New()
	store := memstore.New()
	guard := func() *lambdaidem.Guard { // one per process
		sealer, _ := seal.New(keys)
		g, _ := lambdaidem.New(store, func(o *lambdaidem.Options) { o.Sealer = sealer })
		return g
	}
	call := lambdaidem.Call[string]{Operation: "Refund", Key: "r-1", Fingerprint: "fp"}
	refund := func(context.Context) (string, error) { return "refunded", nil }
	ctx := context.Background()

	out, _ := lambdaidem.Do(ctx, guard(), call, refund)
	fmt.Println(out, keys.Calls(sealtest.GenerateDataKey), keys.Calls(sealtest.Decrypt))

	keys.Fail(sealtest.Decrypt, sealtest.Throttled("kms:Decrypt"))
	_, err := lambdaidem.Do(ctx, guard(), call, refund)
	fmt.Println(errors.Is(err, lambdaidem.ErrKeyUnavailable))

	keys.Fail(sealtest.Decrypt, nil)
	out, _ = lambdaidem.Do(ctx, guard(), call, refund)
	fmt.Println(out)
	// Output:
	// refunded 1 0
	// true
	// refunded
}
