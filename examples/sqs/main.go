// Command sqs is the orders consumer: a Lambda function fed by an SQS queue
// through an event source mapping with ReportBatchItemFailures. Each
// message creates one order, once, however often it is delivered; see
// package orders.
//
// Configuration, from the environment:
//
//	IDEMPOTENCY_TABLE          the idempotency table (required)
//	ORDERS_TABLE               the orders table, partition key id (S) (required)
//	OUTBOX_TABLE, ORDER_ACCEPTED_QUEUE  the outbox table and the FIFO queue of "order accepted" events (both or neither)
//	IDEMPOTENCY_TTL            the retry horizon, a Go duration (default 24h)
//	IDEMPOTENCY_*_ATTR, IDEMPOTENCY_SORT_KEY_VALUE  the table's attribute names (see dynamostore.ReadEnv)
//	AWS_ENDPOINT_URL_DYNAMODB  another DynamoDB endpoint (LocalStack), read by the SDK
package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/lambdaidem/lambdaidem/dynamostore"
	"github.com/lambdaidem/lambdaidem/examples/sqs/orders"
	"github.com/lambdaidem/lambdaidem/lambdaidem"
	"github.com/lambdaidem/lambdaidem/lambdaidem/emf"
	"github.com/lambdaidem/lambdaidem/lambdaidem/sqsbatch"
)

// metricsService is the Service dimension of the function's CloudWatch
// metrics (package emf), which the CDK app's alarms watch.
const metricsService = "orders"

func main() {
	logger := slog.New(slog.NewJSONHandler(os.Stdout, nil))
	handler, err := setup(context.Background(), logger)
	if err != nil {
		fmt.Fprintln(os.Stderr, "orders: cannot start:", err)
		os.Exit(1)
	}
	lambda.Start(handler)
}

// setup builds the clients once, at start-up, and returns the handler.
func setup(ctx context.Context, logger *slog.Logger) (func(context.Context, events.SQSEvent) (events.SQSEventResponse, error), error) {
	cfg, err := loadConfig(os.Getenv)
	if err != nil {
		return nil, err
	}
	awsCfg, err := config.LoadDefaultConfig(ctx)
	if err != nil {
		return nil, fmt.Errorf("AWS configuration: %w", err)
	}
	store, err := dynamostore.New(dynamodb.NewFromConfig(awsCfg), cfg.Idempotency.Table, cfg.Idempotency.StoreOptions)
	if err != nil {
		return nil, err
	}
	metrics, err := emf.New(os.Stdout, func(o *emf.Options) { o.Service = metricsService })
	if err != nil {
		return nil, err
	}
	guard, err := lambdaidem.New(store, func(o *lambdaidem.Options) {
		o.RetryHorizon = cfg.Idempotency.RetryHorizon
		o.Logger = logger
		o.Hooks = metrics.Hooks() // CloudWatch metrics as EMF lines on stdout
	})
	if err != nil {
		return nil, err
	}
	return orders.NewBatchHandler(guard, orders.Handler{Table: cfg.OrdersTable, Accepted: cfg.AcceptedQueue}, func(o *sqsbatch.Options) {
		o.Logger = logger
	})
}
