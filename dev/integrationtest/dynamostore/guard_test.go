package dynamostore_test

import (
	"context"
	"errors"
	"fmt"
	"github.com/lambdaidem/lambdaidem/internal/testclock"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/lambdaidem/lambdaidem/ddbtest"
	"github.com/lambdaidem/lambdaidem/dynamostore"
	"github.com/lambdaidem/lambdaidem/lambdaidem"
)

func newClock() *testclock.Clock { return testclock.New(time.Unix(1_800_000_000, 0)) }

const horizon = time.Hour

func (e *env) guard(t testing.TB, clk *testclock.Clock, optFns ...func(*lambdaidem.Options)) *lambdaidem.Guard {
	t.Helper()
	fns := append([]func(*lambdaidem.Options){func(o *lambdaidem.Options) {
		o.RetryHorizon = horizon
		o.Lease = time.Minute
		// Standard Lambda, which stops a handler at its deadline; tests of
		// renewing owners set RenewAlways.
		o.Renew = lambdaidem.RenewNever
		if clk != nil {
			o.Now = clk.Now
		}
	}}, optFns...)
	g, err := lambdaidem.New(e.store, fns...)
	if err != nil {
		t.Fatalf("lambdaidem.New: %v", err)
	}
	return g
}

func call(key string) lambdaidem.Call[string] {
	return lambdaidem.Call[string]{Operation: "CreateOrder", Key: key, Fingerprint: "fp-" + key}
}

func recordKey(key string) string { return lambdaidem.RecordKey("lambdaidem", "", "CreateOrder", key) }

var modes = []lambdaidem.Mode{lambdaidem.ClaimFirst, lambdaidem.Optimistic}

// TestContenders: 50 synchronized contenders on one key, in each mode.
// Exactly one business item is written and one outcome committed; every
// contender gets that outcome or ErrInProgress.
func TestContenders(t *testing.T) {
	for _, mode := range modes {
		t.Run(mode.String(), func(t *testing.T) {
			e := newEnv(t)
			g := e.guard(t, nil, func(o *lambdaidem.Options) { o.Mode = mode })
			const n = 50
			start := make(chan struct{})
			var ran atomic.Int32
			outs := make([]string, n)
			errs := make([]error, n)
			var wg sync.WaitGroup
			for i := range n {
				wg.Go(func() {
					<-start
					outs[i], errs[i] = lambdaidem.Do(context.Background(), g, call("k"), func(ctx context.Context) (string, error) {
						ran.Add(1)
						if err := dynamostore.Stage(ctx, *e.order("order-k").Put); err != nil {
							return "", err
						}
						time.Sleep(10 * time.Millisecond)
						return "receipt from contender " + strconv.Itoa(i), nil
					})
				})
			}
			close(start)
			wg.Wait()

			outcomes := map[string]int{}
			inProgress := 0
			for i, err := range errs {
				switch {
				case err == nil:
					outcomes[outs[i]]++
				case errors.Is(err, lambdaidem.ErrInProgress):
					inProgress++
				default:
					t.Errorf("contender %d: %v; want the outcome or ErrInProgress", i, err)
				}
			}
			if len(outcomes) != 1 {
				t.Fatalf("contenders got %d different outcomes %v; want one", len(outcomes), outcomes)
			}
			if got := e.orderCount(t); got != 1 {
				t.Fatalf("%d business items written; want 1", got)
			}
			rec, err := e.store.Get(context.Background(), recordKey("k"), time.Now())
			if err != nil || rec.Status != lambdaidem.StatusCompleted {
				t.Fatalf("record = %+v, %v; want completed", rec, err)
			}
			for out := range outcomes {
				if !strings.Contains(string(rec.Outcome), out) {
					t.Fatalf("stored outcome %s; want the one every contender got, %q", rec.Outcome, out)
				}
			}
			if mode == lambdaidem.ClaimFirst && ran.Load() != 1 {
				t.Fatalf("claim-first ran the handler %d times; want 1", ran.Load())
			}
			t.Logf("%s: handler ran %d times, %d contenders got the outcome, %d got ErrInProgress", mode, ran.Load(), n-inProgress, inProgress)
		})
	}
}

