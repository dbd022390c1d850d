package apigw_test

import (
	"context"
	"net/http"
	"sync/atomic"
	"testing"

	"github.com/aws/aws-lambda-go/events"

	"github.com/lambdaidem/lambdaidem/lambdaidem/memstore"
)

// A REST API event may list one header under two spellings of its name in
// multiValueHeaders. Sent twice, the key is ambiguous and must be refused,
// not resolved by whichever spelling map iteration visits last.
func TestV1KeyHeaderUnderTwoSpellingsIsRefused(t *testing.T) {
	a := newAdapter(t, memstore.New(), nil)
	var runs atomic.Int32
	h := a.WrapV1(func(ctx context.Context, e events.APIGatewayProxyRequest) (events.APIGatewayProxyResponse, error) {
		runs.Add(1)
		return events.APIGatewayProxyResponse{StatusCode: http.StatusCreated}, nil
	})
	for range 20 {
		e := events.APIGatewayProxyRequest{
			Resource:   "/payments",
			Path:       "/payments",
			HTTPMethod: "POST",
			MultiValueHeaders: map[string][]string{
				"Idempotency-Key": {"k-a"},
				"idempotency-key": {"k-b"},
			},
			RequestContext: events.APIGatewayProxyRequestContext{Authorizer: map[string]any{"principalId": "user-1"}},
		}
		r, err := h(context.Background(), e)
		if err != nil {
			t.Fatal(err)
		}
		if r.StatusCode != http.StatusBadRequest {
			t.Fatalf("status %d, want 400 for a key sent twice", r.StatusCode)
		}
	}
	if n := runs.Load(); n != 0 {
		t.Fatalf("handler ran %d times", n)
	}
}
