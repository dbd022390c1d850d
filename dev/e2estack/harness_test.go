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
)

func TestClassifyRecognizesTheEmulatorsErrorAnswers(t *testing.T) {
	cases := []struct {
		name     string
		status   int
		body     string
		errType  string
		timedOut bool
	}{
		{"success", 200, `{"statusCode":201}`, "", false},
		{"classic timeout", 200, "Task timed out after 3.00 seconds", "Sandbox.Timedout", true},
		{"managed timeout", 200, `{"errorType":"Sandbox.Timedout","errorMessage":"Task timed out after 3.00 seconds"}`, "Sandbox.Timedout", true},
		{"crash", 502, `{"errorType":"Runtime.ExitError","errorMessage":"exit status 2"}`, "Runtime.ExitError", false},
		{"handler error", 200, `{"errorMessage":"boom","errorType":"errorString"}`, "errorString", false},
		{"untyped error", 200, `{"errorMessage":"boom"}`, "Unhandled", false},
		{"bare 5xx", 500, ``, "HTTP500", false},
	}
	for _, c := range cases {
		errType, timedOut := classify(c.status, []byte(c.body))
		if errType != c.errType || timedOut != c.timedOut {
			t.Errorf("%s: got (%q, %v), want (%q, %v)", c.name, errType, timedOut, c.errType, c.timedOut)
		}
	}
}

func TestBatchFailuresFollowsTheEventSourceMappingRules(t *testing.T) {
	handles := map[string]string{"a": "ha", "b": "hb"}
	ok := func(payload string) Batch {
		return Batch{Invocation: Invocation{Status: 200, Payload: []byte(payload)}}
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
		{"function error fails the batch", Batch{Invocation: Invocation{Status: 200, FunctionError: "Runtime.ExitError"}}, nil, true},
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

func TestHoldStallsMatchingRequestsUntilTheClientGoesAway(t *testing.T) {
	var served sync.Map
	next := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		served.Store(r.Header.Get("X-Amz-Target"), true)
		_, _ = io.WriteString(w, `{}`)
	})
	h := NewHold(next)
	fired := make(chan struct{})
	h.Add(HoldRule{Op: "TransactWriteItems", Contains: "pay-7", OnHold: func() { close(fired) }})
	srv := httptest.NewServer(h)
	defer srv.Close()

	send := func(ctx context.Context, op, body string) (*http.Response, error) {
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL, strings.NewReader(body))
		req.Header.Set("X-Amz-Target", "DynamoDB_20120810."+op)
		return http.DefaultClient.Do(req)
	}
	// Not matched: served, with the CRC32 DynamoDB puts on every response.
	resp, err := send(t.Context(), "TransactWriteItems", `{"id":"pay-8"}`)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.Header.Get("X-Amz-Crc32") != "2745614147" { // crc32.ChecksumIEEE([]byte("{}"))
		t.Errorf("X-Amz-Crc32 = %q", resp.Header.Get("X-Amz-Crc32"))
	}
	// Matched: stalled, never served; the client gives up.
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() {
		_, err := send(ctx, "TransactWriteItems", `{"id":"pay-7"}`)
		done <- err
	}()
	select {
	case <-fired:
	case <-time.After(5 * time.Second):
		t.Fatal("OnHold not called")
	}
	cancel()
	if err := <-done; err == nil {
		t.Fatal("the stalled request answered")
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		if held, abandoned := h.Stats(); held == 1 && abandoned == 1 {
			break
		}
		if time.Now().After(deadline) {
			held, abandoned := h.Stats()
			t.Fatalf("stats: held %d abandoned %d, want 1 1", held, abandoned)
		}
		time.Sleep(10 * time.Millisecond)
	}
	// The rule is spent: the same request now goes through.
	resp, err = send(t.Context(), "TransactWriteItems", `{"id":"pay-7"}`)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("after the rule was spent: %v %v", resp, err)
	}
	resp.Body.Close()
}

// invokerFunc adapts a function to Invoker.
type invokerFunc func(context.Context, []byte) (Invocation, error)

func (f invokerFunc) Invoke(ctx context.Context, p []byte) (Invocation, error) { return f(ctx, p) }

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
	fn := invokerFunc(func(_ context.Context, payload []byte) (Invocation, error) {
		var ev events.SQSEvent
		if err := json.Unmarshal(payload, &ev); err != nil {
			return Invocation{}, err
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
		return Invocation{Status: 200, Payload: b}, nil
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
