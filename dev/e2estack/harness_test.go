package e2estack

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/lambdaidem/lambdaidem/ddbtest/rie"
)

func TestBatchFailuresFollowsTheEventSourceMappingRules(t *testing.T) {
	handles := map[string]string{"a": "ha", "b": "hb"}
	ok := func(payload string) Batch {
		return Batch{Invocation: rie.Invocation{Status: 200, Payload: []byte(payload)}}
	}
	cases := []struct {
		name   string
		batch  Batch
		failed []string
		whole  bool
	}{
		{"all succeeded", ok(`{"batchItemFailures":[]}`), nil, false},
		{"null response", ok(`null`), nil, false},
		{"one failure", ok(`{"batchItemFailures":[{"itemIdentifier":"b"}]}`), []string{"b"}, false},
		{"unknown id fails the batch", ok(`{"batchItemFailures":[{"itemIdentifier":"zz"}]}`), nil, true},
		{"empty id fails the batch", ok(`{"batchItemFailures":[{"itemIdentifier":""}]}`), nil, true},
		{"malformed response fails the batch", ok(`[1,2]`), nil, true},
		{"function error fails the batch", Batch{Invocation: rie.Invocation{Status: 200, FunctionError: "Runtime.ExitError"}}, nil, true},
		{"invoke error fails the batch", Batch{InvokeErr: io.ErrUnexpectedEOF}, nil, true},
	}
	for _, c := range cases {
		failed, whole := batchFailures(c.batch, handles)
		if whole != c.whole || len(failed) != len(c.failed) {
			t.Errorf("%s: got failed=%v whole=%v, want %v %v", c.name, failed, whole, c.failed, c.whole)
			continue
		}
		for _, id := range c.failed {
			if !failed[id] {
				t.Errorf("%s: %s not reported failed", c.name, id)
			}
		}
	}
}

// invokerFunc adapts a function to rie.Invoker.
type invokerFunc func(context.Context, []byte) (rie.Invocation, error)

func (f invokerFunc) Invoke(ctx context.Context, p []byte) (rie.Invocation, error) { return f(ctx, p) }

// TestPollerOnGoaws runs the event source mapping against the in-process
// SQS endpoint with a stand-in function: successes are deleted, reported
// failures come back after the visibility timeout with a growing receive
// count, and a message that always fails reaches the dead-letter queue
// after exactly maxReceiveCount receives, as on SQS.
func TestPollerOnGoaws(t *testing.T) {
	if testing.Short() {
		t.Skip("waits for visibility timeouts")
	}
	ctx := t.Context()
	q, err := StartSQS(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer q.Close()
	dlq, err := q.CreateQueue(ctx, QueueSpec{Name: "poller-dlq", VisibilityTimeout: 30 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	src, err := q.CreateQueue(ctx, QueueSpec{Name: "poller-src", VisibilityTimeout: time.Second, DeadLetter: "poller-dlq", MaxReceiveCount: 3})
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	counts := map[string][]string{} // body → ApproximateReceiveCount seen
	fn := invokerFunc(func(_ context.Context, payload []byte) (rie.Invocation, error) {
		var ev events.SQSEvent
		if err := json.Unmarshal(payload, &ev); err != nil {
			return rie.Invocation{}, err
		}
		var resp events.SQSEventResponse
		mu.Lock()
		for _, r := range ev.Records {
			counts[r.Body] = append(counts[r.Body], r.Attributes["ApproximateReceiveCount"])
			if r.Body == "poison" {
				resp.BatchItemFailures = append(resp.BatchItemFailures, events.SQSBatchItemFailure{ItemIdentifier: r.MessageId})
			}
		}
		mu.Unlock()
		b, _ := json.Marshal(resp)
		return rie.Invocation{Status: 200, Payload: b}, nil
	})
	p, err := NewPoller(PollerOptions{Client: q.Client, QueueURL: src, Function: fn})
	if err != nil {
		t.Fatal(err)
	}
	stop := p.Start(ctx)
	defer stop()
	for _, body := range []string{"good", "poison"} {
		if _, err := q.Client.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: aws.String(src), MessageBody: aws.String(body)}); err != nil {
			t.Fatal(err)
		}
	}
	var inDLQ bool
	for deadline := time.Now().Add(15 * time.Second); !inDLQ && time.Now().Before(deadline); {
		out, err := q.Client.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: aws.String(dlq), WaitTimeSeconds: 1})
		if err != nil {
			t.Fatal(err)
		}
		inDLQ = len(out.Messages) == 1 && aws.ToString(out.Messages[0].Body) == "poison"
	}
	if !inDLQ {
		t.Fatal("the poison message never reached the dead-letter queue")
	}
	mu.Lock()
	defer mu.Unlock()
	if got := strings.Join(counts["poison"], ","); got != "1,2,3" {
		t.Errorf("poison receive counts: %s, want 1,2,3", got)
	}
	if got := strings.Join(counts["good"], ","); got != "1" {
		t.Errorf("good receive counts: %s, want 1 (deleted after success)", got)
	}
}

func TestLambdaInvokerSpeaksTheInvokeAPI(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.Method == http.MethodGet && r.URL.Path == "/2015-03-31/functions/":
			if r.URL.Query().Get("Marker") == "" {
				_, _ = io.WriteString(w, `{"Functions":[{"FunctionName":"lambdaidem-payments-PaymentsFunctionAB-1"}],"NextMarker":"m"}`)
				return
			}
			_, _ = io.WriteString(w, `{"Functions":[{"FunctionName":"lambdaidem-orders-OrdersFunctionCD-2"}]}`)
		case r.URL.Path == "/2015-03-31/functions/ok/invocations":
			_, _ = io.WriteString(w, `{"statusCode":201}`)
		case r.URL.Path == "/2015-03-31/functions/slow/invocations":
			w.Header().Set("X-Amz-Function-Error", "Unhandled")
			_, _ = io.WriteString(w, `{"errorType":"Sandbox.Timedout","errorMessage":"Task timed out"}`)
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	names, err := ListFunctions(t.Context(), srv.URL)
	if err != nil || len(names) != 2 {
		t.Fatalf("ListFunctions: %v, %v", names, err)
	}
	if fn, err := FindTable(names, "lambdaidem-payments", "PaymentsFunction"); err != nil || fn != names[0] {
		t.Fatalf("FindTable on functions: %q, %v", fn, err)
	}
	inv, err := LambdaInvoker{Endpoint: srv.URL, Function: "ok"}.Invoke(t.Context(), []byte(`{}`))
	if err != nil || inv.FunctionError != "" || string(inv.Payload) != `{"statusCode":201}` {
		t.Fatalf("ok: %+v, %v", inv, err)
	}
	inv, err = LambdaInvoker{Endpoint: srv.URL, Function: "slow"}.Invoke(t.Context(), []byte(`{}`))
	if err != nil || inv.FunctionError != "Sandbox.Timedout" || !inv.TimedOut {
		t.Fatalf("slow: %+v, %v", inv, err)
	}
	if _, err := (LambdaInvoker{Endpoint: srv.URL, Function: "missing"}).Invoke(t.Context(), nil); err == nil {
		t.Fatal("missing function: want an error")
	}
}
