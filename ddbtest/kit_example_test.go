package ddbtest_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/lambdaidem/lambdaidem/ddbtest"
	"github.com/lambdaidem/lambdaidem/dynamostore"
	"github.com/lambdaidem/lambdaidem/lambdaidem"
)

// Testing a handler that stages DynamoDB writes: one call gives the
// endpoint, the idempotency table and the store. The refund handler stages
// a ConditionCheck (the payment must exist) and the refund's Put; they
// commit with the idempotency record or not at all. In a test, use
// ddbtest.NewKit(t) and kit.NewTable(t, ...).
func ExampleOpenKit() {
	ctx := context.Background()
	kit, err := ddbtest.OpenKit(ctx)
	if err != nil {
		panic(err)
	}
	defer kit.Close()
	if err := kit.CreateTable(ctx, "payments", "id"); err != nil {
		panic(err)
	}
	if err := kit.CreateTable(ctx, "refunds", "id"); err != nil {
		panic(err)
	}
	_, err = kit.Client.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String("payments"),
		Item: map[string]types.AttributeValue{"id": &types.AttributeValueMemberS{Value: "pay-1"}}})
	if err != nil {
		panic(err)
	}

	type Refund struct {
		Key       string `json:"idempotency_key"`
		PaymentID string `json:"payment_id"`
	}
	guard, _ := lambdaidem.New(kit.Store)
	refunds, _ := lambdaidem.NewWrapper(guard, lambdaidem.Spec[Refund, string]{
		Operation: "RefundPayment",
		Key:       func(_ context.Context, r Refund) (string, error) { return r.Key, nil },
	})
	handler := refunds.Wrap(func(ctx context.Context, r Refund) (string, error) {
		fmt.Println("refunding", r.PaymentID)
		paymentKey := map[string]types.AttributeValue{"id": &types.AttributeValueMemberS{Value: r.PaymentID}}
		if err := dynamostore.Stage(ctx, types.ConditionCheck{TableName: aws.String("payments"), Key: paymentKey,
			ConditionExpression: aws.String("attribute_exists(id)")}); err != nil {
			return "", err
		}
		refundItem := map[string]types.AttributeValue{"id": &types.AttributeValueMemberS{Value: "refund-of-" + r.PaymentID}}
		if err := dynamostore.Stage(ctx, types.Put{TableName: aws.String("refunds"), Item: refundItem}); err != nil {
			return "", err
		}
		return "refund-of-" + r.PaymentID, nil
	})

	first, err := handler(ctx, Refund{Key: "k-1", PaymentID: "pay-1"})
	fmt.Println(first, err)
	retry, err := handler(ctx, Refund{Key: "k-1", PaymentID: "pay-1"})
	fmt.Println(retry, err)
	_, err = handler(ctx, Refund{Key: "k-2", PaymentID: "pay-404"})
	var failed *dynamostore.ConditionFailedError
	fmt.Println(errors.Is(err, lambdaidem.ErrConditionFailed), errors.As(err, &failed) && failed.Action == "ConditionCheck")
	out, _ := kit.Client.Scan(ctx, &dynamodb.ScanInput{TableName: aws.String("refunds")})
	fmt.Println(len(out.Items), "refund written")
	// Output:
	// refunding pay-1
	// refund-of-pay-1 <nil>
	// refund-of-pay-1 <nil>
	// refunding pay-404
	// true true
	// 1 refund written
}
