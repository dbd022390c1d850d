package dynamostore_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/lambdaidem/lambdaidem/ddbtest"
	"github.com/lambdaidem/lambdaidem/dynamostore"
	"github.com/lambdaidem/lambdaidem/lambdaidem"
)

var t0 = time.Unix(1_800_000_000, 0)

func claimOf(key, token string) lambdaidem.Claim {
	return lambdaidem.Claim{Key: key, Token: token, Fingerprint: "fp", Now: t0, LeaseUntil: t0.Add(time.Minute), HoldUntil: t0.Add(time.Minute), ExpiresAt: t0.Add(horizon)}
}

func commitOf(key, token string, effects ...any) lambdaidem.Commit {
	return lambdaidem.Commit{Key: key, Token: token, Fingerprint: "fp", Outcome: []byte(`"ok"`), Now: t0, ExpiresAt: t0.Add(horizon), Attempts: 1, CreatedAt: t0, Effects: effects}
}

func (e *env) claim(t *testing.T, key, token string) {
	t.Helper()
	if _, ok, err := e.store.Claim(context.Background(), claimOf(key, token)); !ok || err != nil {
		t.Fatalf("Claim = %v, %v", ok, err)
	}
}

// TestCommitRejectsInvalidEffects: effects DynamoDB would refuse, or that
// the store cannot read, fail the commit before any call, with an error
// matching ErrEffectRejected and ErrInvalidEffect.
func TestCommitRejectsInvalidEffects(t *testing.T) {
	e := newEnv(t)
	p := e.proxy(t)
	e.claim(t, "k", "A")
	many := make([]any, dynamostore.MaxEffects+1)
	for i := range many {
		many[i] = e.order("o" + string(rune('a'+i%26)) + strings.Repeat("x", i/26))
	}
	big := e.order("big")
	big.Put.Item["blob"] = &types.AttributeValueMemberB{Value: make([]byte, dynamostore.MaxTransactionSize)}
	ownPut := types.TransactWriteItem{Put: &types.Put{TableName: aws.String(e.table), Item: map[string]types.AttributeValue{
		"id": &types.AttributeValueMemberS{Value: "k"}, "status": &types.AttributeValueMemberS{Value: "COMPLETED"},
	}}}
	for _, c := range []struct {
		name    string
		effects []any
		want    string
	}{
		{"UnknownType", []any{"PUT orders"}, "is a string"},
		{"NilPointer", []any{(*types.TransactWriteItem)(nil)}, "nil"},
		{"NoAction", []any{types.TransactWriteItem{}}, "exactly one"},
		{"TwoActions", []any{types.TransactWriteItem{Put: e.order("a").Put, ConditionCheck: e.missingOrder("b").ConditionCheck}}, "exactly one"},
		{"NoTable", []any{types.TransactWriteItem{Delete: &types.Delete{Key: map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: "a"}}}}}, "no table name"},
		{"NoKey", []any{types.TransactWriteItem{Delete: &types.Delete{TableName: aws.String(e.orders)}}}, "no key"},
		{"TooMany", many, "at most 99"},
		{"RecordItem", []any{e.order("a"), ownPut}, "own item"},
		{"TooLarge", []any{big}, "DynamoDB allows 4194304"},
	} {
		t.Run(c.name, func(t *testing.T) {
			p.ResetCalls()
			_, ok, err := e.store.Commit(context.Background(), commitOf("k", "A", c.effects...))
			if ok || !errors.Is(err, lambdaidem.ErrEffectRejected) || !errors.Is(err, dynamostore.ErrInvalidEffect) || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("Commit = %v, %v; want ErrEffectRejected and ErrInvalidEffect saying %q", ok, err, c.want)
			}
			if n := p.Total(); n != 0 {
				t.Fatalf("%d calls sent; want none", n)
			}
		})
	}
	// A pointer to a transaction item is accepted too.
	pointer := e.order("by-pointer")
	if _, ok, err := e.store.Commit(context.Background(), commitOf("k", "A", &pointer)); !ok || err != nil || !e.written(t, "by-pointer") {
		t.Fatalf("Commit with a *types.TransactWriteItem = %v, %v; want it written", ok, err)
	}
}

