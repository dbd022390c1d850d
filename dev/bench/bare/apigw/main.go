// Command apigw is the bare counterpart of examples/api-gateway for the
// cold-start benchmark: the same event types, the same SDK clients built
// the same way (config.LoadDefaultConfig, as a Lambda function does), one
// PutItem per POST and one GetItem per GET, and no idempotency. Its
// bootstrap's size and Init Duration are the floor the example is measured
// against.
//
// Configuration, from the environment: PAYMENTS_TABLE (required).
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

type payment struct {
	ID       string `json:"id"`
	Amount   int64  `json:"amount"`
	Currency string `json:"currency"`
}

type api struct {
	db    *dynamodb.Client
	table string
}

func main() {
	table := os.Getenv("PAYMENTS_TABLE")
	if table == "" {
		fmt.Fprintln(os.Stderr, "bare apigw: PAYMENTS_TABLE is not set")
		os.Exit(1)
	}
	cfg, err := config.LoadDefaultConfig(context.Background())
	if err != nil {
		fmt.Fprintln(os.Stderr, "bare apigw: AWS configuration:", err)
		os.Exit(1)
	}
	a := &api{db: dynamodb.NewFromConfig(cfg), table: table}
	lambda.Start(a.handle)
}

func (a *api) handle(ctx context.Context, e events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error) {
	switch e.RouteKey {
	case "POST /payments":
		var p payment
		if err := json.Unmarshal([]byte(e.Body), &p); err != nil || p.ID == "" {
			return respond(http.StatusBadRequest, map[string]string{"error": "invalid payment"}), nil
		}
		_, err := a.db.PutItem(ctx, &dynamodb.PutItemInput{
			TableName: aws.String(a.table),
			Item: map[string]types.AttributeValue{
				"id":       &types.AttributeValueMemberS{Value: p.ID},
				"amount":   &types.AttributeValueMemberN{Value: fmt.Sprint(p.Amount)},
				"currency": &types.AttributeValueMemberS{Value: p.Currency},
			},
		})
		if err != nil {
			return events.APIGatewayV2HTTPResponse{}, err
		}
		return respond(http.StatusCreated, p), nil
	case "GET /payments/{id}":
		out, err := a.db.GetItem(ctx, &dynamodb.GetItemInput{
			TableName: aws.String(a.table),
			Key:       map[string]types.AttributeValue{"id": &types.AttributeValueMemberS{Value: e.PathParameters["id"]}},
		})
		if err != nil {
			return events.APIGatewayV2HTTPResponse{}, err
		}
		if out.Item == nil {
			return respond(http.StatusNotFound, map[string]string{"error": "not found"}), nil
		}
		return respond(http.StatusOK, map[string]string{"id": e.PathParameters["id"]}), nil
	}
	return respond(http.StatusNotFound, map[string]string{"error": "no such route"}), nil
}

func respond(status int, v any) events.APIGatewayV2HTTPResponse {
	b, _ := json.Marshal(v)
	return events.APIGatewayV2HTTPResponse{StatusCode: status, Headers: map[string]string{"Content-Type": "application/json"}, Body: string(b)}
}
