package ddbtest_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/lambdaidem/lambdaidem/ddbtest"
)

// TestCallsCountedByOperation: every call that reaches the proxy is
// counted under its X-Amz-Target operation; the proxy's own reads are not.
func TestCallsCountedByOperation(t *testing.T) {
	ep := ddbtest.Start(t)
	p := ep.RequireProxy(t)
	c := ep.Client()
	table := newTable(t, c)
	p.ResetCalls()
	put(t, c, table, item("x", "1"))
	get(t, c, table, "x")
	get(t, c, table, "x")
	_, _ = c.PutItem(context.Background(), &dynamodb.PutItemInput{TableName: aws.String(table), Item: item("x", "2"),
		ConditionExpression: aws.String(failCond), ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld})
	want := map[string]int{"PutItem": 2, "GetItem": 2}
	if got := p.Calls(); len(got) != 2 || got["PutItem"] != 2 || got["GetItem"] != 2 || p.Total() != 4 || p.Count("PutItem") != 2 {
		t.Fatalf("calls %v (total %d); want %v", got, p.Total(), want)
	}
	p.ResetCalls()
	if p.Total() != 0 {
		t.Fatalf("after ResetCalls: %v", p.Calls())
	}
}

// TestFaults: what the SDK sees for each injected fault, and whether the
// call was applied.
func TestFaults(t *testing.T) {
	for _, c := range []struct {
		fault   ddbtest.Fault
		code    string // error code after the SDK's 3 attempts; "" = success
		sent    int    // calls the SDK sent
		applied bool
	}{
		{ddbtest.ProvisionedThroughputExceeded, "ProvisionedThroughputExceededException", 3, false},
		{ddbtest.Throttling, "ThrottlingException", 3, false},
		{ddbtest.InternalServerError, "InternalServerError", 3, false},
		{ddbtest.ServiceUnavailable, "ServiceUnavailable", 3, false},
		{ddbtest.LostResponse, "InternalServerError", 3, true},
		{ddbtest.LostConnection, "EOF", 3, true},
	} {
		t.Run(c.fault.String(), func(t *testing.T) {
			ep := ddbtest.Start(t)
			p := ep.RequireProxy(t)
			client := ep.Client()
			table := newTable(t, client)
			p.ResetCalls()
			p.Inject(ddbtest.Rule{Op: "PutItem", Fault: c.fault})
			_, err := client.PutItem(context.Background(), &dynamodb.PutItemInput{TableName: aws.String(table), Item: item("x", "1")})
			if code := apiCode(err); !strings.Contains(code, c.code) || err == nil {
				t.Fatalf("PutItem = %v; want %s", err, c.code)
			}
			if n := p.Count("PutItem"); n != c.sent {
				t.Fatalf("PutItem sent %d times; want %d", n, c.sent)
			}
			if applied := get(t, client, table, "x") != nil; applied != c.applied {
				t.Fatalf("applied = %v; want %v", applied, c.applied)
			}
		})
	}
}

// TestFaultRuleBudget: After lets calls through first, Times bounds the
// faults, Op and Match select calls, the remove function and ClearFaults
// end rules.
func TestFaultRuleBudget(t *testing.T) {
	ep := ddbtest.Start(t, func(o *ddbtest.ProxyOptions) {})
	p := ep.RequireProxy(t)
	c := ep.Client(func(o *ddbtest.ClientOptions) { o.MaxAttempts = 1 })
	table := newTable(t, c)
	ctx := context.Background()
	putX := func() error {
		_, err := c.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(table), Item: item("x", "1")})
		return err
	}
	p.Inject(ddbtest.Rule{Op: "PutItem", Fault: ddbtest.InternalServerError, After: 1, Times: 2})
	var results []bool
	for range 4 {
		results = append(results, putX() == nil)
	}
	if want := []bool{true, false, false, true}; !equal(results, want) {
		t.Fatalf("PutItem successes %v; want %v", results, want)
	}
	if _, err := c.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(table), Key: key("x")}); err != nil {
		t.Fatalf("GetItem faulted by a PutItem rule: %v", err)
	}
	remove := p.Inject(ddbtest.Rule{Fault: ddbtest.Throttling, Match: func(body []byte) bool { return strings.Contains(string(body), `"y"`) }})
	if putX() != nil {
		t.Fatal("a call the Match rejects was faulted")
	}
	if err := func() error {
		put2 := item("y", "1")
		_, err := c.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(table), Item: put2})
		return err
	}(); apiCode(err) != "ThrottlingException" {
		t.Fatalf("matched call = %v; want ThrottlingException", err)
	}
	remove()
	p.Inject(ddbtest.Rule{Fault: ddbtest.ServiceUnavailable})
	p.ClearFaults()
	if putX() != nil {
		t.Fatal("faulted after ClearFaults")
	}
}

