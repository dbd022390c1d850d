package dynamostore_test

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/lambdaidem/lambdaidem/ddbtest"
	"github.com/lambdaidem/lambdaidem/dynamostore"
	"github.com/lambdaidem/lambdaidem/lambdaidem"
	"github.com/lambdaidem/lambdaidem/lambdaidem/apigw"
)

// Secrets a request and its response carry; none may reach the table.
const (
	secretKey    = "idem-key-6f1c2a77-raw"
	secretAuth   = "Bearer eyJhbGciOi.secret-authorization"
	secretCookie = "session=secret-cookie-value"
	secretToken  = "x-secret-token-value"
	secretBody   = "card=4111111111111111"
)

// postV2 is an HTTP API POST /payments by principal sub with key and body.
func postV2(sub, key, body string) events.APIGatewayV2HTTPRequest {
	e := events.APIGatewayV2HTTPRequest{
		RouteKey: "POST /payments", RawPath: "/payments", Body: body,
		Headers: map[string]string{"idempotency-key": key, "authorization": secretAuth, "content-type": "text/plain"},
	}
	e.RequestContext.HTTP.Method = "POST"
	e.RequestContext.Authorizer = &events.APIGatewayV2HTTPRequestContextAuthorizerDescription{
		JWT: &events.APIGatewayV2HTTPRequestContextAuthorizerJWTDescription{Claims: map[string]string{"iss": "https://issuer", "sub": sub}},
	}
	return e
}

// scanAll returns every item of table as its DynamoDB JSON text.
func scanAll(t *testing.T, c *dynamodb.Client, table string) []string {
	t.Helper()
	out, err := c.Scan(context.Background(), &dynamodb.ScanInput{TableName: aws.String(table), ConsistentRead: aws.Bool(true)})
	if err != nil {
		t.Fatal(err)
	}
	var items []string
	for _, it := range out.Items {
		items = append(items, dump(it))
	}
	return items
}

func dump(it map[string]types.AttributeValue) string {
	var b strings.Builder
	for name, v := range it {
		b.WriteString(name + "=")
		switch v := v.(type) {
		case *types.AttributeValueMemberS:
			b.WriteString(v.Value)
		case *types.AttributeValueMemberN:
			b.WriteString(v.Value)
		case *types.AttributeValueMemberB:
			b.Write(v.Value)
		default:
			j, _ := json.Marshal(v)
			b.Write(j)
		}
		b.WriteString("\n")
	}
	return b.String()
}

// TestTableHoldsNoSecrets runs requests through the apigw adapter and the
// DynamoDB store, then scans the table: the raw idempotency key, the
// Authorization header, Set-Cookie and credential-like response headers,
// and the request body are nowhere in it; the record key is a hash.
func TestTableHoldsNoSecrets(t *testing.T) {
	e := newEnv(t)
	g, err := lambdaidem.New(e.store)
	if err != nil {
		t.Fatal(err)
	}
	a, err := apigw.New(g, "CreatePayment")
	if err != nil {
		t.Fatal(err)
	}
	h := a.WrapV2(func(ctx context.Context, _ events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error) {
		return events.APIGatewayV2HTTPResponse{
			StatusCode: 201,
			Headers:    map[string]string{"Set-Cookie": secretCookie, "X-Auth-Token": secretToken, "Authorization": secretAuth, "Content-Type": "application/json"},
			Cookies:    []string{secretCookie},
			Body:       `{"status":"captured"}`,
		}, nil
	})
	ctx := context.Background()
	for i := 0; i < 2; i++ { // the first runs, the second replays
		resp, err := h(ctx, postV2("alice", secretKey, secretBody))
		if err != nil || resp.StatusCode != 201 {
			t.Fatalf("request %d: %d %v", i, resp.StatusCode, err)
		}
	}
	items := scanAll(t, e.client, e.table)
	if len(items) != 1 {
		t.Fatalf("want one record, got %d", len(items))
	}
	for _, secret := range []string{secretKey, secretAuth, "eyJhbGciOi", secretCookie, "secret-cookie-value", secretToken, secretBody, "4111111111111111"} {
		if strings.Contains(items[0], secret) {
			t.Errorf("the table holds %q:\n%s", secret, items[0])
		}
	}
	if !strings.Contains(items[0], "captured") {
		t.Errorf("the stored outcome is missing:\n%s", items[0])
	}
}

