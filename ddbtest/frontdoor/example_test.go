package frontdoor_test

import (
	"context"
	"fmt"
	"net/http"

	"github.com/aws/aws-lambda-go/events"

	"github.com/lambdaidem/lambdaidem/ddbtest"
	"github.com/lambdaidem/lambdaidem/ddbtest/frontdoor"
	"github.com/lambdaidem/lambdaidem/lambdaidem"
	"github.com/lambdaidem/lambdaidem/lambdaidem/apigw"
	"github.com/lambdaidem/lambdaidem/lambdaidem/httpidem"
	"github.com/lambdaidem/lambdaidem/lambdaidem/sqsbatch"
	"github.com/lambdaidem/lambdaidem/lambdaidem/streambatch"
)

// openGuard is a Guard over the test kit's store (ddbtest.NewKit(t) in a
// test) and what closes the kit.
func openGuard(ctx context.Context) (*lambdaidem.Guard, func()) {
	kit, err := ddbtest.OpenKit(ctx)
	if err != nil {
		panic(err)
	}
	guard, err := lambdaidem.New(kit.Store)
	if err != nil {
		panic(err)
	}
	return guard, kit.Close
}

// A Function URL service on net/http, tested as Lambda runs it: the
// request goes through lambdaurl to the mux, so the middleware reads the
// caller from the Function URL event. The test sets no Options.Scope (the
// real function must not: under lambdaurl the event names the caller).
func ExampleLambdaURL() {
	ctx := context.Background()
	guard, done := openGuard(ctx)
	defer done()
	idem, err := httpidem.New(guard, "CreatePayment") // as in the function: no Scope
	if err != nil {
		panic(err)
	}
	runs := 0
	mux := http.NewServeMux()
	mux.Handle("POST /payments", idem(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		runs++
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusCreated)
		fmt.Fprintf(w, `{"id":"pay_%d"}`, runs)
	})))

	alice := frontdoor.IAM("arn:aws:iam::123456789012:user/alice")
	req := frontdoor.NewRequest("POST", "/payments", `{"amount":1250}`).WithKey("9b2e6f1c")
	for _, r := range []frontdoor.Request{
		req.As(alice),
		req.As(alice), // the retry: replayed
		req.As(frontdoor.IAM("arn:aws:iam::123456789012:user/bob")), // another caller, the same key: its own
	} {
		resp, err := frontdoor.LambdaURL(ctx, mux, r)
		fmt.Println(resp.Status, resp.Body, "replayed:", resp.Replayed(), err)
	}
	// Output:
	// 201 {"id":"pay_1"} replayed: false <nil>
	// 201 {"id":"pay_1"} replayed: true <nil>
	// 201 {"id":"pay_2"} replayed: false <nil>
}

// A REST API (v1) handler behind apigw, with a Cognito user pool authorizer's
// caller and an API key caller.
func ExampleREST() {
	ctx := context.Background()
	guard, done := openGuard(ctx)
	defer done()
	a, err := apigw.New(guard, "CreateOrder")
	if err != nil {
		panic(err)
	}
	handler := a.WrapV1(func(ctx context.Context, e events.APIGatewayProxyRequest) (events.APIGatewayProxyResponse, error) {
		return events.APIGatewayProxyResponse{StatusCode: 201, Body: "order " + e.PathParameters["shop"]}, nil
	})
	req := frontdoor.NewRequest("POST", "/shops/s-1/orders", `{"sku":"A1"}`).
		WithRoute("/shops/{shop}/orders", "shop", "s-1").WithKey("k-1")
	for _, c := range []frontdoor.Caller{
		frontdoor.JWT("https://cognito-idp.us-east-1.amazonaws.com/pool", "alice"),
		frontdoor.JWT("https://cognito-idp.us-east-1.amazonaws.com/pool", "alice"),
		frontdoor.APIKey("key-7"),
	} {
		resp, err := frontdoor.REST(ctx, handler, req.As(c))
		fmt.Println(resp.Status, resp.Body, "replayed:", resp.Replayed(), err)
	}
	// Output:
	// 201 order s-1 replayed: false <nil>
	// 201 order s-1 replayed: true <nil>
	// 201 order s-1 replayed: false <nil>
}

// An HTTP API (v2) handler behind apigw with a Lambda authorizer; a
// duplicate with another body is refused (422) without the stored answer.
func ExampleHTTPAPI() {
	ctx := context.Background()
	guard, done := openGuard(ctx)
	defer done()
	a, _ := apigw.New(guard, "Transfer")
	handler := a.WrapV2(func(ctx context.Context, e events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error) {
		return events.APIGatewayV2HTTPResponse{StatusCode: 200, Body: "moved"}, nil
	})
	caller := frontdoor.LambdaAuthorizer(map[string]any{"sub": "acct-42"})
	req := frontdoor.NewRequest("POST", "/transfers", `{"amount":5}`).WithRoute("/transfers").WithKey("t-1").As(caller)
	other := req
	other.Body = `{"amount":500}`
	for _, r := range []frontdoor.Request{req, req, other} {
		resp, _ := frontdoor.HTTPAPI(ctx, handler, r)
		fmt.Println(resp.Status, resp.Header.Get("Content-Type"), "replayed:", resp.Replayed())
	}
	// Output:
	// 200  replayed: false
	// 200  replayed: true
	// 422 application/problem+json replayed: false
}

