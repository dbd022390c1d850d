package ddbtest

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go"

	"github.com/lambdaidem/lambdaidem/dynamostore"
)

// TableAPI is the part of the DynamoDB API [CreateTable] calls, with the
// store's own [dynamostore.Client] (whose options give the key schema);
// *dynamodb.Client satisfies it.
type TableAPI interface {
	dynamostore.Client
	CreateTable(ctx context.Context, in *dynamodb.CreateTableInput, optFns ...func(*dynamodb.Options)) (*dynamodb.CreateTableOutput, error)
	DescribeTable(ctx context.Context, in *dynamodb.DescribeTableInput, optFns ...func(*dynamodb.Options)) (*dynamodb.DescribeTableOutput, error)
	UpdateTimeToLive(ctx context.Context, in *dynamodb.UpdateTimeToLiveInput, optFns ...func(*dynamodb.Options)) (*dynamodb.UpdateTimeToLiveOutput, error)
}

// CreateTable creates an idempotency table for tests, demos and LocalStack:
// on-demand billing (PAY_PER_REQUEST), the key schema the same options give
// [dynamostore.New] (KeyAttr, and SortKeyAttr if set, both strings), and TTL
// enabled on ExpirationAttr. It waits, polling DescribeTable, until the
// table is ACTIVE (or, on an emulator, reports no status) or ctx ends.
// Production tables belong in infrastructure code (see the cdk module).
//
// An endpoint that does not implement UpdateTimeToLive (the minidyn
// emulator answers it with a body that is not a DynamoDB error; others with
// UnknownOperationException) gets a table without TTL and no error: the
// store never relies on TTL deletion, it treats expired records as absent.
// A table that exists already is an error (ResourceInUseException).
func CreateTable(ctx context.Context, client TableAPI, table string, optFns ...func(*dynamostore.Options)) error {
	if client == nil || table == "" {
		return errors.New("ddbtest: CreateTable needs a client and a table name")
	}
	store, err := dynamostore.New(client, table, optFns...)
	if err != nil {
		return fmt.Errorf("ddbtest: CreateTable: %w", err)
	}
	o := store.Options()
	in := &dynamodb.CreateTableInput{
		TableName:   aws.String(table),
		BillingMode: types.BillingModePayPerRequest,
		AttributeDefinitions: []types.AttributeDefinition{
			{AttributeName: aws.String(o.KeyAttr), AttributeType: types.ScalarAttributeTypeS},
		},
		KeySchema: []types.KeySchemaElement{
			{AttributeName: aws.String(o.KeyAttr), KeyType: types.KeyTypeHash},
		},
	}
	if o.SortKeyAttr != "" {
		in.AttributeDefinitions = append(in.AttributeDefinitions, types.AttributeDefinition{AttributeName: aws.String(o.SortKeyAttr), AttributeType: types.ScalarAttributeTypeS})
		in.KeySchema = append(in.KeySchema, types.KeySchemaElement{AttributeName: aws.String(o.SortKeyAttr), KeyType: types.KeyTypeRange})
	}
	if _, err := client.CreateTable(ctx, in); err != nil {
		return fmt.Errorf("ddbtest: create table %s: %w", table, err)
	}
	if err := waitActive(ctx, client, table); err != nil {
		return err
	}
	_, err = client.UpdateTimeToLive(ctx, &dynamodb.UpdateTimeToLiveInput{
		TableName: aws.String(table),
		TimeToLiveSpecification: &types.TimeToLiveSpecification{
			AttributeName: aws.String(o.ExpirationAttr),
			Enabled:       aws.Bool(true),
		},
	})
	if err != nil && !unsupportedOperation(err) {
		return fmt.Errorf("ddbtest: enable TTL on %s.%s: %w", table, o.ExpirationAttr, err)
	}
	return nil
}

// waitActive polls DescribeTable until the table is ACTIVE (or reports no
// status, as the minidyn emulator does).
func waitActive(ctx context.Context, client TableAPI, table string) error {
	delay := 20 * time.Millisecond
	for {
		out, err := client.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(table)})
		if err != nil {
			return fmt.Errorf("ddbtest: describe table %s: %w", table, err)
		}
		// minidyn reports no status at all: its tables are ready at once.
		if out.Table != nil && (out.Table.TableStatus == types.TableStatusActive || out.Table.TableStatus == "") {
			return nil
		}
		t := time.NewTimer(delay)
		select {
		case <-ctx.Done():
			t.Stop()
			return fmt.Errorf("ddbtest: table %s is not active: %w", table, ctx.Err())
		case <-t.C:
		}
		delay = min(2*delay, time.Second)
	}
}

// unsupportedOperation reports whether err says the endpoint does not
// implement the operation: an UnknownOperationException, or a client error
// whose body is not in DynamoDB's protocol at all.
func unsupportedOperation(err error) bool {
	var api smithy.APIError
	if errors.As(err, &api) && api.ErrorCode() == "UnknownOperationException" {
		return true
	}
	var de *smithy.DeserializationError
	var status interface{ HTTPStatusCode() int }
	return errors.As(err, &de) && errors.As(err, &status) && status.HTTPStatusCode() >= 400 && status.HTTPStatusCode() < 500
}
