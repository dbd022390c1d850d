package ddbtest_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/lambdaidem/lambdaidem/ddbtest"
)

// The behaviours below are DynamoDB's, from the Developer Guide,
// "Transaction conflict handling in DynamoDB"
// (https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/transaction-apis.html#transaction-conflict-handling):
// a PutItem, UpdateItem or DeleteItem on an item of an ongoing
// TransactWriteItems is rejected with TransactionConflictException; a
// TransactWriteItems including an item of another ongoing one is cancelled
// with reason TransactionConflict; items are not locked, so a transaction
// meeting a single-item write on its item is cancelled the same way. The
// SDK does not retry TransactionConflictException: aws-sdk-go-v2's standard
// retryer (aws/retry/standard.go, DefaultThrottleErrorCodes and
// DefaultRetryableErrorCodes, v1.48.0) lists TransactionInProgressException
// but not TransactionConflictException.

// hold is how long TestHeldRefusal holds a refused call; the other tests
// hold a write until they release it, whatever the scheduler's pace.
const hold = 100 * time.Millisecond

// twoItemTx writes items a and b in one transaction.
func twoItemTx(table, a, b string) *dynamodb.TransactWriteItemsInput {
	return &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{
		{Put: &types.Put{TableName: aws.String(table), Item: item(a, "tx")}},
		{Update: &types.Update{TableName: aws.String(table), Key: key(b), UpdateExpression: aws.String("SET v = :v"),
			ExpressionAttributeValues: map[string]types.AttributeValue{":v": s("tx")}}},
	}}
}

// inFlight runs fn in the background and waits until the proxy has a
// write in flight; the returned function waits for fn's error.
func inFlight(t *testing.T, p *ddbtest.Proxy, fn func() error) func() error {
	t.Helper()
	errc := make(chan error, 1)
	go func() { errc <- fn() }()
	deadline := time.Now().Add(10 * time.Second)
	for p.InFlight() == 0 {
		if time.Now().After(deadline) {
			t.Fatal("the held write never got in flight")
		}
		time.Sleep(time.Millisecond)
	}
	return func() error { return <-errc }
}

// heldWorld starts an endpoint with a table holding b=old, holds the next
// call of op, and starts write with it: it returns once that write is in
// flight. wait releases the held write and returns its error.
func heldWorld(t *testing.T, op string, write func(c *dynamodb.Client, table string) error) (p *ddbtest.Proxy, c *dynamodb.Client, table string, wait func() error) {
	t.Helper()
	ep := ddbtest.Start(t)
	p = ep.RequireProxy(t)
	c = ep.Client()
	table = newTable(t, c)
	put(t, c, table, item("b", "old"))
	release := p.HoldNext(t, op)
	p.ResetCalls()
	done := inFlight(t, p, func() error { return write(c, table) })
	return p, c, table, func() error { release(); return done() }
}

// heldTx is the transaction on a and b that heldWorld holds.
func heldTx(c *dynamodb.Client, table string) error {
	_, err := c.TransactWriteItems(context.Background(), twoItemTx(table, "a", "b"))
	return err
}

// reasons lists the cancellation reason codes of a cancelled transaction;
// nil if err is not a cancellation.
func reasons(err error) []string {
	var tce *types.TransactionCanceledException
	if !errors.As(err, &tce) {
		return nil
	}
	codes := make([]string, len(tce.CancellationReasons))
	for i, r := range tce.CancellationReasons {
		codes[i] = aws.ToString(r.Code)
	}
	return codes
}

// singleWrites are the three single-item writes, each on item pk.
var singleWrites = map[string]func(c *dynamodb.Client, table, pk string) error{
	"PutItem": func(c *dynamodb.Client, table, pk string) error {
		_, err := c.PutItem(context.Background(), &dynamodb.PutItemInput{TableName: aws.String(table), Item: item(pk, "single")})
		return err
	},
	"UpdateItem": func(c *dynamodb.Client, table, pk string) error {
		_, err := c.UpdateItem(context.Background(), &dynamodb.UpdateItemInput{TableName: aws.String(table), Key: key(pk),
			UpdateExpression: aws.String("SET v = :v"), ExpressionAttributeValues: map[string]types.AttributeValue{":v": s("single")}})
		return err
	},
	"DeleteItem": func(c *dynamodb.Client, table, pk string) error {
		_, err := c.DeleteItem(context.Background(), &dynamodb.DeleteItemInput{TableName: aws.String(table), Key: key(pk)})
		return err
	},
}

