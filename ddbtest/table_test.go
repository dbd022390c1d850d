package ddbtest_test

import (
	"context"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/lambdaidem/lambdaidem/ddbtest"
	"github.com/lambdaidem/lambdaidem/dynamostore"
	"github.com/lambdaidem/lambdaidem/lambdaidem"
)

// TestCreateTable: on-demand billing, the key schema of the options, TTL
// on the expiration attribute.
func TestCreateTable(t *testing.T) {
	for _, c := range []struct {
		name string
		opt  func(*dynamostore.Options)
		keys []string
		ttl  string
	}{
		{"Defaults", func(*dynamostore.Options) {}, []string{"id"}, "expiration"},
		{"SortKey", func(o *dynamostore.Options) {
			o.KeyAttr = "pk"
			o.SortKeyAttr = "sk"
			o.SortKeyValue = "IDEMPOTENCY"
			o.ExpirationAttr = "ttl"
		}, []string{"pk", "sk"}, "ttl"},
	} {
		t.Run(c.name, func(t *testing.T) {
			ep := ddbtest.Start(t)
			client := ep.Client()
			table := ddbtest.TableName(t, "idem")
			ctx := context.Background()
			if err := ddbtest.CreateTable(ctx, client, table, c.opt); err != nil {
				t.Fatalf("CreateTable: %v", err)
			}
			out, err := client.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(table)})
			if err != nil {
				t.Fatal(err)
			}
			var keys []string
			for _, k := range out.Table.KeySchema {
				keys = append(keys, aws.ToString(k.AttributeName))
			}
			if len(keys) != len(c.keys) || keys[0] != c.keys[0] || (len(keys) == 2 && keys[1] != c.keys[1]) {
				t.Fatalf("key schema %v; want %v", keys, c.keys)
			}
			ttl, err := client.DescribeTimeToLive(ctx, &dynamodb.DescribeTimeToLiveInput{TableName: aws.String(table)})
			if err != nil {
				t.Fatal(err)
			}
			if d := ttl.TimeToLiveDescription; d.TimeToLiveStatus != types.TimeToLiveStatusEnabled && d.TimeToLiveStatus != types.TimeToLiveStatusEnabling || aws.ToString(d.AttributeName) != c.ttl {
				t.Fatalf("TTL %+v; want enabled on %s", d, c.ttl)
			}
			if err := ddbtest.CreateTable(ctx, client, table, c.opt); err == nil {
				t.Fatal("creating an existing table succeeded; want an error")
			}
		})
	}
}

// TestCreateTableWithoutTTLSupport: minidyn itself does not implement
// UpdateTimeToLive; CreateTable still creates a usable table.
func TestCreateTableWithoutTTLSupport(t *testing.T) {
	ep := ddbtest.Start(t, func(o *ddbtest.ProxyOptions) { o.Departures.NoTimeToLive = true })
	ep.RequireProxy(t)
	client := ep.Client()
	table := ddbtest.TableName(t, "idem")
	if err := ddbtest.CreateTable(context.Background(), client, table); err != nil {
		t.Fatalf("CreateTable: %v", err)
	}
	store, _ := dynamostore.New(client, table)
	now := time.Now()
	claim := lambdaidem.Claim{Key: "k", Token: "A", Fingerprint: "fp", Now: now, LeaseUntil: now.Add(time.Minute), ExpiresAt: now.Add(time.Hour)}
	if _, ok, err := store.Claim(context.Background(), claim); !ok || err != nil {
		t.Fatalf("Claim = %v, %v", ok, err)
	}
}
