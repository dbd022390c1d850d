// Command relay is the outbox relay: a Lambda function on the outbox
// table's DynamoDB stream (event source mapping with
// ReportBatchItemFailures and an on-failure destination, as the CDK
// construct lambdaidemcdk.NewOutbox builds it) that publishes the messages
// each commit staged (the orders example's "order accepted" events) and
// marks them published. A message SQS refuses every time is set aside (see
// lambdaidem outbox list) and counted as the EMF metric OutboxSetAside
// under the Service "relay", which lambdaidemcdk's Outbox.AlarmOnSetAside
// watches. See package dynamostore/relay.
//
// Configuration, from the environment:
//
//	OUTBOX_TABLE               the outbox table (required)
//	OUTBOX_RETENTION           how long a published item is kept, a Go duration (default 24h)
//	AWS_ENDPOINT_URL_DYNAMODB, AWS_ENDPOINT_URL_SQS  other endpoints (LocalStack), read by the SDK
package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/lambdaidem/lambdaidem/dynamostore/relay"
	"github.com/lambdaidem/lambdaidem/lambdaidem/emf"
	"github.com/lambdaidem/lambdaidem/outboxaws"
)

func main() {
	logger := slog.New(slog.NewJSONHandler(os.Stdout, nil))
	handler, err := setup(context.Background(), os.Getenv, logger)
	if err != nil {
		fmt.Fprintln(os.Stderr, "relay: cannot start:", err)
		os.Exit(1)
	}
	lambda.Start(handler)
}

// setup builds the clients once, at start-up, and returns the handler.
func setup(ctx context.Context, getenv func(string) string, logger *slog.Logger) (func(context.Context, events.DynamoDBEvent) (events.DynamoDBEventResponse, error), error) {
	table := getenv("OUTBOX_TABLE")
	if table == "" {
		return nil, errors.New("OUTBOX_TABLE is not set (the outbox table's name)")
	}
	retention := 24 * time.Hour
	if s := getenv("OUTBOX_RETENTION"); s != "" {
		d, err := time.ParseDuration(s)
		if err != nil || d <= 0 {
			return nil, fmt.Errorf("OUTBOX_RETENTION %q: want a positive Go duration", s)
		}
		retention = d
	}
	awsCfg, err := config.LoadDefaultConfig(ctx)
	if err != nil {
		return nil, fmt.Errorf("AWS configuration: %w", err)
	}
	p, err := outboxaws.New(outboxaws.Options{SQS: sqs.NewFromConfig(awsCfg)})
	if err != nil {
		return nil, err
	}
	metrics, err := emf.New(os.Stdout, func(o *emf.Options) { o.Service = "relay" })
	if err != nil {
		return nil, err
	}
	r, err := relay.New(dynamodb.NewFromConfig(awsCfg), table, p, func(o *relay.Options) {
		o.Retention = retention
		o.Logger = logger
		o.Metrics = metrics
	})
	if err != nil {
		return nil, err
	}
	return r.Handler(), nil
}
