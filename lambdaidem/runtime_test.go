package lambdaidem_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/lambdaidem/lambdaidem/lambdaidem"
	"github.com/lambdaidem/lambdaidem/lambdaidem/memstore"
)

// runtimeChildEnv makes the test binary, run again, a Lambda function
// process: TestRuntimeProcess calls lambda.Start.
const runtimeChildEnv = "LAMBDAIDEM_TEST_RUNTIME_CHILD"

// TestRuntimeProcess is the function process of
// TestReplayedErrorTypeOnTheRuntimeWire; run on its own it does nothing.
func TestRuntimeProcess(t *testing.T) {
	if os.Getenv(runtimeChildEnv) != "1" {
		t.Skip("the function process of TestReplayedErrorTypeOnTheRuntimeWire")
	}
	g, err := lambdaidem.New(memstore.New())
	if err != nil {
		t.Fatal(err)
	}
	w, err := lambdaidem.NewWrapper(g, orderSpec())
	if err != nil {
		t.Fatal(err)
	}
	lambda.Start(w.Wrap(func(ctx context.Context, o order) (receipt, error) {
		if o.Total < 0 {
			return receipt{}, &declinedError{fmt.Sprintf("total %d", o.Total)}
		}
		return receipt{OrderID: o.ID, Charged: o.Total}, nil
	}))
}

// runtimeReply is what the function posted for one invocation.
type runtimeReply struct {
	path string
	body string
}

// The wrapped handler runs under aws-lambda-go's real runtime loop, in its
// own process, against a Runtime API served here as the Lambda service
// serves it (GET .../invocation/next, POST .../invocation/{id}/response or
// .../error; see the Lambda docs, "Using the Lambda runtime API for custom
// runtimes"). A terminal error and its replay must be reported with the same
// errorType and errorMessage.
func TestReplayedErrorTypeOnTheRuntimeWire(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a process")
	}
	events := []string{
		`{"order_id":"o1","total":-5}`,
		`{"order_id":"o1","total":-5}`,
		`{"order_id":"o2","total":3}`,
		`{"order_id":"o2","total":3}`,
	}
	next := make(chan int, len(events))
	for i := range events {
		next <- i
	}
	replies := make(chan runtimeReply, len(events))
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		const base = "/2018-06-01/runtime/invocation/"
		switch {
		case r.Method == http.MethodGet && r.URL.Path == base+"next":
			select {
			case i := <-next:
				w.Header().Set("Lambda-Runtime-Aws-Request-Id", "req-"+strconv.Itoa(i))
				w.Header().Set("Lambda-Runtime-Deadline-Ms", strconv.FormatInt(time.Now().Add(time.Minute).UnixMilli(), 10))
				w.Header().Set("Lambda-Runtime-Invoked-Function-Arn", "arn:aws:lambda:us-east-1:123456789012:function:orders")
				_, _ = io.WriteString(w, events[i])
			case <-r.Context().Done():
			}
		case r.Method == http.MethodPost && strings.HasPrefix(r.URL.Path, base):
			b, _ := io.ReadAll(r.Body)
			replies <- runtimeReply{strings.TrimPrefix(r.URL.Path, base), string(b)}
			w.WriteHeader(http.StatusAccepted)
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestRuntimeProcess$")
	cmd.Env = append(os.Environ(), runtimeChildEnv+"=1", "AWS_LAMBDA_RUNTIME_API="+strings.TrimPrefix(srv.URL, "http://"))
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()

	got := make([]runtimeReply, 0, len(events))
	for range events {
		select {
		case r := <-replies:
			got = append(got, r)
		case <-ctx.Done():
			t.Fatalf("replies so far: %+v; the function process stopped answering", got)
		}
	}
	var first, replay struct {
		Type    string `json:"errorType"`
		Message string `json:"errorMessage"`
	}
	if got[0].path != "req-0/error" || got[1].path != "req-1/error" {
		t.Fatalf("replies %+v; want errors for the first two invocations", got)
	}
	if err := json.Unmarshal([]byte(got[0].body), &first); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(got[1].body), &replay); err != nil {
		t.Fatal(err)
	}
	if first.Type != "declinedError" || first.Message != "declined: total -5" || replay != first {
		t.Fatalf("first error %+v, replayed %+v; want errorType declinedError and the same message both times", first, replay)
	}
	if got[2].path != "req-2/response" || got[3].path != "req-3/response" || got[2].body != got[3].body ||
		strings.TrimSpace(got[2].body) != `{"order_id":"o2","charged":3}` {
		t.Fatalf("responses %+v; want the same receipt twice", got[2:])
	}
}
