// Command sqs is the bare counterpart of examples/sqs for the cold-start
// benchmark: the same event types, the same SDK clients built the same way
// (config.LoadDefaultConfig, as a Lambda function does), one PutItem per
// message, ReportBatchItemFailures, and no idempotency. Its bootstrap's
// size and Init Duration are the floor the example is measured against.
//
// Configuration, from the environment: ORDERS_TABLE (required).
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

type order struct {
	ID    string `json:"id"`
	Total int64  `json:"total"`
}

func main() {
	table := os.Getenv("ORDERS_TABLE")
	if table == "" {
		fmt.Fprintln(os.Stderr, "bare sqs: ORDERS_TABLE is not set")
		os.Exit(1)
	}
	cfg, err := config.LoadDefaultConfig(context.Background())
	if err != nil {
		fmt.Fprintln(os.Stderr, "bare sqs: AWS configuration:", err)
		os.Exit(1)
	}
	db := dynamodb.NewFromConfig(cfg)
	lambda.Start(func(ctx context.Context, e events.SQSEvent) (events.SQSEventResponse, error) {
		var resp events.SQSEventResponse
		for _, m := range e.Records {
			var o order
			err := json.Unmarshal([]byte(m.Body), &o)
			if err == nil {
				_, err = db.PutItem(ctx, &dynamodb.PutItemInput{
					TableName: aws.String(table),
					Item: map[string]types.AttributeValue{
						"id":    &types.AttributeValueMemberS{Value: o.ID},
						"total": &types.AttributeValueMemberN{Value: fmt.Sprint(o.Total)},
					},
				})
			}
			if err != nil {
				resp.BatchItemFailures = append(resp.BatchItemFailures, events.SQSBatchItemFailure{ItemIdentifier: m.MessageId})
			}
		}
		return resp, nil
	})
}