// TestSingleWriteMeetsTransaction: a single-item write on an item of a
// transaction in flight gets HTTP 400 TransactionConflictException, sent
// once (the SDK does not retry it), and changes nothing; the transaction
// then commits.
func TestSingleWriteMeetsTransaction(t *testing.T) {
	for name, write := range singleWrites {
		t.Run(name, func(t *testing.T) {
			p, c, table, wait := heldWorld(t, "TransactWriteItems", heldTx)
			err := write(c, table, "b")
			var tce *types.TransactionConflictException
			if !errors.As(err, &tce) {
				t.Fatalf("%s during the transaction = %v; want TransactionConflictException", name, err)
			}
			if n := p.Conflicts(); n != 1 {
				t.Fatalf("%d conflicts counted; want 1", n)
			}
			if n := p.Count(name); n != 1 {
				t.Fatalf("%s sent %d times; want 1: the SDK does not retry TransactionConflictException", name, n)
			}
			if err := wait(); err != nil {
				t.Fatalf("the held transaction: %v", err)
			}
			if v := value(get(t, c, table, "b"), "v"); v != "tx" {
				t.Fatalf("b = %q; want the transaction's write", v)
			}
		})
	}
}

// TestTransactionMeetsTransaction: a transaction including an item of
// another transaction in flight is cancelled, reason TransactionConflict on
// that item and None on the other, and writes nothing.
func TestTransactionMeetsTransaction(t *testing.T) {
	_, c, table, wait := heldWorld(t, "TransactWriteItems", heldTx)
	_, err := c.TransactWriteItems(context.Background(), twoItemTx(table, "c", "b"))
	if got := reasons(err); len(got) != 2 || got[0] != "None" || got[1] != "TransactionConflict" {
		t.Fatalf("second transaction = %v; want cancelled with reasons [None, TransactionConflict]", err)
	}
	if err := wait(); err != nil {
		t.Fatalf("the held transaction: %v", err)
	}
	if get(t, c, table, "c") != nil {
		t.Fatal("the cancelled transaction wrote item c")
	}
}

// TestTransactionMeetsSingleWrite: a transaction including an item that a
// single-item write in flight is writing is cancelled with reason
// TransactionConflict; a second single-item write on that item is not
// refused but waits its turn, as DynamoDB serializes them.
func TestTransactionMeetsSingleWrite(t *testing.T) {
	p, c, table, wait := heldWorld(t, "UpdateItem", func(c *dynamodb.Client, table string) error {
		return singleWrites["UpdateItem"](c, table, "b")
	})
	_, err := c.TransactWriteItems(context.Background(), twoItemTx(table, "a", "b"))
	if got := reasons(err); len(got) != 2 || got[1] != "TransactionConflict" {
		t.Fatalf("transaction = %v; want cancelled, reason TransactionConflict on b", err)
	}
	second := make(chan error, 1)
	go func() { second <- singleWrites["PutItem"](c, table, "b") }()
	for p.Count("PutItem") == 0 { // it reached the proxy
		time.Sleep(time.Millisecond)
	}
	time.Sleep(50 * time.Millisecond) // a write that did not wait would be done by now
	select {
	case err := <-second:
		t.Fatalf("a second single-item write on b ended (%v) while the first was held; want it to wait its turn", err)
	default:
	}
	if err := wait(); err != nil {
		t.Fatalf("the held UpdateItem: %v", err)
	}
	if err := <-second; err != nil {
		t.Fatalf("a second single-item write on b: %v; want it to wait and succeed", err)
	}
	if get(t, c, table, "a") != nil {
		t.Fatal("the cancelled transaction wrote item a")
	}
}

// TestConflictsSpareOtherItems: while a transaction is held in flight,
// writes and transactions on other items, and reads of its own items (which
// see the last committed state), are served at once.
func TestConflictsSpareOtherItems(t *testing.T) {
	p, c, table, wait := heldWorld(t, "TransactWriteItems", heldTx)
	// The transaction stays held until wait releases it: these requests
	// are served while it is, or they never end.
	served := make(chan struct{})
	go func() {
		defer close(served)
		for name, write := range singleWrites {
			if err := write(c, table, "z"); err != nil {
				t.Errorf("%s on another item: %v", name, err)
			}
		}
		if _, err := c.TransactWriteItems(context.Background(), twoItemTx(table, "x", "y")); err != nil {
			t.Errorf("a transaction on other items: %v", err)
		}
		if v := value(get(t, c, table, "b"), "v"); v != "old" {
			t.Errorf("read of b during the transaction = %q; want the committed %q", v, "old")
		}
	}()
	select {
	case <-served:
	case <-time.After(10 * time.Second):
		t.Fatal("requests on other items were not served while the transaction was held")
	}
	if p.InFlight() != 1 {
		t.Fatalf("%d writes in flight; want the held transaction only", p.InFlight())
	}
	if err := wait(); err != nil {
		t.Fatalf("the held transaction: %v", err)
	}
	if p.InFlight() != 0 {
		t.Fatalf("%d writes in flight after the transaction", p.InFlight())
	}
}

