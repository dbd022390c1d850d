// Command tenants is a test function for the end-to-end suite: a
// lambdaidem.Wrapper handler of a function in Lambda's tenant isolation
// mode (IDEMPOTENCY_TENANTS=required), answering with the tenant Lambda
// named and its run count, so that the suite can check under the Runtime
// Interface Emulator that the tenant of the invoke reaches the record key.
// Its store is in memory: one process stands for the table every tenant's
// execution environments share.
//
// Event: {"key": "…", "amount": 123}. Result: {"tenant": "…", "run": 1}.
package main

import (
	"context"
	"log"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/lambdaidem/lambdaidem/lambdaidem"
	"github.com/lambdaidem/lambdaidem/lambdaidem/memstore"
)

// Event is a charge request.
type Event struct {
	Key    string `json:"key"`
	Amount int    `json:"amount"`
}

// Result names who the charge ran for, and how often the handler ran.
type Result struct {
	Tenant string `json:"tenant"`
	Run    int    `json:"run"`
}

func main() {
	guard, err := lambdaidem.New(memstore.New())
	if err != nil {
		log.Fatal(err)
	}
	charges, err := lambdaidem.NewWrapper(guard, lambdaidem.Spec[Event, Result]{
		Operation: "Charge",
		Key:       func(_ context.Context, e Event) (string, error) { return e.Key, nil },
	})
	if err != nil {
		log.Fatal(err)
	}
	runs := 0
	lambda.Start(charges.Wrap(func(ctx context.Context, e Event) (Result, error) {
		runs++
		return Result{Tenant: lambdaidem.Tenant(ctx), Run: runs}, nil
	}))
}
