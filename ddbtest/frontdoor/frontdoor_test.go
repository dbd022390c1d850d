package frontdoor

import (
	"context"
	"encoding/base64"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/lambdaidem/lambdaidem/ddbtest"
	"github.com/lambdaidem/lambdaidem/lambdaidem"
	"github.com/lambdaidem/lambdaidem/lambdaidem/apigw"
	"github.com/lambdaidem/lambdaidem/lambdaidem/httpidem"
)

func guard(t *testing.T) *lambdaidem.Guard {
	t.Helper()
	g, err := lambdaidem.New(ddbtest.NewKit(t).Store)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// TestLambdaURLReadsTheCallerFromTheEvent: httpidem without Options.Scope
// refuses a plain request (no identity it can read) but serves one sent
// through LambdaURL, scoping the key by the event's IAM caller.
func TestLambdaURLReadsTheCallerFromTheEvent(t *testing.T) {
	idem, err := httpidem.New(guard(t), "CreatePayment")
	if err != nil {
		t.Fatal(err)
	}
	var runs atomic.Int32
	h := idem(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		runs.Add(1)
		w.Header().Set("Set-Cookie", "session=1")
		w.WriteHeader(http.StatusCreated)
		_, _ = w.Write([]byte("paid"))
	}))

	plain := httptest.NewRequest("POST", "/payments", strings.NewReader(`{"a":1}`))
	plain.Header.Set("Idempotency-Key", "k")
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, plain)
	if rec.Code != http.StatusInternalServerError || runs.Load() != 0 {
		t.Fatalf("a plain request without Scope: %d, %d runs; want 500 unidentified-caller, no run", rec.Code, runs.Load())
	}

	ctx := context.Background()
	req := NewRequest("POST", "/payments?source=app", `{"a":1}`).WithKey("k")
	alice, bob := IAM("arn:aws:iam::123456789012:user/alice"), IAM("arn:aws:iam::123456789012:user/bob")
	for i, c := range []struct {
		caller   Caller
		replayed bool
		runs     int32
	}{{alice, false, 1}, {alice, true, 1}, {bob, false, 2}, {Anonymous(), false, 3}, {Anonymous(), true, 3}} {
		resp, err := LambdaURL(ctx, h, req.As(c.caller))
		if err != nil {
			t.Fatal(err)
		}
		if resp.Status != http.StatusCreated || resp.Body != "paid" || resp.Replayed() != c.replayed || runs.Load() != c.runs {
			t.Fatalf("request %d: %d %q replayed %v, %d runs; want 201 paid replayed %v, %d runs", i, resp.Status, resp.Body, resp.Replayed(), runs.Load(), c.replayed, c.runs)
		}
	}
}

