package payments_test

import (
	"testing"

	"github.com/lambdaidem/lambdaidem/ddbtest"
)

func TestDynamoDBDownIs503AndNothingRuns(t *testing.T) {
	e := setup(t)
	proxy := e.endpoint.RequireProxy(t)
	remove := proxy.Inject(ddbtest.Rule{Fault: ddbtest.ServiceUnavailable}) // every call, SDK retries included
	r := e.do(t, "POST", "/payments", "key-503", "alice", valid)
	remove()
	if r.StatusCode != 503 || r.Headers["Content-Type"] != "application/problem+json" || r.Headers["Retry-After"] == "" {
		t.Errorf("%d %v %s", r.StatusCode, r.Headers, r.Body)
	}
	if n := e.count(t, e.paymentsTable); n != 0 {
		t.Errorf("%d payment items", n)
	}
	// Once DynamoDB is back, the same key runs the request.
	if r := e.do(t, "POST", "/payments", "key-503", "alice", valid); r.StatusCode != 201 {
		t.Errorf("after recovery: %d %s", r.StatusCode, r.Body)
	}
}

func TestLostCommitResponseStillOnePayment(t *testing.T) {
	e := setup(t)
	proxy := e.endpoint.RequireProxy(t)
	proxy.Inject(ddbtest.Rule{Op: "TransactWriteItems", Fault: ddbtest.LostResponse, Times: 1})
	first := e.do(t, "POST", "/payments", "key-lost", "alice", valid)
	if first.StatusCode != 201 {
		t.Fatalf("%d %s: the SDK's retry of a commit that succeeded must be recognized", first.StatusCode, first.Body)
	}
	second := e.do(t, "POST", "/payments", "key-lost", "alice", valid)
	if second.Body != first.Body || second.Headers["Idempotent-Replayed"] != "true" {
		t.Errorf("retry: %d %s", second.StatusCode, second.Body)
	}
	if n := e.count(t, e.paymentsTable); n != 1 {
		t.Errorf("%d payment items, want 1", n)
	}
}
