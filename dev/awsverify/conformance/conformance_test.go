package conformance

import (
	"context"
	"os"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/lambdaidem/lambdaidem/ddbtest"
	"github.com/lambdaidem/lambdaidem/dynamostore"
	"github.com/lambdaidem/lambdaidem/lambdaidem/storetest"
)

// target returns a client and the two tables: those named by the
// environment (on $AWS_ENDPOINT_URL_DYNAMODB if set, else on AWS with the
// SDK's default configuration), or fresh ones on an in-process endpoint.
func target(t *testing.T) (client *dynamodb.Client, table, items string) {
	table, items = os.Getenv(EnvTable), os.Getenv(EnvItemsTable)
	if table == "" || items == "" {
		k := ddbtest.NewKit(t)
		return k.Client, k.Table, k.NewTable(t, "items", "id")
	}
	if url := os.Getenv(ddbtest.EnvEndpoint); url != "" {
		return ddbtest.NewClient(url), table, items
	}
	cfg, err := config.LoadDefaultConfig(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	return dynamodb.NewFromConfig(cfg), table, items
}

// TestConformance is the store contract against the DynamoDB store on the
// target's tables. Every case uses keys of its own, so the tables are
// shared by the cases and need not be empty.
func TestConformance(t *testing.T) {
	client, table, items := target(t)
	store, err := dynamostore.New(client, table)
	if err != nil {
		t.Fatal(err)
	}
	key := func(id string) map[string]types.AttributeValue {
		return map[string]types.AttributeValue{"id": &types.AttributeValueMemberS{Value: id}}
	}
	storetest.Run(t, func(t *testing.T) storetest.Harness {
		return storetest.Harness{
			Store: store,
			Effect: func(id string) any {
				return types.TransactWriteItem{Put: &types.Put{TableName: aws.String(items), Item: key(id), ConditionExpression: aws.String("attribute_not_exists(id)")}}
			},
			FailingEffect: func(id string) any {
				return types.TransactWriteItem{ConditionCheck: &types.ConditionCheck{TableName: aws.String(items), Key: key(id), ConditionExpression: aws.String("attribute_exists(id)")}}
			},
			Written: func(t testing.TB, id string) bool {
				out, err := client.GetItem(context.Background(), &dynamodb.GetItemInput{TableName: aws.String(items), Key: key(id), ConsistentRead: aws.Bool(true)})
				if err != nil {
					t.Fatalf("GetItem: %v", err)
				}
				return out.Item != nil
			},
		}
	})
}
