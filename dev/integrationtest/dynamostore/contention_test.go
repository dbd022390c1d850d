package dynamostore_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/lambdaidem/lambdaidem/ddbtest"
	"github.com/lambdaidem/lambdaidem/dynamostore"
	"github.com/lambdaidem/lambdaidem/lambdaidem"
)

// Transaction conflicts as DynamoDB reports them (Developer Guide,
// "Transaction conflict handling in DynamoDB"): a single-item write on an
// item of a transaction in flight gets TransactionConflictException, which
// the SDK does not retry, and a transaction meeting another write is
// cancelled with reason TransactionConflict. ddbtest's proxy produces both
// when a write is held in flight.

// patient lets the store retry conflicts until the deadline, so that a
// test of the retries does not depend on how short the random waits were.
func patient(o *dynamostore.Options) { o.ConflictRetries = 1000 }

// heldRecord is a world where attempt A holds the record "k" and a
// transaction that checks the record is held in flight until the returned
// release is called (or the test ends); it returns once the transaction is
// in flight, with the call counts reset. The hold does not depend on how
// fast the scheduler runs the test.
func heldRecord(t *testing.T) (*env, *ddbtest.Proxy, func()) {
	t.Helper()
	e := newEnv(t, patient)
	p := e.proxy(t)
	e.claim(t, "k", "A")
	release := p.HoldNext(t, "TransactWriteItems")
	go func() {
		_, _ = e.client.TransactWriteItems(context.Background(), &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{
			{ConditionCheck: &types.ConditionCheck{TableName: aws.String(e.table), Key: map[string]types.AttributeValue{"id": &types.AttributeValueMemberS{Value: "k"}},
				ConditionExpression: aws.String("attribute_exists(id)")}},
		}})
	}()
	waitUntil(t, "the held transaction to get in flight", func() bool { return p.InFlight() > 0 })
	p.ResetCalls()
	return e, p, release
}

// waitUntil polls cond, in real time, for at most 10s.
func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !cond(); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

// TestEveryWriteRetriesConflicts: every write of the store that meets a
// transaction in flight on the record retries it with backoff, then
// succeeds once the transaction is done; if the conflict outlasts its
// deadline it fails with ErrInProgress, never with an unclassified error.
func TestEveryWriteRetriesConflicts(t *testing.T) {
	fence := lambdaidem.Fence{Key: "k", Token: "A"}
	for _, c := range []struct {
		name string
		op   string // the DynamoDB call
		call func(ctx context.Context, e *env) (bool, error)
		want bool // the call's result once the conflict is over
	}{
		{"Claim", "UpdateItem", func(ctx context.Context, e *env) (bool, error) {
			_, ok, err := e.store.Claim(ctx, claimOf("k", "B"))
			return ok, err
		}, false}, // refused by A's live claim
		{"Commit", "PutItem", func(ctx context.Context, e *env) (bool, error) {
			_, ok, err := e.store.Commit(ctx, commitOf("k", "A"))
			return ok, err
		}, true},
		{"Transaction", "TransactWriteItems", func(ctx context.Context, e *env) (bool, error) {
			_, ok, err := e.store.Commit(ctx, commitOf("k", "A", e.order("a")))
			return ok, err
		}, true},
		{"Release", "DeleteItem", func(ctx context.Context, e *env) (bool, error) { return e.store.Release(ctx, fence) }, true},
		{"MarkExternal", "UpdateItem", func(ctx context.Context, e *env) (bool, error) { return e.store.MarkExternal(ctx, fence) }, true},
		{"Renew", "UpdateItem", func(ctx context.Context, e *env) (bool, error) {
			return e.store.Renew(ctx, lambdaidem.Renewal{Key: "k", Token: "A", Now: t0, LeaseUntil: t0.Add(2 * time.Minute), ExpiresAt: t0.Add(horizon)})
		}, true},
		{"MarkUnknown", "UpdateItem", func(ctx context.Context, e *env) (bool, error) {
			return e.store.MarkUnknown(ctx, fence)
		}, true},
	} {
		t.Run(c.name+"/outlasted", func(t *testing.T) {
			e, p, _ := heldRecord(t) // held past the deadline
			ctx, cancel := context.WithTimeout(context.Background(), time.Second)
			defer cancel()
			ok, err := c.call(ctx, e)
			if ok || !errors.Is(err, lambdaidem.ErrInProgress) || errors.Is(err, lambdaidem.ErrStoreUnavailable) {
				t.Fatalf("%s during a conflict past its deadline = %v, %v; want ErrInProgress", c.name, ok, err)
			}
			if n := p.Count(c.op); n < 1 {
				t.Fatalf("%s never sent", c.op)
			}
		})
		t.Run(c.name+"/retried", func(t *testing.T) {
			e, p, release := heldRecord(t)
			type result struct {
				ok  bool
				err error
			}
			res := make(chan result, 1)
			go func() {
				ok, err := c.call(context.Background(), e)
				res <- result{ok, err}
			}()
			// A second send while the transaction is still held: the first
			// met the conflict, and the call retries it.
			for end := time.Now().Add(10 * time.Second); p.Count(c.op) < 2; {
				select {
				case r := <-res:
					t.Fatalf("%s during the conflict = %v, %v after %d sends; want it retried until the conflict ends", c.name, r.ok, r.err, p.Count(c.op))
				case <-time.After(time.Millisecond):
				}
				if time.Now().After(end) {
					t.Fatalf("%s sent %d times in 10s; want it to have met the conflict and retried", c.op, p.Count(c.op))
				}
			}
			release()
			if r := <-res; r.ok != c.want || r.err != nil {
				t.Fatalf("%s after a conflict = %v, %v; want %v, nil", c.name, r.ok, r.err, c.want)
			}
		})
	}
}

