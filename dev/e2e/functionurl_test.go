//go:build e2e

package e2e

import (
	"bytes"
	"encoding/json"
	"net/http"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/lambdaidem/lambdaidem/ddbtest"
	"github.com/lambdaidem/lambdaidem/ddbtest/rie"
	"github.com/lambdaidem/lambdaidem/dev/e2estack"
)

// TestFunctionURL runs examples/function-url (a go-chi router made
// idempotent by the net/http middleware httpidem, served by
// lambdaurl.Start) under the Runtime Interface Emulator, invoked with
// Function URL events in response streaming mode as Lambda invokes it, on
// the in-process DynamoDB endpoint: the first POST, its replay, the same
// key with another body, and a commit that lands after the function was
// cut off at its timeout, which the retry replays.
func TestFunctionURL(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the function runs as a Linux bootstrap under the Runtime Interface Emulator; this is " + runtime.GOOS)
	}
	ctx := t.Context()
	rieBin, err := rie.Find(ctx)
	if err != nil {
		t.Fatal(err)
	}
	root, err := e2estack.ModuleRoot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	work := t.TempDir()
	bin, err := e2estack.Build(ctx, e2estack.BuildOptions{ModuleRoot: root, Package: e2estack.FunctionURLPackage, Out: filepath.Join(work, "function-url")})
	if err != nil {
		t.Fatal(err)
	}
	ddb, err := e2estack.StartDynamoDB(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(ddb.Close)
	const idemTable, payTable = "url-idempotency", "url-payments"
	if err := ddbtest.CreateTable(ctx, ddb.Client, idemTable); err != nil {
		t.Fatal(err)
	}
	if err := e2estack.CreateBusinessTable(ctx, ddb.Client, payTable); err != nil {
		t.Fatal(err)
	}
	const timeout = 2 * time.Second
	log := newLogFile(t, filepath.Join(work, "function.log"))
	fn, err := rie.Start(ctx, rie.Options{
		RIE: rieBin, Bootstrap: bin, Name: "payments-url", Timeout: timeout, Log: log, DynamoDBEndpoint: ddb.URL,
		Env: map[string]string{"IDEMPOTENCY_TABLE": idemTable, "PAYMENTS_TABLE": payTable},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(fn.Close)

	const caller = "arn:aws:iam::123456789012:user/alice"
	post := func(t *testing.T, key, body string) (e2estack.StreamedResponse, rie.Invocation) {
		t.Helper()
		e := e2estack.FunctionURLRequest("POST", "/payments", "", map[string]string{"Content-Type": "application/json", "Idempotency-Key": key}, body, caller)
		payload, err := json.Marshal(e)
		if err != nil {
			t.Fatal(err)
		}
		inv, err := fn.Invoke(t.Context(), payload)
		if err != nil {
			t.Fatal(err)
		}
		if inv.FunctionError != "" {
			return e2estack.StreamedResponse{}, inv
		}
		resp, err := e2estack.ReadStreamedResponse(inv.Payload)
		if err != nil {
			t.Fatalf("%v: %q", err, inv.Payload)
		}
		return resp, inv
	}

	t.Run("a POST and its retry make one payment; the same key with another body is refused", func(t *testing.T) {
		ref, key := unique("url"), unique("key")
		first, inv := post(t, key, paymentBody(ref, 1250))
		if first.Status != http.StatusCreated || first.Header.Get("Idempotent-Replayed") != "" {
			t.Fatalf("first POST: want 201, not replayed; got %+v (%+v)", first, inv)
		}
		retry, _ := post(t, key, paymentBody(ref, 1250))
		if retry.Status != http.StatusCreated || retry.Header.Get("Idempotent-Replayed") != "true" || retry.Body != first.Body || retry.Header.Get("Location") != first.Header.Get("Location") {
			t.Fatalf("retry: want the first 201 replayed\nfirst: %+v\nretry: %+v", first, retry)
		}
		other, _ := post(t, key, paymentBody(ref, 9999))
		if other.Status != http.StatusUnprocessableEntity || other.Header.Get("Content-Type") != "application/problem+json" || bytes.Contains([]byte(other.Body), []byte("pay_")) {
			t.Fatalf("other body: want 422 problem+json revealing nothing, got %+v", other)
		}
		if n := len(itemsWhere(t, ddb.Client, payTable, "reference", ref)); n != 1 {
			t.Fatalf("payments: want 1, got %d", n)
		}
	})

	t.Run("a commit that lands after the Lambda timeout cut the function off: the retry replays it", func(t *testing.T) {
		ref, key := unique("late"), unique("key")
		// The commit (the transaction with the payment) reaches DynamoDB and
		// is held there past the function's timeout; the emulator cuts the
		// function off; DynamoDB then applies the write, as it finishes a
		// write whose client went away.
		remove := ddb.Proxy.Inject(ddbtest.Rule{Op: "TransactWriteItems", Hold: timeout + time.Second, Times: 1,
			Match: func(b []byte) bool { return bytes.Contains(b, []byte(ref)) }})
		defer remove()
		began := time.Now()
		if resp, inv := post(t, key, paymentBody(ref, 4200)); !inv.TimedOut {
			t.Fatalf("want the invocation cut off at its timeout; got %+v, %+v", resp, inv)
		}
		time.Sleep(time.Until(began.Add(timeout + 2*time.Second))) // the held commit is applied
		if n := len(itemsWhere(t, ddb.Client, payTable, "reference", ref)); n != 1 {
			t.Fatalf("payments after the late commit: want 1, got %d", n)
		}
		retry, inv := post(t, key, paymentBody(ref, 4200))
		if retry.Status != http.StatusCreated || retry.Header.Get("Idempotent-Replayed") != "true" {
			t.Fatalf("retry: want the committed 201 replayed; got %+v (%+v)", retry, inv)
		}
		if n := len(itemsWhere(t, ddb.Client, payTable, "reference", ref)); n != 1 {
			t.Fatalf("payments: want exactly 1, got %d", n)
		}
	})
}