// TestCommitReadsCancellationReasonsByIndex: item 0 is the record, item
// i > 0 the effect i-1. A failed record condition is a refusal with the
// current record, not an error, even when an effect fails as well.
func TestCommitReadsCancellationReasonsByIndex(t *testing.T) {
	e := newEnv(t)
	e.claim(t, "k", "A")
	_, _, err := e.store.Commit(context.Background(), commitOf("k", "A", e.order("a"), e.order("b"), e.missingOrder("c")))
	var cfe *dynamostore.ConditionFailedError
	if !errors.As(err, &cfe) || cfe.Index != 2 || cfe.Action != "ConditionCheck" || cfe.Table != e.orders {
		t.Fatalf("Commit = %v; want effect 2's condition named", err)
	}
	if e.written(t, "a") || e.written(t, "b") {
		t.Fatal("effects of a cancelled transaction were written")
	}
	cur, ok, err := e.store.Commit(context.Background(), commitOf("k", "B", e.missingOrder("c")))
	if ok || err != nil || cur.Token != "A" || cur.Status != lambdaidem.StatusInProgress {
		t.Fatalf("foreign commit = %+v, %v, %v; want refused with A's record", cur, ok, err)
	}
}

// TestTransactionConflict: a TransactionConflict cancellation is retried
// with backoff; when it persists the commit fails with ErrInProgress and
// nothing is written.
func TestTransactionConflict(t *testing.T) {
	e := newEnv(t, func(o *dynamostore.Options) {
		o.ConflictRetries = 3
		o.ConflictBackoff = time.Millisecond
		o.ConflictMaxBackoff = 2 * time.Millisecond
	})
	p := e.proxy(t)
	e.claim(t, "k", "A")
	remove := p.Inject(ddbtest.Rule{Op: "TransactWriteItems", Fault: ddbtest.TransactionConflict})
	_, ok, err := e.store.Commit(context.Background(), commitOf("k", "A", e.order("a")))
	if ok || !errors.Is(err, lambdaidem.ErrInProgress) {
		t.Fatalf("Commit under constant conflict = %v, %v; want ErrInProgress", ok, err)
	}
	if n := p.Count("TransactWriteItems"); n != 4 {
		t.Fatalf("%d transactions sent; want 4 (1 + 3 retries)", n)
	}
	remove()
	p.ResetCalls()
	p.Inject(ddbtest.Rule{Op: "TransactWriteItems", Fault: ddbtest.TransactionConflict, Times: 2})
	if _, ok, err := e.store.Commit(context.Background(), commitOf("k", "A", e.order("a"))); !ok || err != nil {
		t.Fatalf("Commit after 2 conflicts = %v, %v; want committed", ok, err)
	}
	if n := p.Count("TransactWriteItems"); n != 3 || !e.written(t, "a") {
		t.Fatalf("%d transactions, written %v; want 3 and the effect written", n, e.written(t, "a"))
	}
}

// TestThrottledTransactionIsRetried: DynamoDB cancels a transaction for
// which "there is insufficient provisioned capacity" with the reason
// ThrottlingError ("please try again shortly"; API Reference,
// TransactWriteItems, CancellationReasons). The SDK retries the
// ThrottlingException of a single-item write (4 attempts for DynamoDB) but
// not a TransactionCanceledException, so the commit retries a throttled
// cancellation as often; one that outlasts that is ErrStoreUnavailable,
// not a conflict. The owner does not throw its work away on one throttle.
func TestThrottledTransactionIsRetried(t *testing.T) {
	e := newEnv(t, func(o *dynamostore.Options) {
		o.ConflictBackoff = time.Millisecond
		o.ConflictMaxBackoff = 2 * time.Millisecond
	})
	p := e.proxy(t)
	e.claim(t, "k", "A")
	p.Inject(ddbtest.Rule{Op: "TransactWriteItems", Fault: ddbtest.TransactionThrottled, Times: 3})
	if _, ok, err := e.store.Commit(context.Background(), commitOf("k", "A", e.order("a"))); !ok || err != nil {
		t.Fatalf("Commit after 3 throttled cancellations = %v, %v; want committed", ok, err)
	}
	if n := p.Count("TransactWriteItems"); n != 4 || !e.written(t, "a") {
		t.Fatalf("%d transactions, written %v; want 4 and the effect written", n, e.written(t, "a"))
	}
	e.claim(t, "k2", "B")
	p.ResetCalls()
	p.Inject(ddbtest.Rule{Op: "TransactWriteItems", Fault: ddbtest.TransactionThrottled})
	_, ok, err := e.store.Commit(context.Background(), commitOf("k2", "B", e.order("b")))
	var tce *types.TransactionCanceledException
	if ok || !errors.Is(err, lambdaidem.ErrStoreUnavailable) || errors.Is(err, lambdaidem.ErrInProgress) || !errors.As(err, &tce) {
		t.Fatalf("Commit under constant throttling = %v, %v; want ErrStoreUnavailable wrapping the cancellation", ok, err)
	}
	if n := p.Count("TransactWriteItems"); n != 4 || e.written(t, "b") {
		t.Fatalf("%d transactions, written %v; want 4 (as the SDK tries a throttled write) and nothing written", n, e.written(t, "b"))
	}
}

