package dynamostore_test

import (
	"context"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/lambdaidem/lambdaidem/dynamostore"
	"github.com/lambdaidem/lambdaidem/lambdaidem"
	"github.com/lambdaidem/lambdaidem/lambdaidem/powertools"
)

// Order is the event of the function being moved from Powertools Python,
// whose @idempotent handler app.lambda_handler had
// event_key_jmespath="order_id" and payload_validation_jmespath="amount".
type Order struct {
	OrderID string `json:"order_id"`
	Amount  int    `json:"amount"`
}

// A cutover from Powertools Python on the same table: the Go version
// honours the old records and keeps the old version out of its own until
// the window closes.
func ExamplePowertoolsHandler() {
	client := dynamodb.New(dynamodb.Options{Region: "eu-west-1"})
	store, err := dynamostore.New(client, "orders-idempotency", func(o *dynamostore.Options) {
		o.Powertools = dynamostore.PowertoolsWindow{
			Config:     powertools.Config{Language: powertools.Python, FunctionName: "orders", Handler: "app.lambda_handler"},
			Until:      time.Date(2027, 2, 1, 0, 0, 0, 0, time.UTC),
			Validation: true,
		}
	})
	if err != nil {
		panic(err)
	}
	guard, err := lambdaidem.New(store)
	if err != nil {
		panic(err)
	}
	wrapper, err := lambdaidem.NewWrapper(guard, lambdaidem.Spec[Order, string]{
		Operation: "CreateOrder",
		Key:       func(_ context.Context, o Order) (string, error) { return o.OrderID, nil },
	})
	if err != nil {
		panic(err)
	}
	handler := dynamostore.PowertoolsHandler(store,
		wrapper.Wrap(func(ctx context.Context, o Order) (string, error) { return "created " + o.OrderID, nil }),
		func(o Order) (any, error) { return o.OrderID, nil },
		func(o Order) (any, error) { return o.Amount, nil })
	_ = handler // lambda.Start(handler)
}
