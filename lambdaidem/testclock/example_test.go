package testclock_test

import (
	"context"
	"fmt"
	"time"

	"github.com/lambdaidem/lambdaidem/lambdaidem"
	"github.com/lambdaidem/lambdaidem/lambdaidem/memstore"
	"github.com/lambdaidem/lambdaidem/lambdaidem/testclock"
)

// A completed key is remembered for the retry horizon: with the clock moved
// past it, the same key is a new operation and runs again. No sleeping.
func Example() {
	clock := testclock.New(time.Date(2026, 1, 1, 9, 0, 0, 0, time.UTC))
	guard, err := lambdaidem.New(memstore.New(), func(o *lambdaidem.Options) {
		o.Now, o.After = clock.Now, clock.After
		o.RetryHorizon = 24 * time.Hour
	})
	if err != nil {
		panic(err)
	}
	call := lambdaidem.Call[string]{Operation: "Charge", Key: "charge-1"}
	charge := func(context.Context) (string, error) {
		fmt.Println("charging at", clock.Now().Format(time.DateTime))
		return "charged", nil
	}
	for _, wait := range []time.Duration{0, 23 * time.Hour, 2 * time.Hour} {
		clock.Advance(wait)
		out, err := lambdaidem.Do(context.Background(), guard, call, charge)
		fmt.Println(out, err)
	}
	// Output:
	// charging at 2026-01-01 09:00:00
	// charged <nil>
	// charged <nil>
	// charging at 2026-01-02 10:00:00
	// charged <nil>
}