// TestTransactionConflictWithinDeadline: conflict retries stop when the
// context's deadline would pass before the next one, with ErrInProgress.
// The deadline is real time; its bounds leave the scheduler ample slack
// (a first answer within a second, a return within 4s past the deadline)
// and still fail a store that retries past it: with 1000 retries of
// 10ms on average it would send 1001 transactions over some 10s.
func TestTransactionConflictWithinDeadline(t *testing.T) {
	const retries, deadline = 1000, time.Second
	e := newEnv(t, func(o *dynamostore.Options) {
		o.ConflictRetries = retries
		o.ConflictBackoff = 20 * time.Millisecond
		o.ConflictMaxBackoff = 20 * time.Millisecond
	})
	p := e.proxy(t)
	e.claim(t, "k", "A")
	p.ResetCalls()
	p.Inject(ddbtest.Rule{Op: "TransactWriteItems", Fault: ddbtest.TransactionConflict})
	ctx, cancel := context.WithTimeout(context.Background(), deadline)
	defer cancel()
	start := time.Now()
	_, _, err := e.store.Commit(ctx, commitOf("k", "A", e.order("a")))
	took := time.Since(start)
	n := p.Count("TransactWriteItems")
	if !errors.Is(err, lambdaidem.ErrInProgress) || n < 2 || n > retries || took > deadline+4*time.Second {
		t.Fatalf("Commit = %v after %v and %d transactions; want ErrInProgress at the deadline (%v), having retried, before %d tries", err, took, n, deadline, retries+1)
	}
}

// TestClientRequestToken: the transaction carries a ClientRequestToken of
// at most 36 characters, the same across the SDK's retries of one commit.
func TestClientRequestToken(t *testing.T) {
	e := newEnv(t)
	p := e.proxy(t)
	e.claim(t, "k", "A")
	var tokens []string
	p.Inject(ddbtest.Rule{Op: "TransactWriteItems", Fault: ddbtest.InternalServerError, Match: func(body []byte) bool {
		tokens = append(tokens, between(string(body), `"ClientRequestToken":"`, `"`))
		return len(tokens) == 1 // fail the first try only
	}})
	if _, ok, err := e.store.Commit(context.Background(), commitOf("k", "A", e.order("a"))); !ok || err != nil {
		t.Fatalf("Commit = %v, %v", ok, err)
	}
	if len(tokens) != 2 || tokens[0] == "" || len(tokens[0]) > 36 || tokens[0] != tokens[1] {
		t.Fatalf("tokens sent %q; want the same token of 1..36 characters on both tries", tokens)
	}
}

func between(s, from, to string) string {
	_, after, ok := strings.Cut(s, from)
	if !ok {
		return ""
	}
	v, _, _ := strings.Cut(after, to)
	return v
}

// TestOldItemOrGetItem: a refused claim or commit takes the current record
// from the ALL_OLD item when DynamoDB returns it (one call), and otherwise
// reads it with a consistent GetItem (two calls).
func TestOldItemOrGetItem(t *testing.T) {
	for _, c := range []struct {
		name    string
		oldItem ddbtest.OldItems
		write   string
		refuse  func(e *env) (lambdaidem.Record, bool, error)
		getItem int
	}{
		{"Claim/ALL_OLD", ddbtest.OldItemsLikeDynamoDB, "UpdateItem", claimAgain, 0},
		{"Claim/GetItem", ddbtest.OldItemsNever, "UpdateItem", claimAgain, 1},
		{"Commit/ALL_OLD", ddbtest.OldItemsLikeDynamoDB, "PutItem", foreignCommit, 0},
		{"Commit/GetItem", ddbtest.OldItemsNever, "PutItem", foreignCommit, 1},
		{"Commit/emulator", ddbtest.OldItemsLikeEmulator, "PutItem", foreignCommit, 1},
		{"Transaction/ALL_OLD", ddbtest.OldItemsLikeDynamoDB, "TransactWriteItems", foreignTransaction, 0},
		{"Transaction/GetItem", ddbtest.OldItemsNever, "TransactWriteItems", foreignTransaction, 1},
		{"Transaction/emulator", ddbtest.OldItemsLikeEmulator, "TransactWriteItems", foreignTransaction, 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			e := newEnv(t)
			p := e.proxy(t)
			p.SetDepartures(ddbtest.Departures{OldItems: c.oldItem})
			e.claim(t, "k", "A")
			p.ResetCalls()
			cur, ok, err := c.refuse(e)
			if ok || err != nil || cur.Token != "A" || cur.Status != lambdaidem.StatusInProgress || cur.Fingerprint != "fp" {
				t.Fatalf("refused write = %+v, %v, %v; want A's in-progress record", cur, ok, err)
			}
			calls := p.Calls()
			if c.oldItem == ddbtest.OldItemsLikeEmulator && p.Backend().Departs.OldItems == ddbtest.OldItemsLikeDynamoDB {
				c.getItem = 0 // the backend's own answer carries the old item, as DynamoDB's does
			}
			if calls[c.write] != 1 || calls["GetItem"] != c.getItem || p.Total() != 1+c.getItem {
				t.Fatalf("calls %v; want 1 %s and %d GetItem", calls, c.write, c.getItem)
			}
		})
	}
}

