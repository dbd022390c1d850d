package ddbtest_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// fidelityProbes are the probes of the departures of issue 31 item 3 (see
// TestBackendDepartures): each sends what DynamoDB refuses or answers
// otherwise, and reports whether the backend departs.
var fidelityProbes = map[string]probe{
	"NoItemSizeLimit": func(t *testing.T, c *dynamodb.Client, table string) bool {
		_, err := c.PutItem(context.Background(), &dynamodb.PutItemInput{TableName: aws.String(table), Item: sized("big", 410*kb)})
		return err == nil
	},
	"NoTransactionLimits": func(t *testing.T, c *dynamodb.Client, table string) bool {
		var items []types.TransactWriteItem
		for i := range 101 {
			items = append(items, types.TransactWriteItem{Put: &types.Put{TableName: aws.String(table), Item: item(fmt.Sprint(i), "v")}})
		}
		_, err := c.TransactWriteItems(context.Background(), &dynamodb.TransactWriteItemsInput{TransactItems: items})
		return err == nil
	},
	"LaxPlaceholders": func(t *testing.T, c *dynamodb.Client, table string) bool {
		_, err := c.UpdateItem(context.Background(), &dynamodb.UpdateItemInput{TableName: aws.String(table), Key: key("a"),
			UpdateExpression: aws.String("SET w = :undefined")})
		return err == nil
	},
	"NumbersAsSent": func(t *testing.T, c *dynamodb.Client, table string) bool {
		put(t, c, table, map[string]types.AttributeValue{"pk": s("n"), "v": &types.AttributeValueMemberN{Value: "00042"}})
		return value(get(t, c, table, "n"), "v") != "42"
	},
	"InvalidValuesAccepted": func(t *testing.T, c *dynamodb.Client, table string) bool {
		_, err := c.PutItem(context.Background(), &dynamodb.PutItemInput{TableName: aws.String(table),
			Item: map[string]types.AttributeValue{"pk": s("e"), "s": &types.AttributeValueMemberSS{Value: []string{}}}})
		return err == nil
	},
	"NoPageLimit": func(t *testing.T, c *dynamodb.Client, table string) bool {
		for i := range 12 {
			put(t, c, table, sized(fmt.Sprintf("p%02d", i), 100*kb))
		}
		out, err := c.Scan(context.Background(), &dynamodb.ScanInput{TableName: aws.String(table), ProjectionExpression: aws.String("pk")})
		if err != nil {
			t.Fatal(err)
		}
		return out.LastEvaluatedKey == nil
	},
	"NoScanCounts": func(t *testing.T, c *dynamodb.Client, table string) bool {
		put(t, c, table, item("a", "1"))
		out, err := c.Scan(context.Background(), &dynamodb.ScanInput{TableName: aws.String(table), Select: types.SelectCount})
		if err != nil {
			t.Fatal(err)
		}
		return out.ScannedCount != 1 || out.Items != nil
	},
	"FirstCancellationOnly": func(t *testing.T, c *dynamodb.Client, table string) bool {
		missing := func(k string) types.TransactWriteItem {
			return types.TransactWriteItem{ConditionCheck: &types.ConditionCheck{TableName: aws.String(table), Key: key(k),
				ConditionExpression: aws.String("attribute_exists(pk)")}}
		}
		_, err := c.TransactWriteItems(context.Background(), &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{missing("m1"), missing("m2")}})
		var tce *types.TransactionCanceledException
		if !errors.As(err, &tce) || len(tce.CancellationReasons) != 2 {
			t.Fatalf("two failing conditions = %v; want a cancellation with two reasons", err)
		}
		return aws.ToString(tce.CancellationReasons[1].Code) != "ConditionalCheckFailed"
	},
	"NoListTables": func(t *testing.T, c *dynamodb.Client, table string) bool {
		out, err := c.ListTables(context.Background(), &dynamodb.ListTablesInput{})
		return err != nil || !strings.Contains(strings.Join(out.TableNames, " "), table)
	},
}

// probeOf returns the probe of the Departures field name.
func probeOf(name string) (probe, bool) {
	if p, ok := probes[name]; ok {
		return p, true
	}
	p, ok := fidelityProbes[name]
	return p, ok
}