// TestLeaseTakeover: A claims; its lease lapses; B takes over. A's late
// commit is refused and A's business item is not written: A gets B's
// outcome if B completed, ErrLeaseLost if B is still running.
func TestLeaseTakeover(t *testing.T) {
	for _, bDone := range []bool{true, false} {
		t.Run(fmt.Sprintf("B completed %v", bDone), func(t *testing.T) {
			e := newEnv(t)
			clk := newClock()
			g := e.guard(t, clk)
			aClaimed, aGo := make(chan struct{}), make(chan struct{})
			bClaimed, bGo := make(chan struct{}), make(chan struct{})
			var aOut string
			var aErr error
			done := make(chan struct{})
			go func() {
				defer close(done)
				aOut, aErr = lambdaidem.Do(context.Background(), g, call("k"), func(ctx context.Context) (string, error) {
					close(aClaimed)
					<-aGo
					return "A", dynamostore.Stage(ctx, *e.order("A").Put)
				})
			}()
			<-aClaimed
			clk.Advance(2 * time.Minute) // A's one-minute lease lapses
			bDoneCh := make(chan struct{})
			var bOut string
			var bErr error
			go func() {
				defer close(bDoneCh)
				bOut, bErr = lambdaidem.Do(context.Background(), g, call("k"), func(ctx context.Context) (string, error) {
					close(bClaimed)
					<-bGo
					return "B", dynamostore.Stage(ctx, *e.order("B").Put)
				})
			}()
			<-bClaimed
			if bDone {
				close(bGo)
				<-bDoneCh
				if bErr != nil || bOut != "B" {
					t.Fatalf("B = %q, %v; want B's own outcome", bOut, bErr)
				}
			}
			close(aGo)
			<-done
			if bDone {
				if aErr != nil || aOut != "B" {
					t.Fatalf("A's late commit = %q, %v; want B's outcome replayed", aOut, aErr)
				}
			} else {
				if !errors.Is(aErr, lambdaidem.ErrLeaseLost) {
					t.Fatalf("A's late commit = %q, %v; want ErrLeaseLost", aOut, aErr)
				}
				close(bGo)
				<-bDoneCh
			}
			if e.written(t, "A") || !e.written(t, "B") {
				t.Fatalf("orders A written %v, B written %v; want only B", e.written(t, "A"), e.written(t, "B"))
			}
			if rec := e.record(t, recordKey("k")); num(rec, "attempts") != "2" {
				t.Fatalf("record attempts = %s; want 2 (the takeover counted)", num(rec, "attempts"))
			}
		})
	}
}

// TestExpiredRecordReclaimed: a completed record whose expiration passed
// (DynamoDB has not deleted it yet) is claimed afresh and the handler runs
// again; expiration is completion time + horizon, in Unix seconds.
func TestExpiredRecordReclaimed(t *testing.T) {
	e := newEnv(t)
	clk := newClock()
	g := e.guard(t, clk)
	runs := 0
	handler := func(context.Context) (string, error) { runs++; return "run " + strconv.Itoa(runs), nil }
	ctx := context.Background()

	first := clk.Now()
	if out, err := lambdaidem.Do(ctx, g, call("k"), handler); err != nil || out != "run 1" {
		t.Fatalf("first = %q, %v", out, err)
	}
	rec := e.record(t, recordKey("k"))
	if got, want := num(rec, "expiration"), strconv.FormatInt(first.Add(horizon).Unix(), 10); got != want {
		t.Fatalf("expiration = %s; want completion + horizon = %s", got, want)
	}
	clk.Advance(horizon - time.Second)
	if out, err := lambdaidem.Do(ctx, g, call("k"), handler); err != nil || out != "run 1" {
		t.Fatalf("duplicate before expiry = %q, %v; want the replay of run 1", out, err)
	}
	clk.Advance(2 * time.Second)
	second := clk.Now()
	if out, err := lambdaidem.Do(ctx, g, call("k"), handler); err != nil || out != "run 2" {
		t.Fatalf("after expiry = %q, %v; want the handler to run again", out, err)
	}
	rec = e.record(t, recordKey("k"))
	if got, want := num(rec, "expiration"), strconv.FormatInt(second.Add(horizon).Unix(), 10); got != want {
		t.Fatalf("new expiration = %s; want %s", got, want)
	}
	if num(rec, "attempts") != "1" || num(rec, "created_at") != strconv.FormatInt(second.UnixMilli(), 10) {
		t.Fatalf("reclaimed record attempts %s, created_at %s; want a fresh 1, created %d", num(rec, "attempts"), num(rec, "created_at"), second.UnixMilli())
	}
}