func claimAgain(e *env) (lambdaidem.Record, bool, error) {
	return e.store.Claim(context.Background(), claimOf("k", "B"))
}

func foreignCommit(e *env) (lambdaidem.Record, bool, error) {
	return e.store.Commit(context.Background(), commitOf("k", "B"))
}

func foreignTransaction(e *env) (lambdaidem.Record, bool, error) {
	return e.store.Commit(context.Background(), commitOf("k", "B", e.order("b")))
}

// TestEveryCallReportsUnavailable: each Store method wraps throttling and
// 5xx that outlast the SDK's retries with ErrStoreUnavailable, keeping the
// SDK error for errors.As.
func TestEveryCallReportsUnavailable(t *testing.T) {
	e := newEnv(t)
	p := e.proxy(t)
	e.claim(t, "k", "A")
	p.Inject(ddbtest.Rule{Fault: ddbtest.ProvisionedThroughputExceeded})
	ctx := context.Background()
	fence := lambdaidem.Fence{Key: "k", Token: "A"}
	for name, op := range map[string]func() error{
		"Claim":       func() error { _, _, err := e.store.Claim(ctx, claimOf("k2", "A")); return err },
		"Commit":      func() error { _, _, err := e.store.Commit(ctx, commitOf("k", "A")); return err },
		"Transaction": func() error { _, _, err := e.store.Commit(ctx, commitOf("k", "A", e.order("a"))); return err },
		"Release":     func() error { _, err := e.store.Release(ctx, fence); return err },
		"MarkUnknown": func() error { _, err := e.store.MarkUnknown(ctx, fence); return err },
		"Get":         func() error { _, err := e.store.Get(ctx, "k", t0); return err },
	} {
		err := op()
		var tpe *types.ProvisionedThroughputExceededException
		if !errors.Is(err, lambdaidem.ErrStoreUnavailable) || !errors.As(err, &tpe) {
			t.Errorf("%s = %v; want ErrStoreUnavailable wrapping the SDK's exception", name, err)
		}
	}
}

// TestConnectionLossIsUnavailable: a connection closed without an answer,
// on every one of the SDK's attempts, is ErrStoreUnavailable.
func TestConnectionLossIsUnavailable(t *testing.T) {
	e := newEnv(t)
	e.proxy(t).Inject(ddbtest.Rule{Op: "GetItem", Fault: ddbtest.LostConnection})
	if _, err := e.store.Get(context.Background(), "k", t0); !errors.Is(err, lambdaidem.ErrStoreUnavailable) {
		t.Fatalf("Get = %v; want ErrStoreUnavailable", err)
	}
}

// TestCommitValidationException: a transaction DynamoDB refuses as
// invalid (here two writes on one business item) is rejected as the
// effects' fault, with nothing written.
func TestCommitValidationException(t *testing.T) {
	e := newEnv(t)
	e.claim(t, "k", "A")
	_, ok, err := e.store.Commit(context.Background(), commitOf("k", "A", e.order("a"), e.missingOrder("a")))
	if ok || !errors.Is(err, lambdaidem.ErrEffectRejected) {
		t.Fatalf("Commit = %v, %v; want ErrEffectRejected", ok, err)
	}
	if e.written(t, "a") {
		t.Fatal("written")
	}
}
