package rie

import (
	"errors"
	"fmt"
	"net"
	"testing"
	"time"
)

// TestStartLogTellsATakenPort: the emulator is a Go program and reports a
// port it cannot bind with the net package's error; startLog must recognise
// exactly that error (Start then retries on fresh ports) and nothing else
// (any other early exit is returned at once).
func TestStartLogTellsATakenPort(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	_, err = net.Listen("tcp", l.Addr().String())
	if err == nil {
		t.Fatal("a second listener on a taken port succeeded")
	}
	cases := []struct {
		name string
		log  string
		want bool
	}{
		{"runtime API port taken", fmt.Sprintf("level=ERROR msg=\"rie failed\" err=\"could not start runtime api server: %v\"\n", err), true},
		{"other early exit", "level=ERROR msg=\"rie failed\" err=\"fork/exec ./bootstrap: permission denied\"\n", false},
		{"nothing printed", "", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var s startLog
			fmt.Fprint(&s, c.log)
			if got := s.portTaken(); got != c.want {
				t.Errorf("portTaken() = %v for %q, want %v", got, c.log, c.want)
			}
		})
	}
}

// TestInvocationErrors: each answer the emulator gives (classic: a timeout
// as plain text with 200, a crash as an error document with 502; Managed
// Instances: both as a document with 200) becomes a *FunctionError, a
// timeout one that errors.Is ErrTimeout; a success none.
func TestInvocationErrors(t *testing.T) {
	cases := []struct {
		name    string
		status  int
		body    string
		typ     string
		timeout bool
	}{
		{"classic timeout", 200, "Task timed out after 1.00 seconds", TimedOutType, true},
		{"managed timeout", 200, `{"errorType":"Sandbox.Timedout","errorMessage":"Task timed out after 1.00 seconds"}`, TimedOutType, true},
		{"crash", 502, `{"errorType":"Runtime.ExitError","errorMessage":"exit status 2"}`, "Runtime.ExitError", false},
		{"handler error", 200, `{"errorType":"errorString","errorMessage":"card declined"}`, "errorString", false},
		{"message only", 200, `{"errorMessage":"boom"}`, "Unhandled", false},
		{"bare status", 500, "internal", "HTTP500", false},
		{"success", 200, `{"id":"a"}`, "", false},
		{"success with a null body", 200, `null`, "", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			inv := NewInvocation(c.status, []byte(c.body), 0)
			err := inv.Err()
			if c.typ == "" {
				if err != nil || inv.FunctionError != "" || inv.TimedOut {
					t.Fatalf("success read as %v (%q, timed out %v)", err, inv.FunctionError, inv.TimedOut)
				}
				return
			}
			var fe *FunctionError
			if !errors.As(err, &fe) {
				t.Fatalf("Err() = %v, want a *FunctionError", err)
			}
			if fe.Type != c.typ || inv.FunctionError != c.typ || fe.Status != c.status {
				t.Errorf("type %q (Invocation %q), status %d; want %q, %d", fe.Type, inv.FunctionError, fe.Status, c.typ, c.status)
			}
			if errors.Is(err, ErrTimeout) != c.timeout || inv.TimedOut != c.timeout || fe.TimedOut() != c.timeout {
				t.Errorf("timeout: errors.Is %v, TimedOut %v; want %v", errors.Is(err, ErrTimeout), inv.TimedOut, c.timeout)
			}
			if !errors.Is(err, ErrFunction) {
				t.Error("a function error does not match ErrFunction")
			}
			if fe.Message == "" {
				t.Error("no message")
			}
		})
	}
}

// TestEnvironment: what Lambda sets and the emulator does not is set
// (AWS_LAMBDA_INITIALIZATION_TYPE above all), Managed Instances mode says
// so, the DynamoDB endpoint is passed, and the function's own Env wins.
func TestEnvironment(t *testing.T) {
	env := Environment(Options{Name: "charge", Timeout: 1500 * time.Millisecond, DynamoDBEndpoint: "http://127.0.0.1:1"})
	want := map[string]string{
		"AWS_LAMBDA_INITIALIZATION_TYPE":  "on-demand",
		"AWS_LAMBDA_FUNCTION_NAME":        "charge",
		"AWS_LAMBDA_FUNCTION_TIMEOUT":     "2",
		"AWS_LAMBDA_FUNCTION_MEMORY_SIZE": "128",
		"AWS_REGION":                      "us-east-1",
		"AWS_ENDPOINT_URL_DYNAMODB":       "http://127.0.0.1:1",
		"AWS_LAMBDA_LOG_GROUP_NAME":       "/aws/lambda/charge",
	}
	for k, v := range want {
		if env[k] != v {
			t.Errorf("%s = %q, want %q", k, env[k], v)
		}
	}
	if _, ok := env["AWS_LAMBDA_MAX_CONCURRENCY"]; ok {
		t.Error("classic mode sets AWS_LAMBDA_MAX_CONCURRENCY")
	}
	managed := Environment(Options{MaxConcurrency: 4})
	if managed["AWS_LAMBDA_INITIALIZATION_TYPE"] != "lambda-managed-instances" || managed["AWS_LAMBDA_MAX_CONCURRENCY"] != "4" {
		t.Errorf("managed: %q, %q", managed["AWS_LAMBDA_INITIALIZATION_TYPE"], managed["AWS_LAMBDA_MAX_CONCURRENCY"])
	}
	own := Environment(Options{Env: map[string]string{"AWS_REGION": "eu-west-1", "ORDERS_TABLE": "orders"}})
	if own["AWS_REGION"] != "eu-west-1" || own["ORDERS_TABLE"] != "orders" {
		t.Errorf("Env not applied: %q, %q", own["AWS_REGION"], own["ORDERS_TABLE"])
	}
}
