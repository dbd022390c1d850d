package payments

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/lambdaidem/lambdaidem/dynamostore"
)

// DB is the part of the DynamoDB API the handler calls itself;
// *dynamodb.Client satisfies it. Writes go through dynamostore.Stage, in the
// idempotency store's transaction.
type DB interface {
	GetItem(ctx context.Context, in *dynamodb.GetItemInput, optFns ...func(*dynamodb.Options)) (*dynamodb.GetItemOutput, error)
}

// stagePut stages p's item in the wrapped invocation of ctx: it is written
// with the idempotency record, or not at all. The condition keeps a payment
// from ever being overwritten.
func stagePut(ctx context.Context, table string, p Payment) error {
	return dynamostore.Stage(ctx, types.Put{
		TableName:           aws.String(table),
		Item:                item(p),
		ConditionExpression: aws.String("attribute_not_exists(id)"),
	})
}

func item(p Payment) map[string]types.AttributeValue {
	return map[string]types.AttributeValue{
		"id":         &types.AttributeValueMemberS{Value: p.ID},
		"amount":     &types.AttributeValueMemberN{Value: strconv.FormatInt(p.Amount, 10)},
		"currency":   &types.AttributeValueMemberS{Value: p.Currency},
		"reference":  &types.AttributeValueMemberS{Value: p.Reference},
		"created_at": &types.AttributeValueMemberS{Value: p.CreatedAt},
	}
}

// get reads a payment with a strongly consistent GetItem.
func get(ctx context.Context, db DB, table, id string) (Payment, bool, error) {
	out, err := db.GetItem(ctx, &dynamodb.GetItemInput{
		TableName:      aws.String(table),
		Key:            map[string]types.AttributeValue{"id": &types.AttributeValueMemberS{Value: id}},
		ConsistentRead: aws.Bool(true),
	})
	if err != nil {
		return Payment{}, false, fmt.Errorf("payments: get %s: %w", id, err)
	}
	if out.Item == nil {
		return Payment{}, false, nil
	}
	p, err := decode(out.Item)
	return p, err == nil, err
}

func decode(it map[string]types.AttributeValue) (Payment, error) {
	s := func(name string) string {
		if v, ok := it[name].(*types.AttributeValueMemberS); ok {
			return v.Value
		}
		return ""
	}
	n, ok := it["amount"].(*types.AttributeValueMemberN)
	if !ok {
		return Payment{}, errors.New("payments: item has no numeric amount")
	}
	amount, err := strconv.ParseInt(n.Value, 10, 64)
	if err != nil {
		return Payment{}, fmt.Errorf("payments: item amount: %w", err)
	}
	return Payment{ID: s("id"), Amount: amount, Currency: s("currency"), Reference: s("reference"), CreatedAt: s("created_at")}, nil
}

// TableAPI is the part of the DynamoDB API [CreateTable] calls.
type TableAPI interface {
	CreateTable(ctx context.Context, in *dynamodb.CreateTableInput, optFns ...func(*dynamodb.Options)) (*dynamodb.CreateTableOutput, error)
}

// CreateTable creates a payments table (partition key "id", a string;
// on-demand billing) for tests and the dev server. Real tables belong in
// infrastructure code (see the cdk module).
func CreateTable(ctx context.Context, client TableAPI, table string) error {
	_, err := client.CreateTable(ctx, &dynamodb.CreateTableInput{
		TableName:            aws.String(table),
		AttributeDefinitions: []types.AttributeDefinition{{AttributeName: aws.String("id"), AttributeType: types.ScalarAttributeTypeS}},
		KeySchema:            []types.KeySchemaElement{{AttributeName: aws.String("id"), KeyType: types.KeyTypeHash}},
		BillingMode:          types.BillingModePayPerRequest,
	})
	if err != nil {
		return fmt.Errorf("payments: create table %s: %w", table, err)
	}
	return nil
}