// TestCommitOutlastsConflictRetries: with a deadline, a commit cancelled
// for TransactionConflict keeps retrying past Options.ConflictRetries, as
// long as the deadline allows, each resend under a new ClientRequestToken
// (a cancellation is a definite "nothing applied"; what DynamoDB answers a
// cancelled token again is undocumented).
func TestCommitOutlastsConflictRetries(t *testing.T) {
	e := newEnv(t, func(o *dynamostore.Options) {
		o.ConflictRetries = 2
		o.ConflictBackoff = time.Millisecond
		o.ConflictMaxBackoff = 2 * time.Millisecond
	})
	p := e.proxy(t)
	e.claim(t, "k", "A")
	var mu sync.Mutex
	tokens := map[string]int{}
	p.Inject(ddbtest.Rule{Op: "TransactWriteItems", Fault: ddbtest.TransactionConflict, Times: 10, Match: func(body []byte) bool {
		mu.Lock()
		defer mu.Unlock()
		tokens[between(string(body), `"ClientRequestToken":"`, `"`)]++
		return true
	}})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if _, ok, err := e.store.Commit(ctx, commitOf("k", "A", e.order("a"))); !ok || err != nil {
		t.Fatalf("Commit after 10 conflicts = %v, %v; want committed", ok, err)
	}
	if n := p.Count("TransactWriteItems"); n != 11 || !e.written(t, "a") {
		t.Fatalf("%d transactions sent, effect written %v; want 11 and written", n, e.written(t, "a"))
	}
	if len(tokens) != 10 {
		t.Fatalf("ClientRequestTokens sent: %v; want a new one after every cancellation", tokens)
	}
}

// TestErroredClaimReleased: the claim is applied, its response lost, and
// every SDK retry meets a 5xx. The caller gets ErrStoreUnavailable (503),
// the core releases the claim (fenced on its token), and a retry one
// second later runs instead of meeting a lease nobody holds.
func TestErroredClaimReleased(t *testing.T) {
	e := newEnv(t)
	p := e.proxy(t)
	p.Inject(ddbtest.Rule{Op: "UpdateItem", Fault: ddbtest.LostResponse, Times: 1})
	p.Inject(ddbtest.Rule{Op: "UpdateItem", Fault: ddbtest.InternalServerError, Times: 2})
	clk := newClock()
	g := e.guard(t, clk)
	runs := 0
	handler := func(ctx context.Context) (string, error) {
		runs++
		return "done", dynamostore.Stage(ctx, *e.order("o").Put)
	}
	_, err := lambdaidem.Do(context.Background(), g, call("k"), handler)
	var se *lambdaidem.StoreError
	if !errors.Is(err, lambdaidem.ErrStoreUnavailable) || !errors.As(err, &se) || runs != 0 {
		t.Fatalf("Do = %v after %d runs; want ErrStoreUnavailable, handler not run", err, runs)
	}
	if n := p.Count("UpdateItem"); n != 3 {
		t.Fatalf("claim sent %d times; want 3 (the SDK's attempts)", n)
	}
	if rec := e.record(t, recordKey("k")); rec != nil {
		t.Fatalf("record after the errored claim: %v; want it released", rec)
	}
	clk.Advance(time.Second)
	out, err := lambdaidem.Do(context.Background(), g, call("k"), handler)
	if err != nil || out != "done" || runs != 1 || !e.written(t, "o") {
		t.Fatalf("retry a second later = %q, %v after %d runs; want it to run and commit", out, err, runs)
	}
}

