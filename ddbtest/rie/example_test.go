package rie_test

import (
	"errors"
	"testing"
	"time"

	"github.com/lambdaidem/lambdaidem/ddbtest"
	"github.com/lambdaidem/lambdaidem/ddbtest/rie"
)

// A test of your own bootstrap under the emulator: built as deployed, run
// against the kit's DynamoDB endpoint, invoked with a typed timeout. (In
// a _test.go file of your function's module; without aws-lambda-rie the
// test is skipped in one line.)
func Example() {
	_ = func(t *testing.T) {
		kit := ddbtest.NewKit(t)
		boot := rie.BuildBootstrap(t, ".", "./cmd/orders")
		fn := rie.Run(t, rie.Options{
			Bootstrap:        boot,
			Timeout:          3 * time.Second,
			DynamoDBEndpoint: kit.Endpoint.URL,
			Env:              map[string]string{"IDEMPOTENCY_TABLE": kit.Table},
		})
		var receipt struct {
			ID string `json:"id"`
		}
		err := rie.InvokeJSON(t.Context(), fn, map[string]string{"id": "o-1"}, &receipt)
		if errors.Is(err, rie.ErrTimeout) {
			t.Fatal("the emulator cut the function off at its timeout")
		}
		if err != nil {
			t.Fatal(err)
		}
	}
}

// Hold the function's commit past its timeout: a held commit is never
// applied, and a retry takes the record over once the lease (the deadline
// plus LeaseMargin) has passed.
func ExampleHoldEndpoint() {
	_ = func(t *testing.T, kit *ddbtest.Kit, boot string) {
		hold, url := rie.HoldEndpoint(t, kit.Endpoint.URL)
		fn := rie.Run(t, rie.Options{Bootstrap: boot, Timeout: 2 * time.Second, DynamoDBEndpoint: url,
			Env: map[string]string{"IDEMPOTENCY_TABLE": kit.Table}})
		hold.Add(rie.HoldRule{Op: "TransactWriteItems", Contains: "o-1"})
		err := rie.InvokeJSON(t.Context(), fn, map[string]string{"id": "o-1"}, nil)
		if !errors.Is(err, rie.ErrTimeout) {
			t.Fatalf("want a timeout, got %v", err)
		}
		hold.ReleaseAll()
	}
}