// TestCallersScopeKeys: through each adapter door, two callers with the
// same key each run; the same caller again replays; an authorizer that
// names no caller is refused (500), never run.
func TestCallersScopeKeys(t *testing.T) {
	ctx := context.Background()
	a, err := apigw.New(guard(t), "Op")
	if err != nil {
		t.Fatal(err)
	}
	var runs atomic.Int32
	v1 := a.WrapV1(func(context.Context, events.APIGatewayProxyRequest) (events.APIGatewayProxyResponse, error) {
		runs.Add(1)
		return events.APIGatewayProxyResponse{StatusCode: 201, MultiValueHeaders: map[string][]string{"Vary": {"A", "B"}}}, nil
	})
	v2 := a.WrapV2(func(context.Context, events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error) {
		runs.Add(1)
		return events.APIGatewayV2HTTPResponse{StatusCode: 201, Body: base64.StdEncoding.EncodeToString([]byte("bin")), IsBase64Encoded: true}, nil
	})
	url := a.WrapURL(func(context.Context, events.LambdaFunctionURLRequest) (events.LambdaFunctionURLResponse, error) {
		runs.Add(1)
		return events.LambdaFunctionURLResponse{StatusCode: 201}, nil
	})
	send := map[string]func(Request) (Response, error){
		"REST":        func(r Request) (Response, error) { return REST(ctx, v1, r) },
		"HTTPAPI":     func(r Request) (Response, error) { return HTTPAPI(ctx, v2, r) },
		"FunctionURL": func(r Request) (Response, error) { return FunctionURL(ctx, url, r) },
	}
	callers := map[string][]Caller{
		"REST": {JWT("iss", "alice"), JWT("iss", "bob"), LambdaAuthorizer(map[string]any{"principalId": "p1"}),
			LambdaAuthorizer(map[string]any{"principalId": "p2"}), IAM("arn:aws:iam::1:user/a"), IAM("arn:aws:iam::1:user/b"), APIKey("k1"), APIKey("k2")},
		"HTTPAPI": {JWT("iss", "alice"), JWT("iss", "bob"), LambdaAuthorizer(map[string]any{"sub": "s1"}),
			LambdaAuthorizer(map[string]any{"sub": "s2"}), IAM("arn:aws:iam::1:user/a"), IAM("arn:aws:iam::1:user/b")},
		"FunctionURL": {IAM("arn:aws:iam::1:user/a"), IAM("arn:aws:iam::1:user/b"), Anonymous()},
	}
	for door, cs := range callers {
		t.Run(door, func(t *testing.T) {
			for i, c := range cs {
				req := NewRequest("POST", "/orders/o-1", `{"n":1}`).WithRoute("/orders/{id}", "id", "o-1").WithKey("same-key-" + door).As(c)
				before := runs.Load()
				first, err := send[door](req)
				if err != nil || first.Status != 201 || first.Replayed() || runs.Load() != before+1 {
					t.Fatalf("caller %d: %+v, %v, %d runs; want its own first run", i, first, err, runs.Load()-before)
				}
				again, err := send[door](req)
				if err != nil || again.Status != 201 || !again.Replayed() || runs.Load() != before+1 {
					t.Fatalf("caller %d again: %+v, %v; want a replay", i, again, err)
				}
				if door == "HTTPAPI" && first.Body != "bin" {
					t.Fatalf("base64 body read as %q", first.Body)
				}
				if door == "REST" && len(first.Header.Values("Vary")) != 2 {
					t.Fatalf("multi-value header read as %v", first.Header)
				}
			}
			if door == "FunctionURL" {
				return
			}
			before := runs.Load()
			resp, err := send[door](NewRequest("POST", "/x", "{}").WithKey("k").As(Claims(map[string]string{"iss": "iss", "scope": "read"})))
			if err != nil || resp.Status != 500 || runs.Load() != before {
				t.Fatalf("a token naming no caller: %+v %v; want 500, not run", resp, err)
			}
		})
	}
}

// TestDoorsRefuseCallersTheyDoNotHave: an API key on an HTTP API, an
// authorizer on a Function URL, a target that is not a path.
func TestDoorsRefuseCallersTheyDoNotHave(t *testing.T) {
	if _, err := NewRequest("POST", "/x", "").As(APIKey("k")).HTTPAPI(); err == nil {
		t.Error("an HTTP API event with an API key")
	}
	for _, c := range []Caller{JWT("i", "s"), LambdaAuthorizer(map[string]any{"sub": "s"}), APIKey("k")} {
		if _, err := NewRequest("POST", "/x", "").As(c).FunctionURL(); err == nil {
			t.Errorf("a Function URL event with %s", c.kind)
		}
	}
	for _, target := range []string{"", "x", "https://host/x", "%zz"} {
		if _, err := NewRequest("POST", target, "").REST(); err == nil {
			t.Errorf("target %q accepted", target)
		}
	}
	if _, err := (Request{Target: "/x"}).HTTPAPI(); err == nil {
		t.Error("a request without a method")
	}
}