// TestDuplicateMeetsHeldCommit: a duplicate whose claim lands while the
// owner's commit transaction is in flight meets TransactionConflictException;
// it retries and replays the committed outcome, or, when its deadline is
// too short, answers ErrInProgress: never a store failure.
func TestDuplicateMeetsHeldCommit(t *testing.T) {
	for _, c := range []struct {
		name     string
		deadline time.Duration
		want     error // nil: the replay
	}{
		{"retried to the replay", 10 * time.Second, nil},
		{"deadline first", time.Second, lambdaidem.ErrInProgress},
	} {
		t.Run(c.name, func(t *testing.T) {
			e := newEnv(t, patient)
			p := e.proxy(t)
			release := p.HoldNext(t, "TransactWriteItems")
			g := e.guard(t, nil)
			owner := make(chan error, 1)
			committing := make(chan struct{})
			go func() {
				_, err := lambdaidem.Do(context.Background(), g, call("k"), func(ctx context.Context) (string, error) {
					defer close(committing)
					return "receipt", dynamostore.Stage(ctx, *e.order("o").Put)
				})
				owner <- err
			}()
			<-committing
			waitUntil(t, "the owner's commit to get in flight", func() bool { return p.InFlight() > 0 })
			p.ResetCalls()
			if c.want == nil {
				// Held until the duplicate's claim met it and was sent again.
				go func() {
					for end := time.Now().Add(10 * time.Second); p.Count("UpdateItem") < 2 && time.Now().Before(end); {
						time.Sleep(time.Millisecond)
					}
					release()
				}()
			}
			ctx, cancel := context.WithTimeout(context.Background(), c.deadline)
			defer cancel()
			if c.want != nil {
				// Held past the duplicate's deadline.
				go func() { <-ctx.Done(); release() }()
			}
			out, err := lambdaidem.Do(ctx, g, call("k"), func(ctx context.Context) (string, error) {
				t.Error("the duplicate ran the handler")
				return "", nil
			})
			if c.want == nil && (err != nil || out != "receipt") || c.want != nil && !errors.Is(err, c.want) {
				t.Fatalf("duplicate = %q, %v; want %v (nil: the replay)", out, err, c.want)
			}
			var se *lambdaidem.StoreError
			if errors.As(err, &se) {
				t.Fatalf("duplicate got a store failure: %v", err)
			}
			if err := <-owner; err != nil {
				t.Fatalf("owner: %v", err)
			}
			if n := e.orderCount(t); n != 1 {
				t.Fatalf("%d business items; want 1", n)
			}
		})
	}
}

// TestHotKey: 50 contenders claim one key in a tight loop while its owner
// commits a staged business write. Every commit is held in flight (the
// contenders' claims meet TransactionConflictException), and a share of the
// contenders' claims is held too (the owner's transaction meets them and is
// cancelled for TransactionConflict). In every trial the owner commits,
// exactly one business item is written, and every contender ends with the
// owner's outcome, having seen nothing but ErrInProgress on the way.
func TestHotKey(t *testing.T) {
	const trials, contenders = 20, 50
	e := newEnv(t)
	p := e.proxy(t)
	p.Inject(ddbtest.Rule{Op: "TransactWriteItems", Hold: 5 * time.Millisecond})
	p.Inject(ddbtest.Rule{Op: "UpdateItem", Hold: 2 * time.Millisecond, Match: func([]byte) bool { return rand.IntN(16) == 0 }})
	g := e.guard(t, nil)
	// The owner retries its commit for as long as FinishTimeout allows; on
	// two shared cores under the race detector a trial may need longer than
	// the default 5s to find a moment free of held claims.
	ownerGuard := e.guard(t, nil, func(o *lambdaidem.Options) { o.FinishTimeout = time.Minute })
	var cancelled, maxTries, inProgress int
	for trial := range trials {
		key := fmt.Sprintf("hot-%d", trial)
		want := "receipt " + key
		p.ResetCalls()
		hammering := make(chan struct{})
		started := make(chan struct{})
		owner := make(chan error, 1)
		go func() {
			_, err := lambdaidem.Do(context.Background(), ownerGuard, call(key), func(ctx context.Context) (string, error) {
				close(started)
				<-hammering
				return want, dynamostore.Stage(ctx, *e.order("order-" + key).Put)
			})
			owner <- err
		}()
		<-started
		var refused atomic.Int64
		var wg sync.WaitGroup
		for i := range contenders {
			wg.Go(func() {
				for try := 0; ; try++ {
					ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
					out, err := lambdaidem.Do(ctx, g, call(key), func(ctx context.Context) (string, error) {
						return "contender ran", nil
					})
					cancel()
					switch {
					case err == nil && out == want:
						return
					case errors.Is(err, lambdaidem.ErrInProgress) && try < 100_000:
						refused.Add(1)
						continue
					}
					t.Errorf("trial %d contender %d: %q, %v; want the owner's outcome or ErrInProgress", trial, i, out, err)
					return
				}
			})
		}
		time.Sleep(20 * time.Millisecond) // the contenders are at it
		close(hammering)
		wg.Wait()
		if err := <-owner; err != nil {
			t.Fatalf("trial %d: the owner did not commit: %v", trial, err)
		}
		if t.Failed() {
			t.FailNow()
		}
		tries := p.Count("TransactWriteItems")
		t.Logf("trial %d: %d commit tries, %d claims, %d refusals", trial, tries, p.Count("UpdateItem"), refused.Load())
		cancelled += tries - 1
		maxTries = max(maxTries, tries)
		inProgress += int(refused.Load())
	}
	if n := e.orderCount(t); n != trials {
		t.Fatalf("%d business items after %d trials; want one each", n, trials)
	}
	t.Logf("%d trials × %d contenders: owner committed every time; its commits cancelled %d times (at most %d tries in one trial); contenders answered in progress %d times",
		trials, contenders, cancelled, maxTries, inProgress)
	if cancelled == 0 {
		t.Fatal("no commit met a conflict: the test exercised nothing")
	}
}
