package dynamostore_test

import (
	"context"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/lambdaidem/lambdaidem/ddbtest"
	"github.com/lambdaidem/lambdaidem/dynamostore"
)

// env is one test's world: an endpoint, a client, an idempotency table
// with its store, and a business table "orders" keyed by the string "pk".
type env struct {
	ep     *ddbtest.Endpoint
	client *dynamodb.Client
	store  *dynamostore.Store
	table  string
	orders string
}

func newEnv(t testing.TB, optFns ...func(*dynamostore.Options)) *env {
	t.Helper()
	ep := ddbtest.Start(t)
	e := &env{ep: ep, client: ep.Client(), table: ddbtest.TableName(t, "idem"), orders: ddbtest.TableName(t, "orders")}
	ctx := context.Background()
	if err := ddbtest.CreateTable(ctx, e.client, e.table, optFns...); err != nil {
		t.Fatalf("CreateTable: %v", err)
	}
	if err := ddbtest.CreateTable(ctx, e.client, e.orders, func(o *dynamostore.Options) { o.KeyAttr = "pk" }); err != nil {
		t.Fatalf("CreateTable orders: %v", err)
	}
	store, err := dynamostore.New(e.client, e.table, optFns...)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	e.store = store
	if p := ep.Proxy; p != nil {
		p.ResetCalls()
	}
	return e
}

// proxy returns the endpoint's proxy, skipping t on an external endpoint.
func (e *env) proxy(t testing.TB) *ddbtest.Proxy {
	t.Helper()
	return e.ep.RequireProxy(t)
}

// order is a business write creating the order id, only if it is new.
func (e *env) order(id string) types.TransactWriteItem {
	return types.TransactWriteItem{Put: &types.Put{
		TableName:           aws.String(e.orders),
		Item:                map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: id}},
		ConditionExpression: aws.String("attribute_not_exists(pk)"),
	}}
}

// missingOrder is a business condition that fails: order id must exist.
func (e *env) missingOrder(id string) types.TransactWriteItem {
	return types.TransactWriteItem{ConditionCheck: &types.ConditionCheck{
		TableName:           aws.String(e.orders),
		Key:                 map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: id}},
		ConditionExpression: aws.String("attribute_exists(pk)"),
	}}
}

// written reports whether the order id exists.
func (e *env) written(t testing.TB, id string) bool {
	t.Helper()
	return e.item(t, e.orders, map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: id}}) != nil
}

// orderCount is how many orders exist.
func (e *env) orderCount(t testing.TB) int {
	t.Helper()
	out, err := e.client.Scan(context.Background(), &dynamodb.ScanInput{TableName: aws.String(e.orders), ConsistentRead: aws.Bool(true)})
	if err != nil {
		t.Fatalf("Scan: %v", err)
	}
	return len(out.Items)
}

// record reads the raw record item for record key k.
func (e *env) record(t testing.TB, k string) map[string]types.AttributeValue {
	t.Helper()
	return e.item(t, e.table, map[string]types.AttributeValue{"id": &types.AttributeValueMemberS{Value: k}})
}

func (e *env) item(t testing.TB, table string, key map[string]types.AttributeValue) map[string]types.AttributeValue {
	t.Helper()
	out, err := e.client.GetItem(context.Background(), &dynamodb.GetItemInput{TableName: aws.String(table), Key: key, ConsistentRead: aws.Bool(true)})
	if err != nil {
		t.Fatalf("GetItem: %v", err)
	}
	return out.Item
}

func num(it map[string]types.AttributeValue, attr string) string {
	if v, ok := it[attr].(*types.AttributeValueMemberN); ok {
		return v.Value
	}
	return ""
}