// TestEventShapes: the fields the adapters read are where API Gateway and
// Lambda put them.
func TestEventShapes(t *testing.T) {
	req := NewRequest("PUT", "/a/b?x=1&x=2&y=3", `{}`).WithHeader("Cookie", "a=1; b=2").WithRoute("/a/{id}", "id", "b").WithKey("k")
	v1, _ := req.REST()
	if v1.Resource != "/a/{id}" || v1.RequestContext.ResourcePath != "/a/{id}" || v1.Path != "/a/b" || v1.QueryStringParameters["x"] != "2" ||
		len(v1.MultiValueQueryStringParameters["x"]) != 2 || v1.Headers["Idempotency-Key"] != "k" || v1.PathParameters["id"] != "b" {
		t.Errorf("REST event: %+v", v1)
	}
	v2, _ := req.HTTPAPI()
	if v2.RouteKey != "PUT /a/{id}" || v2.RawQueryString != "x=1&x=2&y=3" || v2.QueryStringParameters["x"] != "1,2" ||
		v2.Headers["idempotency-key"] != "k" || len(v2.Cookies) != 2 || v2.RequestContext.HTTP.Method != "PUT" {
		t.Errorf("HTTP API event: %+v", v2)
	}
	u, _ := req.FunctionURL()
	if u.RawPath != "/a/b" || u.RequestContext.DomainName == "" || u.RequestContext.Authorizer != nil || u.Headers["content-type"] != "application/json" {
		t.Errorf("Function URL event: %+v", u)
	}
	if d, _ := NewRequest("GET", "/", "").HTTPAPI(); d.RouteKey != "$default" {
		t.Errorf("route key without a route: %q", d.RouteKey)
	}
}

// TestBatchEvents: message ids, FIFO attributes, sequence numbers and
// event ids are stable and where the adapters read them.
func TestBatchEvents(t *testing.T) {
	q := SQSEvent("orders.fifo", Message{Body: "a", GroupID: "g", DeduplicationID: "d", Attributes: map[string]string{"k": "v"}}, Message{ID: "own", Body: "b", ReceiveCount: 3})
	m0, m1 := q.Records[0], q.Records[1]
	if m0.MessageId != "m-1" || m1.MessageId != "own" || m0.Attributes["MessageGroupId"] != "g" || m0.Attributes["MessageDeduplicationId"] != "d" ||
		*m0.MessageAttributes["k"].StringValue != "v" || m1.Attributes["ApproximateReceiveCount"] != "3" || !strings.HasSuffix(m0.EventSourceARN, ":orders.fifo") {
		t.Errorf("SQS event: %+v", q)
	}
	k := KinesisEvent("s", KinesisRecord{Data: []byte("x")}, KinesisRecord{Shard: "shardId-000000000001", Sequence: "9"})
	if k.Records[0].EventID != "shardId-000000000000:000000000000000000001" || k.Records[1].EventID != "shardId-000000000001:9" || k.Records[1].Kinesis.SequenceNumber != "9" {
		t.Errorf("Kinesis event: %+v", k)
	}
	d := DynamoDBEvent("t", Change{}, Change{EventName: "REMOVE"})
	if d.Records[0].EventName != "INSERT" || d.Records[1].Change.SequenceNumber != "000000000000000000200" || d.Records[0].EventID == d.Records[1].EventID {
		t.Errorf("DynamoDB event: %+v", d)
	}
}

// TestImage converts every attribute type.
func TestImage(t *testing.T) {
	img, err := Image(map[string]types.AttributeValue{
		"s": &types.AttributeValueMemberS{Value: "x"}, "n": &types.AttributeValueMemberN{Value: "1"},
		"b": &types.AttributeValueMemberB{Value: []byte{1}}, "t": &types.AttributeValueMemberBOOL{Value: true},
		"z": &types.AttributeValueMemberNULL{Value: true}, "ss": &types.AttributeValueMemberSS{Value: []string{"a"}},
		"ns": &types.AttributeValueMemberNS{Value: []string{"1"}}, "bs": &types.AttributeValueMemberBS{Value: [][]byte{{2}}},
		"l": &types.AttributeValueMemberL{Value: []types.AttributeValue{&types.AttributeValueMemberS{Value: "y"}}},
		"m": &types.AttributeValueMemberM{Value: map[string]types.AttributeValue{"k": &types.AttributeValueMemberN{Value: "2"}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if img["s"].String() != "x" || img["n"].Number() != "1" || img["b"].Binary()[0] != 1 || !img["t"].Boolean() || !img["z"].IsNull() ||
		img["ss"].StringSet()[0] != "a" || img["ns"].NumberSet()[0] != "1" || img["bs"].BinarySet()[0][0] != 2 ||
		img["l"].List()[0].String() != "y" || img["m"].Map()["k"].Number() != "2" {
		t.Errorf("image: %+v", img)
	}
	if _, err := Image(map[string]types.AttributeValue{"u": &types.UnknownUnionMember{Tag: "X"}}); err == nil {
		t.Error("an unknown attribute type converted")
	}
}
