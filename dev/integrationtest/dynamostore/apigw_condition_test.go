package dynamostore_test

import (
	"context"
	"errors"
	"net/http"
	"testing"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/lambdaidem/lambdaidem/dynamostore"
	"github.com/lambdaidem/lambdaidem/lambdaidem/apigw"
)

// TestConditionFailureReachesTheHTTPAdapter: over DynamoDB, a staged
// ConditionCheck on an item that does not exist (the payment a refund
// needs) cancels the transaction; the adapter answers 409 condition-failed
// by default, or what its ConditionFailed hook makes of the typed error (a
// 404); nothing is stored, so the record is absent.
func TestConditionFailureReachesTheHTTPAdapter(t *testing.T) {
	e := newEnv(t)
	refund := func(ctx context.Context, _ events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error) {
		if err := dynamostore.Stage(ctx, *e.missingOrder("payment-404").ConditionCheck); err != nil {
			return events.APIGatewayV2HTTPResponse{}, err
		}
		return events.APIGatewayV2HTTPResponse{StatusCode: http.StatusCreated, Body: `{"refund":"r-1"}`}, nil
	}
	req := events.APIGatewayV2HTTPRequest{
		RouteKey: "POST /refunds", RawPath: "/refunds", Headers: map[string]string{"idempotency-key": "k-1"},
		RequestContext: events.APIGatewayV2HTTPRequestContext{HTTP: events.APIGatewayV2HTTPRequestContextHTTPDescription{Method: "POST", Path: "/refunds"}},
		Body:           `{"payment":"payment-404"}`,
	}
	cases := []struct {
		name   string
		hook   func(context.Context, *apigw.Request, error) *apigw.Problem
		status int
	}{
		{"default", nil, http.StatusConflict},
		{"mapped", func(_ context.Context, _ *apigw.Request, err error) *apigw.Problem {
			var cfe *dynamostore.ConditionFailedError
			if errors.As(err, &cfe) && cfe.Action == "ConditionCheck" && cfe.Table == e.orders {
				return &apigw.Problem{Type: "https://api.example.com/problems/payment-not-found", Title: "Payment not found", Status: http.StatusNotFound}
			}
			return nil
		}, http.StatusNotFound},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			a, err := apigw.New(e.guard(t, nil), "CreateRefund", func(o *apigw.Options) { o.ConditionFailed = c.hook })
			if err != nil {
				t.Fatal(err)
			}
			resp, err := a.WrapV2(refund)(context.Background(), req)
			if err != nil || resp.StatusCode != c.status {
				t.Fatalf("response %d %s, %v; want %d", resp.StatusCode, resp.Body, err, c.status)
			}
			out, err := e.client.Scan(context.Background(), &dynamodb.ScanInput{TableName: aws.String(e.table), ConsistentRead: aws.Bool(true)})
			if err != nil || len(out.Items) != 0 {
				t.Fatalf("records after a refused commit: %v, %v; want none", out, err)
			}
		})
	}
}