// TestLostCommitResponse: the commit is applied but its response is lost;
// the SDK retries it, and the attempt recognizes its own success. One
// business item; the handler ran once; a duplicate replays.
func TestLostCommitResponse(t *testing.T) {
	for _, c := range []struct {
		name    string
		op      string // the commit's operation
		effects bool
		mode    lambdaidem.Mode
		dep     ddbtest.Departures
		fault   ddbtest.Fault
	}{
		{"PutItem", "PutItem", false, lambdaidem.ClaimFirst, ddbtest.Departures{}, ddbtest.LostResponse},
		{"PutItem/connection", "PutItem", false, lambdaidem.ClaimFirst, ddbtest.Departures{}, ddbtest.LostConnection},
		{"PutItem/GetItem fallback", "PutItem", false, lambdaidem.ClaimFirst, ddbtest.Departures{OldItems: ddbtest.OldItemsNever}, ddbtest.LostResponse},
		{"PutItem/optimistic", "PutItem", false, lambdaidem.Optimistic, ddbtest.Departures{}, ddbtest.LostResponse},
		{"Transaction/token replay", "TransactWriteItems", true, lambdaidem.ClaimFirst, ddbtest.Departures{}, ddbtest.LostResponse},
		{"Transaction/connection", "TransactWriteItems", true, lambdaidem.ClaimFirst, ddbtest.Departures{}, ddbtest.LostConnection},
		{"Transaction/no token replay", "TransactWriteItems", true, lambdaidem.ClaimFirst, ddbtest.Departures{TokenReplayCancelled: true}, ddbtest.LostResponse},
		{"Transaction/emulator", "TransactWriteItems", true, lambdaidem.ClaimFirst, ddbtest.Emulator(), ddbtest.LostResponse},
		{"Transaction/optimistic", "TransactWriteItems", true, lambdaidem.Optimistic, ddbtest.Departures{}, ddbtest.LostResponse},
		{"Transaction/optimistic emulator", "TransactWriteItems", true, lambdaidem.Optimistic, ddbtest.Emulator(), ddbtest.LostResponse},
	} {
		t.Run(c.name, func(t *testing.T) {
			e := newEnv(t)
			p := e.proxy(t)
			p.SetDepartures(c.dep)
			p.Inject(ddbtest.Rule{Op: c.op, Fault: c.fault, Times: 1})
			g := e.guard(t, nil, func(o *lambdaidem.Options) { o.Mode = c.mode })
			runs := 0
			handler := func(ctx context.Context) (string, error) {
				runs++
				if c.effects {
					if err := dynamostore.Stage(ctx, *e.order("o1").Put); err != nil {
						return "", err
					}
				}
				return "done", nil
			}
			out, err := lambdaidem.Do(context.Background(), g, call("k"), handler)
			if err != nil || out != "done" {
				t.Fatalf("Do = %q, %v; want the attempt's own outcome", out, err)
			}
			if n := p.Count(c.op); n != 2 {
				t.Fatalf("%s sent %d times; want 2 (the lost one and the SDK's retry)", c.op, n)
			}
			// An optimistic duplicate runs the handler body, then replays.
			wantRuns := map[lambdaidem.Mode]int{lambdaidem.ClaimFirst: 1, lambdaidem.Optimistic: 2}[c.mode]
			if out, err := lambdaidem.Do(context.Background(), g, call("k"), handler); err != nil || out != "done" || runs != wantRuns {
				t.Fatalf("duplicate = %q, %v after %d runs; want a replay after %d runs", out, err, runs, wantRuns)
			}
			if want := map[bool]int{true: 1, false: 0}[c.effects]; e.orderCount(t) != want {
				t.Fatalf("%d business items; want %d", e.orderCount(t), want)
			}
		})
	}
}

