package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/aws/aws-lambda-go/events"

	"github.com/lambdaidem/lambdaidem/lambdaidem"
	"github.com/lambdaidem/lambdaidem/lambdaidem/apigw"
	"github.com/lambdaidem/lambdaidem/lambdaidem/memstore"
)

// TestKeyFindsTheRecordOfAnAPIGatewayRequest: the record key the command
// prints for a principal, a route and the Idempotency-Key a customer
// quotes is the key the API Gateway adapter wrote for that request.
func TestKeyFindsTheRecordOfAnAPIGatewayRequest(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("..", "..", "lambdaidem", "apigw", "testdata", "v2-http-jwt.json"))
	if err != nil {
		t.Fatal(err)
	}
	var ev events.APIGatewayV2HTTPRequest
	if err := json.Unmarshal(raw, &ev); err != nil {
		t.Fatal(err)
	}
	const clientKey = "3f6c1e0a-8d2b-4b7e-9f51-0c2a7d9e4b13"
	if ev.Headers == nil {
		ev.Headers = map[string]string{}
	}
	ev.Headers["idempotency-key"] = clientKey
	store := memstore.New()
	g, err := lambdaidem.New(store)
	if err != nil {
		t.Fatal(err)
	}
	a, err := apigw.New(g, "CreatePayment")
	if err != nil {
		t.Fatal(err)
	}
	h := a.WrapV2(func(context.Context, events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error) {
		return events.APIGatewayV2HTTPResponse{StatusCode: 201, Body: "{}"}, nil
	})
	if resp, err := h(context.Background(), ev); err != nil || resp.StatusCode != 201 {
		t.Fatalf("request = %d, %v", resp.StatusCode, err)
	}
	var written string
	for k := range store.Records() {
		written = k
	}
	claims := ev.RequestContext.Authorizer.JWT.Claims
	principal := "jwt:" + strconv.Quote(claims["iss"]) + "|" + claims["sub"] // as the key command's help spells it
	var out, errOut strings.Builder
	code := run(context.Background(), []string{"key", "--operation", "CreatePayment", "--principal", principal, "--route", ev.RouteKey, clientKey},
		streams{in: strings.NewReader(""), out: &out, err: &errOut}, system())
	if code != exitOK || out.String() != written+"\n" {
		t.Fatalf("key printed %q (exit %d, %s); the adapter wrote %q", out.String(), code, errOut.String(), written)
	}
}
