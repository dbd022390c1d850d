package rie_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/lambdaidem/lambdaidem/ddbtest"
	"github.com/lambdaidem/lambdaidem/ddbtest/rie"
)

type order struct {
	ID      string   `json:"id"`
	SleepMS int      `json:"sleep_ms,omitempty"`
	Env     []string `json:"env,omitempty"`
}

type receipt struct {
	ID  string            `json:"id"`
	Run string            `json:"run"`
	Env map[string]string `json:"env"`
}

// heldTimeout is the timeout of the functions whose commit is held past
// it: long enough for a warm handler to claim on a loaded machine.
const heldTimeout = 2 * time.Second

// warm invokes the function once, so that the invocation under test does
// not spend its timeout on the cold start (an invocation cut off before
// its claim would prove nothing).
func warm(t *testing.T, fn rie.Invoker) {
	t.Helper()
	if err := rie.InvokeJSON(t.Context(), fn, order{ID: "warm-" + t.Name()}, nil); err != nil {
		t.Fatalf("warm-up: %v", err)
	}
}

// leaseMargin is the test function's LeaseMargin: a timed-out attempt's
// record is free this long after its deadline on standard Lambda.
const leaseMargin = time.Second

// world is a test function's DynamoDB side: the kit's endpoint, its
// idempotency table and the orders table.
type world struct {
	kit    *ddbtest.Kit
	orders string
	env    map[string]string
}

func newWorld(t *testing.T) world {
	kit := ddbtest.NewKit(t)
	orders := kit.NewTable(t, "orders", "id")
	return world{kit: kit, orders: orders, env: map[string]string{
		"IDEMPOTENCY_TABLE": kit.Table,
		"ORDERS_TABLE":      orders,
		"TEST_LEASE_MARGIN": leaseMargin.String(),
	}}
}

// runs returns the run of every order item with this id.
func (w world) runs(t *testing.T, id string) []string {
	t.Helper()
	out, err := w.kit.Client.GetItem(t.Context(), &dynamodb.GetItemInput{
		TableName:      aws.String(w.orders),
		Key:            map[string]types.AttributeValue{"id": &types.AttributeValueMemberS{Value: id}},
		ConsistentRead: aws.Bool(true),
	})
	if err != nil {
		t.Fatal(err)
	}
	if out.Item == nil {
		return nil
	}
	return []string{out.Item["run"].(*types.AttributeValueMemberS).Value}
}

