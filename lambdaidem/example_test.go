package lambdaidem_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/lambdaidem/lambdaidem/lambdaidem"
	"github.com/lambdaidem/lambdaidem/lambdaidem/memstore"
)

// The two-minute version: wrap a handler, and a retry gets the first answer.
// In a Lambda function the store is a dynamostore.Store and the wrapped
// handler goes to lambda.Start unchanged.
func ExampleWrapper() {
	type Order struct {
		ID    string `json:"order_id"`
		Total int    `json:"total"`
	}
	store := memstore.New()
	guard, err := lambdaidem.New(store)
	if err != nil {
		panic(err)
	}
	orders, err := lambdaidem.NewWrapper(guard, lambdaidem.Spec[Order, string]{
		Operation: "CreateOrder",
		Key:       func(_ context.Context, o Order) (string, error) { return o.ID, nil },
	})
	if err != nil {
		panic(err)
	}
	handler := orders.Wrap(func(ctx context.Context, o Order) (string, error) {
		// Staged writes commit in one atomic write with the record.
		if err := memstore.Stage(ctx, memstore.Put{Table: "orders", Key: o.ID}); err != nil {
			return "", err
		}
		fmt.Println("charging", o.Total)
		return "order " + o.ID + " accepted", nil
	})

	first, _ := handler(context.Background(), Order{ID: "o-1", Total: 42})
	retry, _ := handler(context.Background(), Order{ID: "o-1", Total: 42})
	_, err = handler(context.Background(), Order{ID: "o-1", Total: 99})
	fmt.Println(first)
	fmt.Println(retry)
	fmt.Println(errors.Is(err, lambdaidem.ErrKeyReused))
	fmt.Println(len(store.Items("orders")), "order written")
	// Output:
	// charging 42
	// order o-1 accepted
	// order o-1 accepted
	// true
	// 1 order written
}

// Do is the machinery under Wrap, for adapters that derive the key and the
// fingerprint themselves.
func ExampleDo() {
	guard, _ := lambdaidem.New(memstore.New())
	fp, _ := lambdaidem.FingerprintJSON([]byte(`{"amount": 100}`))
	call := lambdaidem.Call[int]{Operation: "Charge", Scope: "tenant-1", Key: "idem-123", Fingerprint: fp}
	for range 2 {
		n, err := lambdaidem.Do(context.Background(), guard, call, func(ctx context.Context) (int, error) {
			fmt.Println("running")
			return 100, nil
		})
		fmt.Println(n, err)
	}
	// Output:
	// running
	// 100 <nil>
	// 100 <nil>
}

// An attempt that began an external effect and then failed is kept as
// UNKNOWN; the reconcile function asks the downstream system what happened.
func ExampleAttempt_BeginExternal() {
	guard, _ := lambdaidem.New(memstore.New())
	call := lambdaidem.Call[string]{Operation: "SendEmail", Key: "welcome-42"}
	_, err := lambdaidem.Do(context.Background(), guard, call, func(ctx context.Context) (string, error) {
		a, _ := lambdaidem.AttemptFrom(ctx)
		if err := a.BeginExternal(ctx); err != nil {
			return "", err
		}
		// provider.Send(ctx, msg, a.OperationKey()) times out here.
		return "", errors.New("email provider timed out")
	})
	fmt.Println(err)

	_, err = lambdaidem.Do(context.Background(), guard, call, func(ctx context.Context) (string, error) { return "sent", nil })
	fmt.Println(errors.Is(err, lambdaidem.ErrOutcomeUnknown))

	call.Reconcile = func(ctx context.Context, u lambdaidem.Unknown) (string, bool, error) {
		// provider.Lookup(ctx, u.OperationKey) says the email went out.
		return "sent", true, nil
	}
	out, err := lambdaidem.Do(context.Background(), guard, call, func(ctx context.Context) (string, error) { return "sent twice!", nil })
	fmt.Println(out, err)
	// Output:
	// email provider timed out
	// true
	// sent <nil>
}
