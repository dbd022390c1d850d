package dynamostore_test

import (
	"context"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/lambdaidem/lambdaidem/dynamostore"
	"github.com/lambdaidem/lambdaidem/lambdaidem"
)

// A store over the table "idempotency" (key id, TTL on expiration), shared
// by every invocation of the function, and a handler whose business write
// commits with its idempotency record in one transaction. In a Lambda
// function the aws.Config comes from config.LoadDefaultConfig at start-up.
// The runnable examples, against the in-process DynamoDB endpoint, are in
// the repository's dev/integrationtest/dynamostore.
func ExampleNew() {
	var cfg aws.Config // config.LoadDefaultConfig(ctx) in a function
	store, err := dynamostore.New(dynamodb.NewFromConfig(cfg), "idempotency")
	if err != nil {
		panic(err)
	}
	guard, err := lambdaidem.New(store)
	if err != nil {
		panic(err)
	}
	createOrder := func(ctx context.Context, orderID string) (string, error) {
		err := dynamostore.Stage(ctx, types.Put{
			TableName:           aws.String("orders"),
			Item:                map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: orderID}},
			ConditionExpression: aws.String("attribute_not_exists(pk)"),
		})
		return "receipt for " + orderID, err
	}
	_, _ = lambdaidem.Do(context.Background(), guard, lambdaidem.Call[string]{Operation: "CreateOrder", Key: "client-key-1"},
		func(ctx context.Context) (string, error) { return createOrder(ctx, "order-42") })
}