// A Function URL handler of events behind apigw (WrapURL).
func ExampleFunctionURL() {
	ctx := context.Background()
	guard, done := openGuard(ctx)
	defer done()
	a, _ := apigw.New(guard, "Refund")
	handler := a.WrapURL(func(ctx context.Context, e events.LambdaFunctionURLRequest) (events.LambdaFunctionURLResponse, error) {
		return events.LambdaFunctionURLResponse{StatusCode: 202, Body: "refund queued"}, nil
	})
	req := frontdoor.NewRequest("POST", "/refunds", `{"payment":"p-1"}`).WithKey("r-1")
	for range 2 {
		resp, err := frontdoor.FunctionURL(ctx, handler, req)
		fmt.Println(resp.Status, resp.Body, "replayed:", resp.Replayed(), err)
	}
	_, err := frontdoor.FunctionURL(ctx, handler, req.As(frontdoor.JWT("https://idp.example.com/", "alice")))
	fmt.Println(err)
	// Output:
	// 202 refund queued replayed: false <nil>
	// 202 refund queued replayed: true <nil>
	// frontdoor: a Function URL has no JWT authorizer (its AuthType is AWS_IAM or NONE): send it as IAM or Anonymous
}

// An SQS consumer: a redelivered batch replays what succeeded and runs
// again only what failed.
func ExampleSQS() {
	ctx := context.Background()
	guard, done := openGuard(ctx)
	defer done()
	a, _ := sqsbatch.New(guard, "ShipOrder", func(o *sqsbatch.Options) {
		o.Key = sqsbatch.KeyFromJSONField("order")
		o.Concurrency = 1 // sequential, for a stable output
	})
	down := true
	handler := a.Wrap(func(ctx context.Context, m events.SQSMessage) error {
		if m.MessageId == "m-2" && down {
			return fmt.Errorf("carrier down")
		}
		fmt.Println("shipping", m.Body)
		return nil
	})
	batch := []frontdoor.Message{{Body: `{"order":"o-1"}`}, {Body: `{"order":"o-2"}`}}
	failed, err := frontdoor.SQS(ctx, handler, "orders", batch...)
	fmt.Println("failed:", failed, err)
	down = false
	failed, err = frontdoor.SQS(ctx, handler, "orders", batch...) // the redelivery
	fmt.Println("failed:", failed, err)
	// Output:
	// shipping {"order":"o-1"}
	// failed: [m-2] <nil>
	// shipping {"order":"o-2"}
	// failed: [] <nil>
}

// Kinesis and DynamoDB Streams consumers: a failed record stops its shard
// and is reported by its sequence number.
func ExampleKinesis() {
	ctx := context.Background()
	guard, done := openGuard(ctx)
	defer done()
	a, _ := streambatch.New(guard, "RecordTransfer", func(o *streambatch.Options) {
		o.Key = streambatch.KeyFromDataField("transfer")
	})
	handler := a.Kinesis(func(ctx context.Context, r events.KinesisEventRecord) error {
		if string(r.Kinesis.Data) == `{"transfer":"t-2"}` {
			return fmt.Errorf("ledger unavailable")
		}
		fmt.Println("recording", string(r.Kinesis.Data))
		return nil
	})
	failed, err := frontdoor.Kinesis(ctx, handler, "transfers",
		frontdoor.KinesisRecord{PartitionKey: "a", Data: []byte(`{"transfer":"t-1"}`)},
		frontdoor.KinesisRecord{PartitionKey: "a", Data: []byte(`{"transfer":"t-2"}`)},
		frontdoor.KinesisRecord{PartitionKey: "a", Data: []byte(`{"transfer":"t-3"}`)},
	)
	fmt.Println("failed:", failed, err)

	ships, _ := streambatch.New(guard, "ShipOrder")
	ship := ships.DynamoDB(func(ctx context.Context, r events.DynamoDBEventRecord) error {
		fmt.Println("shipping", r.Change.NewImage["id"].String())
		return nil
	})
	order := frontdoor.Change{NewImage: map[string]events.DynamoDBAttributeValue{"id": events.NewStringAttribute("o-1")}}
	for range 2 { // the second batch is a redelivery: replayed, not run
		failed, err = frontdoor.DynamoDB(ctx, ship, "orders", order)
		fmt.Println("failed:", failed, err)
	}
	// Output:
	// recording {"transfer":"t-1"}
	// failed: [000000000000000000002] <nil>
	// shipping o-1
	// failed: [] <nil>
	// failed: [] <nil>
}
