// An order handler whose business write commits in ONE transaction with its
// idempotency record: README's "Two minutes", complete.
package main

import (
	"context"
	"log"
	"os"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/lambdaidem/lambdaidem/dynamostore"
	"github.com/lambdaidem/lambdaidem/lambdaidem"
)

type Order struct {
	ID    string `json:"order_id"`
	Total int    `json:"total"`
}

type Receipt struct {
	OrderID string `json:"order_id"`
}

func main() {
	cfg, err := config.LoadDefaultConfig(context.Background())
	if err != nil {
		log.Fatal(err)
	}
	// The table, its attribute names and the retry horizon: the variables the
	// CDK construct's Table.Bind sets (IDEMPOTENCY_TABLE, IDEMPOTENCY_TTL, ...).
	env, err := dynamostore.ReadEnv(os.Getenv)
	if err != nil {
		log.Fatal(err)
	}
	store, err := dynamostore.New(dynamodb.NewFromConfig(cfg), env.Table, env.StoreOptions)
	if err != nil {
		log.Fatal(err)
	}
	guard, err := lambdaidem.New(store, env.GuardOptions)
	if err != nil {
		log.Fatal(err)
	}
	orders, err := lambdaidem.NewWrapper(guard, lambdaidem.Spec[Order, Receipt]{
		Operation: "CreateOrder",
		Key:       func(_ context.Context, o Order) (string, error) { return o.ID, nil },
	})
	if err != nil {
		log.Fatal(err)
	}
	handler := orders.Wrap(func(ctx context.Context, o Order) (Receipt, error) {
		// Committed in ONE transaction with the idempotency record, or not at all.
		order := types.Put{
			TableName:           aws.String("orders"),
			Item:                map[string]types.AttributeValue{"id": &types.AttributeValueMemberS{Value: o.ID}},
			ConditionExpression: aws.String("attribute_not_exists(id)"),
		}
		if err := dynamostore.Stage(ctx, order); err != nil {
			return Receipt{}, err
		}
		return Receipt{OrderID: o.ID}, nil
	})
	lambda.Start(handler) // the signature is unchanged
}
