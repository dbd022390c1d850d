package dynamostore_test

import (
	"context"
	"encoding/json"
	"sync"
	"testing"

	"github.com/lambdaidem/lambdaidem/ddbtest"
	"github.com/lambdaidem/lambdaidem/dynamostore"
	"github.com/lambdaidem/lambdaidem/lambdaidem"
)

// stageOrder stages the order id in the invocation of ctx.
func stageOrder(ctx context.Context, e *env, id string) error {
	return dynamostore.Stage(ctx, *e.order(id).Put)
}

// tokenLog records the ClientRequestToken of every TransactWriteItems the
// proxy sees, as a Rule's Match (which faults nothing when given NoFault).
type tokenLog struct {
	mu     sync.Mutex
	tokens []string
}

func (l *tokenLog) match(body []byte) bool {
	var in struct{ ClientRequestToken string }
	_ = json.Unmarshal(body, &in)
	l.mu.Lock()
	l.tokens = append(l.tokens, in.ClientRequestToken)
	l.mu.Unlock()
	return false
}

func (l *tokenLog) distinct() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	seen := map[string]bool{}
	for _, t := range l.tokens {
		seen[t] = true
	}
	return len(seen)
}

// Commit resends never depend on token memory. AWS documents what a
// TransactWriteItems repeated under the ClientRequestToken of one that
// succeeded returns, not one that was cancelled. With the proxy
// remembering cancellations under their token (as a hostile DynamoDB
// might), a commit that met transaction conflicts, or throttling, still
// commits: each resend after a cancellation carries a new token.
func TestCommitResendsDoNotDependOnTokenMemory(t *testing.T) {
	for _, fault := range []ddbtest.Fault{ddbtest.TransactionConflict, ddbtest.TransactionThrottled} {
		t.Run(fault.String(), func(t *testing.T) {
			e := newEnv(t)
			p := e.proxy(t)
			p.SetRememberCancellations(true)
			var log tokenLog
			p.Inject(ddbtest.Rule{Op: "TransactWriteItems", Match: log.match})
			p.Inject(ddbtest.Rule{Op: "TransactWriteItems", Fault: fault, Times: 2})
			e.claim(t, "k", "A")
			if _, ok, err := e.store.Commit(context.Background(), commitOf("k", "A", e.order("o1"))); !ok || err != nil {
				t.Fatalf("Commit after 2 cancellations = %v, %v; want committed", ok, err)
			}
			if !e.written(t, "o1") {
				t.Fatal("the staged order was not written")
			}
			if n := log.distinct(); n != 3 {
				t.Fatalf("%d distinct tokens over 3 sends; want a new one after each cancellation", n)
			}
		})
	}
}

// TestOwnLostCommitWithTokenMemory: a commit cancelled once (a new token
// follows), whose next send applies and loses its answer, while the proxy
// both remembers cancellations and (the emulator's departure) runs a
// replayed token again: the SDK's resend of that send fails the fence, the
// store reads the record, and ownLostCommit recognizes the commit's own
// success: the outcome bytes are the ones every send carried.
func TestOwnLostCommitWithTokenMemory(t *testing.T) {
	e := newEnv(t)
	p := e.proxy(t)
	p.SetRememberCancellations(true)
	p.SetDepartures(ddbtest.Departures{TokenReplayCancelled: true})
	p.Inject(ddbtest.Rule{Op: "TransactWriteItems", Fault: ddbtest.TransactionConflict, Times: 1})
	p.Inject(ddbtest.Rule{Op: "TransactWriteItems", Fault: ddbtest.LostResponse, Times: 1}) // rules match in order: this one sees the second send
	clk := newClock()
	var commits, replays int
	g := e.guard(t, clk, func(o *lambdaidem.Options) {
		o.Hooks.OnCommit = func(context.Context, lambdaidem.Event) { commits++ }
		o.Hooks.OnReplay = func(context.Context, lambdaidem.Event) { replays++ }
	})
	out, err := lambdaidem.Do(context.Background(), g, call("k"), func(ctx context.Context) (string, error) {
		return "ok", stageOrder(ctx, e, "o1")
	})
	if err != nil || out != "ok" || commits != 1 || replays != 0 {
		t.Fatalf("Do = %q, %v (commits %d, replays %d); want the commit recognized as its own", out, err, commits, replays)
	}
	if !e.written(t, "o1") || e.orderCount(t) != 1 {
		t.Fatalf("orders = %d; want exactly o1", e.orderCount(t))
	}
}

// TestIdempotentParameterMismatchIsAnUnknownOutcome: DynamoDB answers
// IdempotentParameterMismatchException to a token an earlier request with
// other parameters used (a serializer that orders a map differently): that
// earlier request may have applied. The commit sends again under a new
// token, its fence decides, and it never fails with a store error.
func TestIdempotentParameterMismatchIsAnUnknownOutcome(t *testing.T) {
	for _, applied := range []bool{false, true} {
		name := "nothing applied"
		if applied {
			name = "an earlier send applied"
		}
		t.Run(name, func(t *testing.T) {
			e := newEnv(t)
			p := e.proxy(t)
			if applied {
				// The first send applies and loses its answer; the SDK's
				// resend is told the token is another request's.
				p.Inject(ddbtest.Rule{Op: "TransactWriteItems", Fault: ddbtest.LostResponse, Times: 1})
				p.Inject(ddbtest.Rule{Op: "TransactWriteItems", Fault: ddbtest.IdempotentParameterMismatch, Times: 1}) // the SDK's resend
			} else {
				p.Inject(ddbtest.Rule{Op: "TransactWriteItems", Fault: ddbtest.IdempotentParameterMismatch, Times: 1})
			}
			clk := newClock()
			g := e.guard(t, clk)
			out, err := lambdaidem.Do(context.Background(), g, call("k"), func(ctx context.Context) (string, error) {
				return "ok", stageOrder(ctx, e, "o1")
			})
			if err != nil || out != "ok" {
				t.Fatalf("Do = %q, %v; want committed (or recognized as its own)", out, err)
			}
			if e.orderCount(t) != 1 {
				t.Fatalf("orders = %d; want 1", e.orderCount(t))
			}
		})
	}
}
