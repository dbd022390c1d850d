package apigw_test

import (
	"context"
	"fmt"

	"github.com/aws/aws-lambda-go/events"

	"github.com/lambdaidem/lambdaidem/lambdaidem"
	"github.com/lambdaidem/lambdaidem/lambdaidem/apigw"
	"github.com/lambdaidem/lambdaidem/lambdaidem/memstore"
)

func newGuardForExamples() *lambdaidem.Guard {
	g, err := lambdaidem.New(memstore.New()) // dynamostore.New(...) in a real function
	if err != nil {
		panic(err)
	}
	return g
}

func Example() {
	idem, err := apigw.New(newGuardForExamples(), "CreatePayment")
	if err != nil {
		fmt.Println(err)
		return
	}
	runs := 0
	handler := idem.WrapV2(func(ctx context.Context, e events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error) {
		runs++
		return events.APIGatewayV2HTTPResponse{
			StatusCode: 201,
			Headers:    map[string]string{"Content-Type": "application/json"},
			Body:       fmt.Sprintf(`{"id":"pay_%d"}`, runs),
		}, nil
	})
	// lambda.Start(handler) in a real function.

	req := events.APIGatewayV2HTTPRequest{
		RouteKey: "POST /payments",
		RawPath:  "/payments",
		Headers:  map[string]string{"idempotency-key": "9b2e6f1c", "content-type": "application/json"},
		Body:     `{"amount":1250,"currency":"EUR","reference":"inv-1001"}`,
		RequestContext: events.APIGatewayV2HTTPRequestContext{
			HTTP: events.APIGatewayV2HTTPRequestContextHTTPDescription{Method: "POST", Path: "/payments"},
		},
	}
	for range 2 {
		resp, _ := handler(context.Background(), req)
		fmt.Println(resp.StatusCode, resp.Body, "replayed:", resp.Headers["Idempotent-Replayed"] == "true")
	}

	req.Body = `{"amount":9999,"currency":"EUR","reference":"inv-1001"}` // same key, other payload
	resp, _ := handler(context.Background(), req)
	fmt.Println(resp.StatusCode, resp.Headers["Content-Type"])
	fmt.Println("handler runs:", runs)
	// Output:
	// 201 {"id":"pay_1"} replayed: false
	// 201 {"id":"pay_1"} replayed: true
	// 422 application/problem+json
	// handler runs: 1
}

func ExampleAdapter_WrapV1() {
	idem, _ := apigw.New(newGuardForExamples(), "CreatePayment")
	handler := idem.WrapV1(func(ctx context.Context, e events.APIGatewayProxyRequest) (events.APIGatewayProxyResponse, error) {
		return events.APIGatewayProxyResponse{StatusCode: 201, Body: `{"id":"pay_1"}`}, nil
	})
	resp, _ := handler(context.Background(), events.APIGatewayProxyRequest{HTTPMethod: "POST", Resource: "/payments", Path: "/payments"})
	fmt.Println(resp.StatusCode, resp.Headers["Content-Type"])
	fmt.Println(resp.Body)
	// Output:
	// 400 application/problem+json
	// {"type":"https://github.com/lambdaidem/lambdaidem/blob/main/lambdaidem/apigw/problems.md#missing-key","title":"Missing idempotency key","status":400,"detail":"POST requests must carry an idempotency key in the Idempotency-Key header"}
}

func ExampleDecidedStatus() {
	for _, status := range []int{201, 402, 409, 400, 404, 422, 429, 500} {
		fmt.Println(status, apigw.DecidedStatus(status))
	}
	// Output:
	// 201 true
	// 402 true
	// 409 true
	// 400 false
	// 404 false
	// 422 false
	// 429 false
	// 500 false
}
