// Command declined is a test function for the end-to-end suite: a
// lambdaidem.Wrapper handler that declines a negative amount with a
// terminal error of its own type, so that the suite can check, under the
// Lambda Runtime Interface Emulator, that a duplicate gets the same
// errorType and errorMessage as the first attempt. Its store is in memory
// (the emulator keeps the process between invocations).
//
// Event: {"key": "…", "amount": 123}. Result: {"charged": 123}.
package main

import (
	"context"
	"fmt"
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

// Result is a charge.
type Result struct {
	Charged int `json:"charged"`
}

// CardDeclinedError is a decided outcome: stored and replayed.
type CardDeclinedError struct{ Amount int }

func (e *CardDeclinedError) Error() string {
	return fmt.Sprintf("card declined for amount %d", e.Amount)
}
func (e *CardDeclinedError) Terminal() bool { return true }

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
	lambda.Start(charges.Wrap(func(_ context.Context, e Event) (Result, error) {
		runs++
		log.Printf("declined: run %d", runs)
		if e.Amount < 0 {
			return Result{}, &CardDeclinedError{Amount: e.Amount}
		}
		return Result{Charged: e.Amount}, nil
	}))
}
