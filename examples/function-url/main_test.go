package main

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-lambda-go/lambdaurl"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/lambdaidem/lambdaidem/ddbtest"
	"github.com/lambdaidem/lambdaidem/dynamostore"
	"github.com/lambdaidem/lambdaidem/examples/api-gateway/payments"
)

// env is the API over the test DynamoDB endpoint (the in-process emulator
// behind ddbtest's fidelity proxy, or $AWS_ENDPOINT_URL_DYNAMODB), with
// its payments table.
type env struct {
	kit           *ddbtest.Kit
	paymentsTable string
}

func newEnv(t *testing.T) *env {
	t.Helper()
	kit := ddbtest.NewKit(t)
	e := &env{kit: kit, paymentsTable: ddbtest.TableName(t, "payments")}
	if err := payments.CreateTable(context.Background(), kit.Client, e.paymentsTable); err != nil {
		t.Fatal(err)
	}
	return e
}

func (e *env) handler(t *testing.T, scope func(*http.Request) (string, error)) http.Handler {
	t.Helper()
	h, err := newHandler(e.kit.Client, dynamostore.Env{Table: e.kit.Table, RetryHorizon: dynamostore.DefaultEnvRetryHorizon}, e.paymentsTable, scope)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

func (e *env) payments(t *testing.T) int {
	t.Helper()
	out, err := e.kit.Client.Scan(context.Background(), &dynamodb.ScanInput{TableName: aws.String(e.paymentsTable), ConsistentRead: aws.Bool(true)})
	if err != nil {
		t.Fatal(err)
	}
	return len(out.Items)
}

const payment = `{"amount":1250,"currency":"EUR","reference":"inv-1001"}`

func post(t *testing.T, url, token, key, body string) (int, http.Header, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url+"/payments", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	if key != "" {
		req.Header.Set("Idempotency-Key", key)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, string(b)
}

// As a plain server: the payment and its idempotency record are written in
// one transaction on the first request; every retry replays the 201; the
// same key with another body is refused; an invalid payment is not stored,
// so the fixed request may reuse the key; callers are kept apart.
func TestServer(t *testing.T) {
	e := newEnv(t)
	keys, err := parseAPIKeys("s-alice=alice, s-bob=bob")
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(authenticate(keys, e.handler(t, callerScope)))
	defer srv.Close()

	status, header, first := post(t, srv.URL, "s-alice", "k-1", payment)
	if status != 201 || header.Get("Location") == "" || e.payments(t) != 1 {
		t.Fatalf("first: %d %v %s with %d payments", status, header, first, e.payments(t))
	}
	status, header, again := post(t, srv.URL, "s-alice", "k-1", payment)
	if status != 201 || again != first || header.Get("Idempotent-Replayed") != "true" || header.Get("Location") == "" || e.payments(t) != 1 {
		t.Fatalf("retry: %d %v %s with %d payments; want the first 201 replayed", status, header, again, e.payments(t))
	}
	if status, _, body := post(t, srv.URL, "s-alice", "k-1", `{"amount":9999,"currency":"EUR","reference":"inv-1001"}`); status != 422 || strings.Contains(body, "pay_") {
		t.Fatalf("other body: %d %s; want 422 revealing nothing", status, body)
	}
	if status, _, _ := post(t, srv.URL, "s-alice", "", payment); status != 400 {
		t.Fatalf("no key: %d, want 400", status)
	}
	if status, _, _ := post(t, srv.URL, "nobody", "k-1", payment); status != 401 {
		t.Fatalf("unknown token: %d, want 401", status)
	}
	if status, _, _ := post(t, srv.URL, "s-alice", "k-2", `{"amount":-1}`); status != 400 {
		t.Fatalf("invalid payment: %d, want 400", status)
	}
	if status, _, _ := post(t, srv.URL, "s-alice", "k-2", payment); status != 201 || e.payments(t) != 2 {
		t.Fatalf("fixed payment on the released key: %d with %d payments, want 201 and 2", status, e.payments(t))
	}
	if status, header, _ := post(t, srv.URL, "s-bob", "k-1", payment); status != 201 || header.Get("Idempotent-Replayed") != "" || e.payments(t) != 3 {
		t.Fatalf("bob's k-1: %d %v with %d payments; want a payment of his own", status, header, e.payments(t))
	}
	var p payments.Payment
	_ = json.Unmarshal([]byte(first), &p)
	resp, err := http.Get(srv.URL + "/payments/" + p.ID)
	if err != nil || resp.StatusCode != 401 {
		t.Fatalf("GET without a token: %v %v", resp, err)
	}
}

// Synchronized clients on one key through the real server on the DynamoDB
// test endpoint: exactly one payment.
func TestServerConcurrentRetries(t *testing.T) {
	e := newEnv(t)
	keys, _ := parseAPIKeys("s-alice=alice")
	srv := httptest.NewServer(authenticate(keys, e.handler(t, callerScope)))
	defer srv.Close()
	start := make(chan struct{})
	var wg sync.WaitGroup
	statuses := make([]int, 6)
	for i := range statuses {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			statuses[i], _, _ = post(t, srv.URL, "s-alice", "k-1", payment)
		}()
	}
	close(start)
	wg.Wait()
	for i, s := range statuses {
		if s != 201 && s != 409 {
			t.Errorf("client %d: %d, want 201 or 409", i, s)
		}
	}
	if n := e.payments(t); n != 1 {
		t.Fatalf("%d payments, want exactly 1", n)
	}
}

// On Lambda: lambdaurl.Wrap runs the router; the Function URL event's IAM
// caller scopes the keys with no option set.
func TestFunctionURL(t *testing.T) {
	e := newEnv(t)
	h := lambdaurl.Wrap(e.handler(t, nil))
	event := func(body string) *events.LambdaFunctionURLRequest {
		return &events.LambdaFunctionURLRequest{
			RawPath: "/payments",
			Headers: map[string]string{"idempotency-key": "k-1", "content-type": "application/json"},
			Body:    body,
			RequestContext: events.LambdaFunctionURLRequestContext{
				DomainName: "abc.lambda-url.eu-west-1.on.aws",
				HTTP:       events.LambdaFunctionURLRequestContextHTTPDescription{Method: "POST", Path: "/payments"},
				Authorizer: &events.LambdaFunctionURLRequestContextAuthorizerDescription{IAM: &events.LambdaFunctionURLRequestContextAuthorizerIAMDescription{UserARN: "arn:aws:iam::123456789012:user/alice"}},
			},
		}
	}
	invoke := func(body string) (int, map[string]string, string) {
		resp, err := h(context.Background(), event(body))
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, resp.Headers, string(b)
	}
	status, _, first := invoke(payment)
	if status != 201 {
		t.Fatalf("first: %d %s", status, first)
	}
	status, headers, again := invoke(payment)
	if status != 201 || again != first || headers["Idempotent-Replayed"] != "true" || e.payments(t) != 1 {
		t.Fatalf("retry: %d %v %s with %d payments", status, headers, again, e.payments(t))
	}
	if status, _, _ := invoke(`{"amount":1,"currency":"EUR","reference":"x"}`); status != 422 {
		t.Fatalf("other body: %d, want 422", status)
	}
}

func TestParseAPIKeys(t *testing.T) {
	if k, err := parseAPIKeys("a=alice,b=bob"); err != nil || k["a"] != "alice" || k["b"] != "bob" {
		t.Fatalf("%v %v", k, err)
	}
	for _, bad := range []string{"", " , ", "a", "=alice", "a="} {
		if _, err := parseAPIKeys(bad); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}