// TestFunctionUnderTheEmulator runs a user's bootstrap (internal/testfunc,
// built as a release binary) under the Runtime Interface Emulator against
// the kit's DynamoDB endpoint.
func TestFunctionUnderTheEmulator(t *testing.T) {
	bin := rie.Binary(t)
	boot := rie.BuildBootstrap(t, ".", "./internal/testfunc")

	// Every emulator claims 127.0.0.1:9001 for its Runtime API unless told
	// otherwise: three instances side by side, invoked at once, each
	// answer by its own run, with Lambda's environment.
	t.Run("instances side by side", func(t *testing.T) {
		t.Parallel()
		w := newWorld(t)
		const n = 3
		pool := rie.RunPool(t, n, rie.Options{RIE: bin, Bootstrap: boot, Name: "orders", Timeout: 5 * time.Second,
			DynamoDBEndpoint: w.kit.Endpoint.URL, Env: w.env})
		var wg sync.WaitGroup
		got := make([]receipt, n)
		errs := make([]error, n)
		for i := range n {
			wg.Go(func() {
				errs[i] = rie.InvokeJSON(t.Context(), pool, order{ID: fmt.Sprintf("side-%d", i), SleepMS: 300,
					Env: []string{"AWS_LAMBDA_INITIALIZATION_TYPE", "AWS_ENDPOINT_URL_DYNAMODB", "AWS_LAMBDA_FUNCTION_NAME"}}, &got[i])
			})
		}
		wg.Wait()
		for i := range n {
			if errs[i] != nil {
				t.Fatalf("order %d: %v", i, errs[i])
			}
			r := got[i]
			if r.Env["AWS_LAMBDA_INITIALIZATION_TYPE"] != "on-demand" || r.Env["AWS_ENDPOINT_URL_DYNAMODB"] != w.kit.Endpoint.URL || r.Env["AWS_LAMBDA_FUNCTION_NAME"] != "orders" {
				t.Errorf("order %d: the function saw %v", i, r.Env)
			}
			if runs := w.runs(t, r.ID); len(runs) != 1 || runs[0] != r.Run {
				t.Errorf("order %d: committed runs %v, answered %s", i, runs, r.Run)
			}
		}
	})

	// A commit held past the timeout and never applied: the invocation
	// times out (a typed error); on standard Lambda the record is free at
	// the deadline plus the lease margin, so a retry then runs the order
	// once. (Remove AWS_LAMBDA_INITIALIZATION_TYPE from rie.Environment and
	// this fails: the retry is refused as in progress, as the next subtest
	// shows.)
	t.Run("commit held past the timeout, retry takes over", func(t *testing.T) {
		t.Parallel()
		w := newWorld(t)
		hold, url := rie.HoldEndpoint(t, w.kit.Endpoint.URL)
		fn := rie.Run(t, rie.Options{RIE: bin, Bootstrap: boot, Name: "orders", Timeout: heldTimeout, DynamoDBEndpoint: url, Env: w.env})
		warm(t, fn)
		hold.Add(rie.HoldRule{Op: "TransactWriteItems", Contains: "held-1"})
		start := time.Now()
		err := rie.InvokeJSON(t.Context(), fn, order{ID: "held-1"}, nil)
		var fe *rie.FunctionError
		if !errors.Is(err, rie.ErrTimeout) || !errors.As(err, &fe) || fe.Type != rie.TimedOutType {
			t.Fatalf("held commit: %v, want a timeout", err)
		}
		hold.ReleaseAll()
		if runs := w.runs(t, "held-1"); len(runs) != 0 {
			t.Fatalf("the held commit was applied: %v", runs)
		}
		r := retryUntil(t, fn, order{ID: "held-1"}, start.Add(fn.Timeout()+leaseMargin+5*time.Second))
		if runs := w.runs(t, "held-1"); len(runs) != 1 || runs[0] != r.Run {
			t.Errorf("after the retry: committed runs %v, answered %s", runs, r.Run)
		}
	})

	// The pitfall: without AWS_LAMBDA_INITIALIZATION_TYPE (the emulator
	// does not set it) the library cannot tell Lambda from a container,
	// renews, and holds the timed-out attempt's record for MaxRunTime.
	t.Run("without the initialization type the record is held", func(t *testing.T) {
		t.Parallel()
		w := newWorld(t)
		env := map[string]string{"AWS_LAMBDA_INITIALIZATION_TYPE": ""}
		for k, v := range w.env {
			env[k] = v
		}
		hold, url := rie.HoldEndpoint(t, w.kit.Endpoint.URL)
		fn := rie.Run(t, rie.Options{RIE: bin, Bootstrap: boot, Name: "orders", Timeout: heldTimeout, DynamoDBEndpoint: url, Env: env})
		warm(t, fn)
		hold.Add(rie.HoldRule{Op: "TransactWriteItems", Contains: "held-2"})
		if err := rie.InvokeJSON(t.Context(), fn, order{ID: "held-2"}, nil); !errors.Is(err, rie.ErrTimeout) {
			t.Fatalf("held commit: %v, want a timeout", err)
		}
		hold.ReleaseAll()
		time.Sleep(fn.Timeout() + leaseMargin + time.Second)
		err := rie.InvokeJSON(t.Context(), fn, order{ID: "held-2"}, nil)
		if !errors.Is(err, rie.ErrFunction) || errors.Is(err, rie.ErrTimeout) {
			t.Fatalf("retry past the deadline and margin: %v, want the in-progress refusal", err)
		}
		t.Logf("retry refused as expected: %v", err)
	})

	// A commit that lands after the timeout (DynamoDB finishes a write
	// whose client went away): held in the kit's proxy, then applied. The
	// invocation timed out, yet the order is done: a retry replays its
	// receipt and runs nothing.
	t.Run("commit lands after the timeout, retry replays", func(t *testing.T) {
		t.Parallel()
		w := newWorld(t)
		proxy := w.kit.Endpoint.RequireProxy(t)
		fn := rie.Run(t, rie.Options{RIE: bin, Bootstrap: boot, Name: "orders", Timeout: heldTimeout, DynamoDBEndpoint: w.kit.Endpoint.URL, Env: w.env})
		warm(t, fn)
		release := make(chan struct{})
		proxy.Inject(ddbtest.Rule{Op: "TransactWriteItems", Times: 1, Until: release,
			Match: func(body []byte) bool { return bytes.Contains(body, []byte("late-1")) }})
		if err := rie.InvokeJSON(t.Context(), fn, order{ID: "late-1"}, nil); !errors.Is(err, rie.ErrTimeout) {
			close(release)
			t.Fatalf("held commit: %v, want a timeout", err)
		}
		close(release)
		var runs []string
		for deadline := time.Now().Add(10 * time.Second); len(runs) == 0 && time.Now().Before(deadline); {
			time.Sleep(50 * time.Millisecond)
			runs = w.runs(t, "late-1")
		}
		if len(runs) != 1 {
			t.Fatalf("the released commit was not applied")
		}
		var r receipt
		if err := rie.InvokeJSON(t.Context(), fn, order{ID: "late-1"}, &r); err != nil {
			t.Fatal(err)
		}
		if r.Run != runs[0] {
			t.Errorf("retry answered run %s, the committed run is %s", r.Run, runs[0])
		}
	})
}

// retryUntil invokes the order until it succeeds or the deadline passes;
// only the in-progress refusal is retried.
func retryUntil(t *testing.T, fn rie.Invoker, o order, deadline time.Time) receipt {
	t.Helper()
	for {
		var r receipt
		err := rie.InvokeJSON(t.Context(), fn, o, &r)
		if err == nil {
			return r
		}
		if errors.Is(err, rie.ErrTimeout) || !errors.Is(err, rie.ErrFunction) || time.Now().After(deadline) {
			t.Fatalf("retry of %s: %v", o.ID, err)
		}
		sleep(t.Context(), 200*time.Millisecond)
	}
}

func sleep(ctx context.Context, d time.Duration) {
	select {
	case <-ctx.Done():
	case <-time.After(d):
	}
}