// TestTransactionInProgress: a transaction resent with the
// ClientRequestToken of one still in flight gets
// TransactionInProgressException, which the SDK's standard retryer does
// retry; once the first one is applied, the resend succeeds as a replay.
func TestTransactionInProgress(t *testing.T) {
	ep := ddbtest.Start(t)
	p := ep.RequireProxy(t)
	c := ep.Client(func(o *ddbtest.ClientOptions) { o.MaxAttempts = 1 })
	table := newTable(t, c)
	release := p.HoldNext(t, "TransactWriteItems")
	tx := counterTx(table, "tok-in-flight")
	wait := inFlight(t, p, func() error {
		_, err := c.TransactWriteItems(context.Background(), tx)
		return err
	})
	if _, err := c.TransactWriteItems(context.Background(), tx); apiCode(err) != "TransactionInProgressException" {
		t.Fatalf("resend while in flight = %v; want TransactionInProgressException", err)
	}
	release()
	if err := wait(); err != nil {
		t.Fatalf("the held transaction: %v", err)
	}
	if _, err := c.TransactWriteItems(context.Background(), tx); err != nil {
		t.Fatalf("resend after it was applied = %v; want success (token replay)", err)
	}
	if n := value(get(t, c, table, "c"), "n"); n != "1" {
		t.Fatalf("counter = %s; want 1", n)
	}
}

// TestConflictsOff: with the departure kept, requests are serialized as the
// emulator does: a held transaction is only delayed, and a write on its
// item during the hold succeeds.
func TestConflictsOff(t *testing.T) {
	ep := ddbtest.Start(t, func(o *ddbtest.ProxyOptions) { o.Departures.NoTransactionConflicts = true })
	p := ep.RequireProxy(t)
	c := ep.Client()
	table := newTable(t, c)
	release := p.HoldNext(t, "TransactWriteItems")
	errc := make(chan error, 1)
	go func() {
		_, err := c.TransactWriteItems(context.Background(), twoItemTx(table, "a", "b"))
		errc <- err
	}()
	for p.Count("TransactWriteItems") == 0 { // the transaction reached the proxy, and is held
		time.Sleep(time.Millisecond)
	}
	written := make(chan error, 1)
	go func() { written <- singleWrites["UpdateItem"](c, table, "b") }()
	select {
	case err := <-written:
		if err != nil {
			t.Fatalf("write during the held transaction: %v; want success with conflicts off", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("a write on the held transaction's item waited for it; want it served at once with conflicts off")
	}
	release()
	if err := <-errc; err != nil {
		t.Fatalf("the held transaction: %v", err)
	}
	if got := ddbtest.Emulator(); !got.NoTransactionConflicts {
		t.Fatal("Emulator() must keep the no-conflicts departure")
	}
}

// TestHeldRefusal: a hold delays a refused call too, without putting it in
// flight.
func TestHeldRefusal(t *testing.T) {
	ep := ddbtest.Start(t)
	p := ep.RequireProxy(t)
	c := ep.Client(func(o *ddbtest.ClientOptions) { o.MaxAttempts = 1 })
	table := newTable(t, c)
	p.Inject(ddbtest.Rule{Op: "PutItem", Fault: ddbtest.Throttling, Hold: hold, Times: 1})
	var wg sync.WaitGroup
	start := time.Now()
	wg.Go(func() {
		if err := singleWrites["PutItem"](c, table, "x"); apiCode(err) != "ThrottlingException" {
			t.Errorf("held refusal = %v; want ThrottlingException", err)
		}
	})
	time.Sleep(20 * time.Millisecond)
	if p.InFlight() != 0 {
		t.Error("a refused call was put in flight")
	}
	wg.Wait()
	if d := time.Since(start); d < hold {
		t.Fatalf("refusal answered after %v; want the hold first", d)
	}
}