// TestBusinessConditionFails: a staged write whose condition fails cancels
// the commit; the caller gets a typed error naming the item, nothing is
// written, and the claim is released (the record is absent).
func TestBusinessConditionFails(t *testing.T) {
	for _, mode := range modes {
		t.Run(mode.String(), func(t *testing.T) {
			e := newEnv(t)
			g := e.guard(t, nil, func(o *lambdaidem.Options) { o.Mode = mode })
			_, err := lambdaidem.Do(context.Background(), g, call("k"), func(ctx context.Context) (string, error) {
				if err := dynamostore.Stage(ctx, *e.order("new").Put); err != nil {
					return "", err
				}
				return "done", dynamostore.Stage(ctx, *e.missingOrder("customer-7").ConditionCheck)
			})
			var cfe *dynamostore.ConditionFailedError
			var rejected *lambdaidem.RejectedError
			if !errors.As(err, &cfe) || !errors.As(err, &rejected) || !errors.Is(err, lambdaidem.ErrConditionFailed) || !errors.Is(err, lambdaidem.ErrEffectRejected) {
				t.Fatalf("Do = %v; want a *RejectedError over a *ConditionFailedError, matching ErrConditionFailed and ErrEffectRejected", err)
			}
			if cfe.Index != 1 || cfe.Action != "ConditionCheck" || cfe.Table != e.orders || !strings.Contains(err.Error(), `pk="customer-7"`) {
				t.Fatalf("error = %+v (%v); want the condition check on %s customer-7, effect 1", cfe, err, e.orders)
			}
			if e.written(t, "new") {
				t.Fatal("the other staged write was written")
			}
			if rec := e.record(t, recordKey("k")); rec != nil {
				t.Fatalf("record after the failure = %v; want absent (released)", rec)
			}
		})
	}
}

// TestOutcomeTooLarge: an outcome over the cap (on stored bytes: the
// outcome is incompressible) fails with
// ErrOutcomeTooLarge and the claim is released.
func TestOutcomeTooLarge(t *testing.T) {
	e := newEnv(t)
	g := e.guard(t, nil, func(o *lambdaidem.Options) { o.MaxOutcomeSize = 1000 })
	_, err := lambdaidem.Do(context.Background(), g, call("k"), func(ctx context.Context) (string, error) {
		return incompressible(2000), dynamostore.Stage(ctx, *e.order("o").Put)
	})
	if !errors.Is(err, lambdaidem.ErrOutcomeTooLarge) {
		t.Fatalf("Do = %v; want ErrOutcomeTooLarge", err)
	}
	if e.record(t, recordKey("k")) != nil || e.written(t, "o") {
		t.Fatal("want the record released and nothing written")
	}
}

// TestStoreUnavailable: throttling and 5xx that outlast the SDK's retries
// fail closed with ErrStoreUnavailable (the handler does not run), or, with
// FailOpen, run the handler without idempotency. At commit time the same
// faults fail the call and release the claim.
func TestStoreUnavailable(t *testing.T) {
	faults := []ddbtest.Fault{ddbtest.ProvisionedThroughputExceeded, ddbtest.Throttling, ddbtest.InternalServerError, ddbtest.ServiceUnavailable}
	for _, fault := range faults {
		t.Run(fault.String(), func(t *testing.T) {
			for _, failOpen := range []bool{false, true} {
				e := newEnv(t)
				p := e.proxy(t)
				remove := p.Inject(ddbtest.Rule{Op: "UpdateItem", Fault: fault})
				g := e.guard(t, nil, func(o *lambdaidem.Options) { o.FailOpen = failOpen })
				ran := false
				out, err := lambdaidem.Do(context.Background(), g, call("k"), func(context.Context) (string, error) { ran = true; return "done", nil })
				switch {
				case !failOpen && (!errors.Is(err, lambdaidem.ErrStoreUnavailable) || ran):
					t.Fatalf("fail closed: Do = %q, %v, ran %v; want ErrStoreUnavailable, not run", out, err, ran)
				case failOpen && (err != nil || out != "done"):
					t.Fatalf("fail open: Do = %q, %v; want the handler's outcome", out, err)
				}
				if n := p.Count("UpdateItem"); n != 3 {
					t.Fatalf("claim sent %d times; want 3 (the SDK's attempts)", n)
				}
				remove()
			}

			e := newEnv(t)
			p := e.proxy(t)
			p.Inject(ddbtest.Rule{Op: "TransactWriteItems", Fault: fault})
			g := e.guard(t, nil)
			_, err := lambdaidem.Do(context.Background(), g, call("k"), func(ctx context.Context) (string, error) {
				return "done", dynamostore.Stage(ctx, *e.order("o").Put)
			})
			if !errors.Is(err, lambdaidem.ErrStoreUnavailable) {
				t.Fatalf("commit: Do = %v; want ErrStoreUnavailable", err)
			}
			if e.record(t, recordKey("k")) != nil || e.written(t, "o") {
				t.Fatal("commit: want the claim released and nothing written")
			}
		})
	}
}

