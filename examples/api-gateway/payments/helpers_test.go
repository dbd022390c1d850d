package payments_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/lambdaidem/lambdaidem/ddbtest"
	"github.com/lambdaidem/lambdaidem/dynamostore"
	"github.com/lambdaidem/lambdaidem/examples/api-gateway/payments"
	"github.com/lambdaidem/lambdaidem/examples/httpevent"
	"github.com/lambdaidem/lambdaidem/lambdaidem"
)

// env is the payments API over dynamostore on the test DynamoDB endpoint
// (the in-process minidyn emulator behind ddbtest's fidelity proxy, or
// $AWS_ENDPOINT_URL_DYNAMODB).
type env struct {
	api              *payments.API
	client           *dynamodb.Client
	paymentsTable    string
	idempotencyTable string
	translator       *httpevent.Translator
	endpoint         *ddbtest.Endpoint
}

func setup(t *testing.T) *env {
	t.Helper()
	ctx := context.Background()
	ep := ddbtest.Start(t)
	client := ep.Client()
	e := &env{endpoint: ep, client: client, paymentsTable: ddbtest.TableName(t, "payments"), idempotencyTable: ddbtest.TableName(t, "idempotency")}
	if err := ddbtest.CreateTable(ctx, client, e.idempotencyTable); err != nil {
		t.Fatal(err)
	}
	if err := payments.CreateTable(ctx, client, e.paymentsTable); err != nil {
		t.Fatal(err)
	}
	store, err := dynamostore.New(client, e.idempotencyTable)
	if err != nil {
		t.Fatal(err)
	}
	guard, err := lambdaidem.New(store)
	if err != nil {
		t.Fatal(err)
	}
	if e.api, err = payments.New(guard, client, e.paymentsTable); err != nil {
		t.Fatal(err)
	}
	routes, err := httpevent.NewRoutes(payments.Routes()...)
	if err != nil {
		t.Fatal(err)
	}
	e.translator = &httpevent.Translator{Routes: routes, Claims: bearerSubject}
	return e
}

// bearerSubject plays a JWT authorizer: the bearer token is the subject.
func bearerSubject(r *http.Request) map[string]string {
	if tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer "); ok {
		return map[string]string{"sub": tok, "iss": "https://issuer.example"}
	}
	return nil
}

// do sends one request through the translator and the API. An empty
// principal sends no Authorization header.
func (e *env) do(t *testing.T, method, path, key, principal, body string) events.APIGatewayV2HTTPResponse {
	t.Helper()
	r := httptest.NewRequest(method, path, strings.NewReader(body))
	r.Header.Set("Content-Type", "application/json")
	if key != "" {
		r.Header.Set("Idempotency-Key", key)
	}
	if principal != "" {
		r.Header.Set("Authorization", "Bearer "+principal)
	}
	ev, err := e.translator.Event(r)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := e.api.Handle(context.Background(), ev)
	if err != nil {
		t.Fatalf("%s %s: handler error %v", method, path, err)
	}
	return resp
}

// count returns how many items a table holds.
func (e *env) count(t *testing.T, table string) int {
	t.Helper()
	out, err := e.client.Scan(context.Background(), &dynamodb.ScanInput{TableName: aws.String(table), Select: types.SelectCount})
	if err != nil {
		t.Fatal(err)
	}
	return int(out.Count)
}
