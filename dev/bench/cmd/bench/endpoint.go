package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/lambdaidem/lambdaidem/ddbtest"
)

// Table names on the benchmark endpoint: the plain names serve the cold
// start; the round trips use shards of them (see shardTable).
const (
	lambdaidemTable = "lambdaidem"
	powertoolsTable = "powertools"
	businessTable   = "payments"
)

// shardSize is how many requests of each scenario share one shard of
// tables. minidyn v0.8.2 deep-copies every table a TransactWriteItems
// touches (its rollback snapshot), so a transaction's cost grows with the
// table's size, which DynamoDB's does not; small shards keep that artifact
// off the figures. Every scenario is sharded alike.
const shardSize = 10

// shardTable names shard n of a table.
func shardTable(table string, n int) string { return fmt.Sprintf("%s-%03d", table, n) }

// endpoint is the one DynamoDB endpoint every scenario talks to: the
// minidyn emulator behind the ddbtest proxy (DynamoDB fidelity on, call
// counts, added latency), served on a loopback port.
type endpoint struct {
	url   string
	proxy *ddbtest.Proxy
	srv   *http.Server
}

func startEndpoint() (*endpoint, error) {
	p := ddbtest.NewProxy(ddbtest.NewEmulator())
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	srv := &http.Server{Handler: p, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	return &endpoint{url: "http://" + ln.Addr().String(), proxy: p, srv: srv}, nil
}

func (e *endpoint) close() {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	_ = e.srv.Shutdown(ctx)
}

// client returns a Go SDK client for the endpoint, built from explicit
// options (ddbtest.NewClient: static fake credentials, the SDK's default
// of 3 attempts, a pool of idle connections).
func (e *endpoint) client() *dynamodb.Client { return ddbtest.NewClient(e.url) }

// createTables creates the idempotency tables (partition key "id", the
// schema both libraries share) and the business table (partition key "pk"),
// under their plain names and in shards 0 to shards-1.
func (e *endpoint) createTables(ctx context.Context, c *dynamodb.Client, shards int) error {
	for n := -1; n < shards; n++ {
		name := func(t string) string { return t }
		if n >= 0 {
			name = func(t string) string { return shardTable(t, n) }
		}
		for _, t := range []string{lambdaidemTable, powertoolsTable} {
			if err := ddbtest.CreateTable(ctx, c, name(t)); err != nil {
				return err
			}
		}
		if err := createBusinessTable(ctx, c, name(businessTable)); err != nil {
			return err
		}
	}
	return nil
}

// createShard creates shard n of the idempotency and business tables.
func (e *endpoint) createShard(ctx context.Context, c *dynamodb.Client, n int) error {
	for _, t := range []string{lambdaidemTable, powertoolsTable} {
		if err := ddbtest.CreateTable(ctx, c, shardTable(t, n)); err != nil {
			return err
		}
	}
	return createBusinessTable(ctx, c, shardTable(businessTable, n))
}

func createBusinessTable(ctx context.Context, c *dynamodb.Client, table string) error {
	_, err := c.CreateTable(ctx, &dynamodb.CreateTableInput{
		TableName:            aws.String(table),
		BillingMode:          types.BillingModePayPerRequest,
		AttributeDefinitions: []types.AttributeDefinition{{AttributeName: aws.String("pk"), AttributeType: types.ScalarAttributeTypeS}},
		KeySchema:            []types.KeySchemaElement{{AttributeName: aws.String("pk"), KeyType: types.KeyTypeHash}},
	})
	var inUse *types.ResourceInUseException
	if errors.As(err, &inUse) {
		return nil
	}
	return err
}
