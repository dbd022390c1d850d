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
// prints for a caller (a principal, or --anonymous for an event that shows
// no authorizer), a route and the Idempotency-Key a customer quotes is the
// key the API Gateway adapter wrote for that request.
func TestKeyFindsTheRecordOfAnAPIGatewayRequest(t *testing.T) {
	tests := []struct {
		event  string
		caller func(events.APIGatewayV2HTTPRequest) []string
	}{
		{"v2-http-jwt.json", func(ev events.APIGatewayV2HTTPRequest) []string {
			claims := ev.RequestContext.Authorizer.JWT.Claims
			return []string{"--principal", "jwt:" + strconv.Quote(claims["iss"]) + "|" + claims["sub"]} // as the key command's help spells it
		}},
		{"v2-http-anonymous.json", func(events.APIGatewayV2HTTPRequest) []string { return []string{"--anonymous"} }},
	}
	for _, tt := range tests {
		t.Run(tt.event, func(t *testing.T) {
			raw, err := os.ReadFile(filepath.Join("..", "..", "lambdaidem", "apigw", "testdata", tt.event))
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
			args := append(append([]string{"key", "--operation", "CreatePayment"}, tt.caller(ev)...), "--route", ev.RouteKey, clientKey)
			var out, errOut strings.Builder
			code := run(context.Background(), args, streams{in: strings.NewReader(""), out: &out, err: &errOut}, system())
			if code != exitOK || out.String() != written+"\n" {
				t.Fatalf("key %v printed %q (exit %d, %s); the adapter wrote %q", args[1:], out.String(), code, errOut.String(), written)
			}
		})
	}
}