func equal(a, b []bool) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestTransactionConflictFault: the injected conflict has one
// TransactionConflict reason per item and writes nothing.
func TestTransactionConflictFault(t *testing.T) {
	ep := ddbtest.Start(t)
	p := ep.RequireProxy(t)
	c := ep.Client()
	table := newTable(t, c)
	p.Inject(ddbtest.Rule{Op: "TransactWriteItems", Fault: ddbtest.TransactionConflict, Times: 1})
	_, err := c.TransactWriteItems(context.Background(), counterTx(table, "tok"))
	var tce *types.TransactionCanceledException
	if !errors.As(err, &tce) || len(tce.CancellationReasons) != 2 || aws.ToString(tce.CancellationReasons[1].Code) != "TransactionConflict" {
		t.Fatalf("TransactWriteItems = %v; want 2 TransactionConflict reasons", err)
	}
	if get(t, c, table, "p") != nil {
		t.Fatal("a conflicted transaction was applied")
	}
	if _, err := c.TransactWriteItems(context.Background(), counterTx(table, "tok")); err != nil {
		t.Fatalf("after the fault: %v", err)
	}
}

// TestLatency: every call takes at least the configured latency, and none
// once it is set to 0. The latency is long enough (1s) that a call under a
// loaded scheduler does not take it by itself.
func TestLatency(t *testing.T) {
	const latency = time.Second
	ep := ddbtest.Start(t, func(o *ddbtest.ProxyOptions) { o.Latency = latency })
	p := ep.RequireProxy(t)
	c := ep.Client()
	table := newTable(t, c)
	start := time.Now()
	get(t, c, table, "x")
	if d := time.Since(start); d < latency {
		t.Fatalf("call took %v; want at least %v", d, latency)
	}
	p.SetLatency(0)
	start = time.Now()
	get(t, c, table, "x")
	if d := time.Since(start); d >= latency {
		t.Fatalf("call took %v after SetLatency(0)", d)
	}
}

// TestSerializes: the proxy never lets two requests into the emulator at
// once.
func TestSerializes(t *testing.T) {
	var inside, overlaps atomic.Int32
	emu := ddbtest.NewEmulator()
	next := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if inside.Add(1) > 1 {
			overlaps.Add(1)
		}
		time.Sleep(time.Millisecond)
		emu.ServeHTTP(w, r)
		inside.Add(-1)
	})
	srv := httptest.NewServer(ddbtest.NewProxy(next))
	defer srv.Close()
	c := ddbtest.NewClient(srv.URL)
	table := newTable(t, c)
	var wg sync.WaitGroup
	for range 20 {
		wg.Go(func() { get(t, c, table, "x") })
	}
	wg.Wait()
	if overlaps.Load() != 0 {
		t.Fatalf("%d requests overlapped in the emulator", overlaps.Load())
	}
}

// TestExternalEndpoint: with AWS_ENDPOINT_URL_DYNAMODB set, Start uses it
// with no proxy, and RequireProxy skips with a message.
func TestExternalEndpoint(t *testing.T) {
	t.Setenv(ddbtest.EnvEndpoint, "http://localhost:4566")
	ep := ddbtest.Start(t)
	if !ep.External() || ep.URL != "http://localhost:4566" || ep.Proxy != nil {
		t.Fatalf("Start = %+v; want the external endpoint, no proxy", ep)
	}
	var skipped bool
	t.Run("needs proxy", func(t *testing.T) {
		defer func() { skipped = t.Skipped() }()
		ep.RequireProxy(t)
	})
	if !skipped {
		t.Fatal("RequireProxy did not skip")
	}
}

// TestTableName: names are unique and valid DynamoDB table names.
func TestTableName(t *testing.T) {
	a, b := ddbtest.TableName(t, "idem"), ddbtest.TableName(t, "idem")
	valid := regexp.MustCompile(`^[a-zA-Z0-9_.-]{3,255}$`)
	if a == b || !valid.MatchString(a) || !strings.HasPrefix(a, "idem-TestTableName") {
		t.Fatalf("TableName = %q, %q; want two distinct valid names", a, b)
	}
}
