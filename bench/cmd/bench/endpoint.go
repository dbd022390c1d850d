package main

import (
	"context"
	"errors"
	"net"
	"net/http"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/lambdaidem/lambdaidem/dynamostore"
	"github.com/lambdaidem/lambdaidem/internal/ddbtest"
)

// Table names on the benchmark endpoint.
const (
	lambdaidemTable = "lambdaidem"
	powertoolsTable = "powertools"
	businessTable   = "payments"
)

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
// schema both libraries share) and the business table (partition key "pk").
func (e *endpoint) createTables(ctx context.Context, c *dynamodb.Client) error {
	for _, t := range []string{lambdaidemTable, powertoolsTable} {
		if err := dynamostore.CreateTable(ctx, c, t); err != nil {
			return err
		}
	}
	_, err := c.CreateTable(ctx, &dynamodb.CreateTableInput{
		TableName:            aws.String(businessTable),
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