// TestPrincipalsNeverMeet: two principals send the same key and the same
// body through apigw over DynamoDB. The second sees exactly what a fresh
// key would give it (a run of its own, no replay marker, no 409 or 422
// while the first is in progress or after it completed): it cannot learn
// that the key exists for someone else, nor see the other's result.
func TestPrincipalsNeverMeet(t *testing.T) {
	e := newEnv(t)
	g, err := lambdaidem.New(e.store)
	if err != nil {
		t.Fatal(err)
	}
	a, err := apigw.New(g, "CreatePayment")
	if err != nil {
		t.Fatal(err)
	}
	release := make(chan struct{})
	started := make(chan struct{})
	h := a.WrapV2(func(ctx context.Context, ev events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error) {
		sub := ev.RequestContext.Authorizer.JWT.Claims["sub"]
		if sub == "alice" {
			close(started)
			<-release
		}
		return events.APIGatewayV2HTTPResponse{StatusCode: 201, Body: `{"owner":"` + sub + `"}`}, nil
	})
	ctx := context.Background()
	fresh, err := h(ctx, postV2("carol", "other-key", "pay 10"))
	if err != nil {
		t.Fatal(err)
	}
	type result struct {
		resp events.APIGatewayV2HTTPResponse
		err  error
	}
	aliceDone := make(chan result, 1)
	go func() {
		resp, err := h(ctx, postV2("alice", "shared-key", "pay 10"))
		aliceDone <- result{resp, err}
	}()
	<-started
	// Alice's request is in progress: Bob's must not be told so.
	bobDuring, err := h(ctx, postV2("bob", "shared-key", "pay 10"))
	if err != nil {
		t.Fatal(err)
	}
	close(release)
	alice := <-aliceDone
	if alice.err != nil || alice.resp.StatusCode != 201 {
		t.Fatalf("alice: %d %v", alice.resp.StatusCode, alice.err)
	}
	// Alice's request is complete: Mallory, with another body, must get
	// what a fresh key gives, not 422.
	malloryAfter, err := h(ctx, postV2("mallory", "shared-key", "pay 1000"))
	if err != nil {
		t.Fatal(err)
	}
	for name, resp := range map[string]events.APIGatewayV2HTTPResponse{"bob during": bobDuring, "mallory after": malloryAfter} {
		owner := strings.Fields(name)[0]
		if resp.StatusCode != fresh.StatusCode || resp.Body != `{"owner":"`+owner+`"}` {
			t.Errorf("%s: got %d %s, want a fresh run of its own like %d %s", name, resp.StatusCode, resp.Body, fresh.StatusCode, fresh.Body)
		}
		if len(resp.Headers) != len(fresh.Headers) || resp.Headers["Idempotent-Replayed"] != "" {
			t.Errorf("%s: headers %v differ in shape from a fresh key's %v", name, resp.Headers, fresh.Headers)
		}
	}
}

// TestFailsClosedWhenTableUnreachable points the store at a closed port on
// loopback: with default options nothing runs, Do reports
// ErrStoreUnavailable, and the apigw adapter answers 503 with Retry-After.
func TestFailsClosedWhenTableUnreachable(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	url := "http://" + l.Addr().String()
	l.Close() // nothing listens there any more
	client := ddbtest.NewClient(url, func(o *ddbtest.ClientOptions) {
		o.MaxAttempts = 2
		o.HTTPClient = &http.Client{Timeout: 2 * time.Second}
	})
	store, err := dynamostore.New(client, "idempotency")
	if err != nil {
		t.Fatal(err)
	}
	g, err := lambdaidem.New(store)
	if err != nil {
		t.Fatal(err)
	}
	ran := 0
	ctx := context.Background()
	_, err = lambdaidem.Do(ctx, g, lambdaidem.Call[string]{Operation: "Op", Key: "k"}, func(context.Context) (string, error) {
		ran++
		return "done", nil
	})
	if !errors.Is(err, lambdaidem.ErrStoreUnavailable) {
		t.Errorf("Do: got %v, want ErrStoreUnavailable", err)
	}
	a, err := apigw.New(g, "CreatePayment")
	if err != nil {
		t.Fatal(err)
	}
	resp, err := a.WrapV2(func(context.Context, events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error) {
		ran++
		return events.APIGatewayV2HTTPResponse{StatusCode: 201}, nil
	})(ctx, postV2("alice", "k", "pay"))
	if err != nil || resp.StatusCode != 503 || resp.Headers["Retry-After"] == "" || resp.Headers["Content-Type"] != "application/problem+json" {
		t.Errorf("apigw: got %d %v %v, want 503 problem+json with Retry-After", resp.StatusCode, resp.Headers, err)
	}
	if ran != 0 {
		t.Errorf("the handler ran %d times with the store unreachable; fail closed runs nothing", ran)
	}
}

// TestOutcomeSizeCap: an outcome above Options.MaxOutcomeSize is never
// written: the request fails with ErrOutcomeTooLarge, the claim is
// released (the table is empty) and the staged business write is not
// committed either.
func TestOutcomeSizeCap(t *testing.T) {
	e := newEnv(t)
	g, err := lambdaidem.New(e.store, func(o *lambdaidem.Options) { o.MaxOutcomeSize = 1000 })
	if err != nil {
		t.Fatal(err)
	}
	_, err = lambdaidem.Do(context.Background(), g, lambdaidem.Call[string]{Operation: "Op", Key: "k"}, func(ctx context.Context) (string, error) {
		if err := dynamostore.Stage(ctx, *e.order("o1").Put); err != nil {
			return "", err
		}
		return incompressible(2000), nil
	})
	if !errors.Is(err, lambdaidem.ErrOutcomeTooLarge) {
		t.Fatalf("got %v, want ErrOutcomeTooLarge", err)
	}
	if items := scanAll(t, e.client, e.table); len(items) != 0 {
		t.Errorf("the idempotency table holds %d items, want none (claim released)", len(items))
	}
	if e.written(t, "o1") {
		t.Error("the staged business write was committed with no record")
	}
}