// TestContextCancelledMidHandler: the invocation is cancelled while the
// handler runs; the claim is still released (on a context that ignores the
// cancellation), so a retry runs again.
func TestContextCancelledMidHandler(t *testing.T) {
	e := newEnv(t)
	g := e.guard(t, nil)
	ctx, cancel := context.WithCancel(context.Background())
	_, err := lambdaidem.Do(ctx, g, call("k"), func(ctx context.Context) (string, error) {
		if err := dynamostore.Stage(ctx, *e.order("o").Put); err != nil {
			return "", err
		}
		cancel()
		<-ctx.Done()
		return "", ctx.Err()
	})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Do = %v; want the handler's context.Canceled", err)
	}
	if e.record(t, recordKey("k")) != nil || e.written(t, "o") {
		t.Fatal("want the record released and nothing written")
	}
	if out, err := lambdaidem.Do(context.Background(), g, call("k"), func(context.Context) (string, error) { return "retried", nil }); err != nil || out != "retried" {
		t.Fatalf("retry = %q, %v; want it to run", out, err)
	}
}

// TestInvalidEffectsRejectedBeforeSending: a commit with too many staged
// writes, or one on the idempotency record's own item, fails with a clear
// error before any transaction is sent, and the claim is released.
func TestInvalidEffectsRejectedBeforeSending(t *testing.T) {
	for _, c := range []struct {
		name  string
		stage func(ctx context.Context, e *env) error
		want  string
	}{
		{"TooMany", func(ctx context.Context, e *env) error {
			for i := range dynamostore.MaxEffects + 1 {
				if err := dynamostore.Stage(ctx, *e.order("o" + strconv.Itoa(i)).Put); err != nil {
					return err
				}
			}
			return nil
		}, "at most 99"},
		{"RecordItem", func(ctx context.Context, e *env) error {
			return dynamostore.Stage(ctx, types.Update{
				TableName:        aws.String(e.table),
				Key:              map[string]types.AttributeValue{"id": &types.AttributeValueMemberS{Value: recordKey("k")}},
				UpdateExpression: aws.String("SET note = :n"),
				ExpressionAttributeValues: map[string]types.AttributeValue{
					":n": &types.AttributeValueMemberS{Value: "x"},
				},
			})
		}, "own item"},
	} {
		t.Run(c.name, func(t *testing.T) {
			e := newEnv(t)
			p := e.proxy(t)
			g := e.guard(t, nil)
			_, err := lambdaidem.Do(context.Background(), g, call("k"), func(ctx context.Context) (string, error) {
				return "done", c.stage(ctx, e)
			})
			if !errors.Is(err, lambdaidem.ErrEffectRejected) || !errors.Is(err, dynamostore.ErrInvalidEffect) || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("Do = %v; want ErrEffectRejected and ErrInvalidEffect saying %q", err, c.want)
			}
			if n := p.Count("TransactWriteItems"); n != 0 {
				t.Fatalf("%d transactions sent; want none", n)
			}
			if e.record(t, recordKey("k")) != nil || e.orderCount(t) != 0 {
				t.Fatal("want the claim released and nothing written")
			}
		})
	}
}

// TestLostClaimResponse: the claim is applied but its response is lost;
// the SDK's retry is refused by the attempt's own record, which the core
// recognizes (in progress with its token), and the handler runs once.
func TestLostClaimResponse(t *testing.T) {
	for _, dep := range []ddbtest.Departures{{}, {OldItems: ddbtest.OldItemsNever}} {
		e := newEnv(t)
		p := e.proxy(t)
		p.SetDepartures(dep)
		p.Inject(ddbtest.Rule{Op: "UpdateItem", Fault: ddbtest.LostResponse, Times: 1})
		runs := 0
		out, err := lambdaidem.Do(context.Background(), e.guard(t, nil), call("k"), func(ctx context.Context) (string, error) {
			runs++
			return "done", dynamostore.Stage(ctx, *e.order("o").Put)
		})
		if err != nil || out != "done" || runs != 1 || !e.written(t, "o") {
			t.Fatalf("Do = %q, %v after %d runs; want the handler run once and committed", out, err, runs)
		}
		if n := p.Count("UpdateItem"); n != 2 {
			t.Fatalf("claim sent %d times; want 2", n)
		}
	}
}
