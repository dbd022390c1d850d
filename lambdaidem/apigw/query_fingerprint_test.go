package apigw_test

import (
	"context"
	"net/http"
	"sync/atomic"
	"testing"

	"github.com/aws/aws-lambda-go/events"

	"github.com/lambdaidem/lambdaidem/lambdaidem/memstore"
)

// An HTTP API event that carries its query only in queryStringParameters
// (rawQueryString empty, as hand-built and some emulated events are) must
// not fingerprint as if it had no query.
func TestV2QueryInParsedParametersOnlyIsFingerprinted(t *testing.T) {
	a := newAdapter(t, memstore.New(), nil)
	var runs atomic.Int32
	h := a.WrapV2(func(ctx context.Context, e events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error) {
		runs.Add(1)
		return events.APIGatewayV2HTTPResponse{StatusCode: http.StatusCreated, Body: e.QueryStringParameters["amount"]}, nil
	})
	e1 := reviewV2Event(`{}`, false)
	e1.QueryStringParameters = map[string]string{"amount": "1"}
	e2 := reviewV2Event(`{}`, false)
	e2.QueryStringParameters = map[string]string{"amount": "1000"}
	if r, err := h(context.Background(), e1); err != nil || r.StatusCode != http.StatusCreated {
		t.Fatalf("first: %d %v", r.StatusCode, err)
	}
	r, err := h(context.Background(), e2)
	if err != nil {
		t.Fatal(err)
	}
	if r.StatusCode != http.StatusUnprocessableEntity {
		t.Fatalf("a different query with the same key got %d %q, want 422", r.StatusCode, r.Body)
	}
}
