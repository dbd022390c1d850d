package relay_test

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/lambdaidem/lambdaidem/dynamostore/relay"
	"github.com/lambdaidem/lambdaidem/internal/outboxitem"
	"github.com/lambdaidem/lambdaidem/lambdaidem"
	"github.com/lambdaidem/lambdaidem/lambdaidem/outbox"
)

// The tests of this file put two relays on one outbox item, one of them
// stale: it read the item before the other moved it. Each interleaving is
// forced with channels (a publisher, or the relay's DynamoDB client, waits
// inside the stale relay until the other is done), never left to timing.
// They are the behavioural tests of the outbox item's conditions that make
// mutate's OUTBOX_AT_PENDING, OUTBOX_AT_POSITION and OUTBOX_DISPATCH_ONCE
// fail.

// accepted is a new env with order o-1 accepted: its outbox item holds a
// standard queue's message, a FIFO queue's and a ledger item, unpublished.
// It returns the record key.
func accepted(t *testing.T) (*env, string) {
	t.Helper()
	e := newEnv(t)
	if err := e.accept(context.Background(), e.guard(t), "o-1"); err != nil {
		t.Fatal(err)
	}
	return e, recordKey("o-1")
}

// stale returns targets (on e's clock) and a relay A publishing through
// them, and run, which runs A's Publish of record key k with A stopped
// inside its first publish of message 0 while meanwhile runs, and returns
// A's error: A read the item before meanwhile moved it.
func stale(t *testing.T, e *env, k string) (slow *targets, run func(meanwhile func()) error) {
	t.Helper()
	entered, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	slow = withHook(e, func(m outbox.Message) error {
		if m.Position != 0 {
			return nil
		}
		first := false
		once.Do(func() { first = true; close(entered) })
		if first {
			<-release
		}
		return nil
	})
	a := e.newRelay(t, slow)
	return slow, func(meanwhile func()) error {
		done := make(chan error, 1)
		go func() { done <- a.Publish(context.Background(), k) }()
		<-entered
		meanwhile()
		close(release)
		return <-done
	}
}

// withHook returns targets on e's clock that call hook before each send.
func withHook(e *env, hook func(outbox.Message) error) *targets {
	tg := newTargets()
	tg.now = e.clock.Now
	tg.set(hook, nil)
	return tg
}

// sentIDs lists the ids of the messages tg sent, in order.
func sentIDs(tg *targets) []string {
	var got []string
	for _, m := range tg.sent() {
		got = append(got, m.ID)
	}
	return got
}

// messageIDs lists the ids of the messages of record key k at positions.
func messageIDs(k string, positions ...int) []string {
	opKey := lambdaidem.OperationKey(k)
	var out []string
	for _, p := range positions {
		out = append(out, outbox.ID(opKey, start, p))
	}
	return out
}

// TestStaleRelayLeavesASetAsideItem: relay A reads the item and publishes
// message 0 slowly; meanwhile relay B meets the target's refusal of
// message 0 and sets the item aside (the original PUBLISHED at position 0,
// naming its copy). A's mark of message 0 must fail (the item is no longer
// pending), and A must stop there: the rest of the messages belong to the
// copy, which an operator releases or discards. Were the marks not
// conditioned on the pending status, A would mark the moved original and
// publish messages 1 and 2 behind the operator's back.
func TestStaleRelayLeavesASetAsideItem(t *testing.T) {
	e, k := accepted(t)
	ctx := context.Background()
	slow, run := stale(t, e, k)
	b := e.newRelay(t, withHook(e, func(outbox.Message) error {
		return fmt.Errorf("InvalidParameterValue: %w", outbox.ErrUnpublishable)
	}))
	if err := run(func() {
		if err := b.Publish(ctx, k); !errors.Is(err, relay.ErrSetAside) {
			t.Errorf("relay B: %v; want ErrSetAside", err)
		}
	}); err != nil {
		t.Fatalf("relay A: %v", err)
	}

	if got, want := sentIDs(slow), messageIDs(k, 0); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("relay A sent %v; want only %v (the message it had in flight)", got, want)
	}
	aside := str(e.item(t, k), "set_aside")
	if status, published, exp := e.state(t, k); status != "PUBLISHED" || published != 0 || exp == "" || aside == "" {
		t.Errorf("original: %s, %d published, expiration %q, set aside to %q; want PUBLISHED, 0, a TTL, its copy", status, published, exp, aside)
	}
	if status, published, _ := e.state(t, aside); status != "SET_ASIDE" || published != 0 {
		t.Errorf("copy %q: %s, %d published; want SET_ASIDE, 0", aside, status, published)
	}
}

// TestStaleRelayDoesNotRewindTheItem: relay A reads the item and publishes
// message 0 slowly; meanwhile relay B publishes and marks messages 0 and 1
// and fails on message 2 (a transient error: the item stays pending at
// position 2). A's mark of message 0 must fail (the item is no longer at
// position 0); A reads it again and publishes message 2 only. Were the
// marks not conditioned on the position, A's stale mark would set the item
// back to position 1 and A would publish message 1 a second time.
func TestStaleRelayDoesNotRewindTheItem(t *testing.T) {
	e, k := accepted(t)
	ctx := context.Background()
	slow, run := stale(t, e, k)
	failing := withHook(e, func(m outbox.Message) error {
		if m.Position == 2 {
			return errors.New("throttled")
		}
		return nil
	})
	b := e.newRelay(t, failing)
	if err := run(func() {
		if err := b.Publish(ctx, k); err == nil || errors.Is(err, relay.ErrSetAside) {
			t.Errorf("relay B: %v; want its publisher's error", err)
		}
		if status, published, _ := e.state(t, k); status != "PENDING" || published != 2 {
			t.Errorf("after relay B: %s, %d published; want PENDING, 2", status, published)
		}
	}); err != nil {
		t.Fatalf("relay A: %v", err)
	}

	if got, want := sentIDs(failing), messageIDs(k, 0, 1); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("relay B sent %v; want %v", got, want)
	}
	if got, want := sentIDs(slow), messageIDs(k, 0, 2); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("relay A sent %v; want %v (message 0 in flight, then on from position 2)", got, want)
	}
	if status, published, _ := e.state(t, k); status != "PUBLISHED" || published != 3 {
		t.Errorf("item: %s, %d published; want PUBLISHED, 3", status, published)
	}
}

// heldClient is the relay's DynamoDB client with a hook run after each
// UpdateItem DynamoDB answered, before the relay sees the answer: a slow
// response.
type heldClient struct {
	relay.Client
	after func(*dynamodb.UpdateItemInput, error)
}

func (c heldClient) UpdateItem(ctx context.Context, in *dynamodb.UpdateItemInput, optFns ...func(*dynamodb.Options)) (*dynamodb.UpdateItemOutput, error) {
	out, err := c.Client.UpdateItem(ctx, in, optFns...)
	c.after(in, err)
	return out, err
}

// TestFirstDispatchRecordedOnce: relay B marked message 0 (the answer to
// its mark is slow): it holds the item at position 1, the FIFO message 1
// not yet dispatched. Meanwhile relay A records message 1's first dispatch
// (at t0), publishes it and loses the answer. Four minutes later B goes
// on and records its own first dispatch: that must be refused (the first
// dispatch is A's, at t0), so B reads the item again and sends the message
// inside the queue's window from t0 (deduplicated). Six minutes after t0 the window
// has passed: the next relay sets the message aside instead of sending it
// a third time, which the queue, its deduplication interval over, would
// deliver again. Were the first dispatch recorded over an earlier one, B's
// later time would stand as the first dispatch and the message would be
// delivered twice.
func TestFirstDispatchRecordedOnce(t *testing.T) {
	e, k := accepted(t)
	ctx := context.Background()
	t0 := e.clock.Now()
	e.targets.set(nil, func(m outbox.Message) error {
		if m.Kind == outbox.KindSQSFIFO {
			return errors.New("answer lost")
		}
		return nil
	})
	arrived, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	held := heldClient{Client: e.client, after: func(in *dynamodb.UpdateItemInput, err error) {
		if err != nil || in.UpdateExpression == nil || *in.UpdateExpression != outboxitem.MarkUpdate {
			return
		}
		first := false
		once.Do(func() { first = true; close(arrived) })
		if first {
			<-release
		}
	}}
	b, err := relay.New(held, e.outbox, e.targets, func(o *relay.Options) { o.Now = e.clock.Now; o.Retention = retention })
	if err != nil {
		t.Fatal(err)
	}

	done := make(chan error, 1)
	go func() { done <- b.Publish(ctx, k) }()
	<-arrived // B marked message 0: it holds the item at position 1, undispatched
	if err := e.relay.Publish(ctx, k); err == nil {
		t.Fatal("relay A: no error; want its lost answer")
	}
	if got := dispatchedAt(t, e, k); !got.Equal(t0) {
		t.Fatalf("after relay A: first dispatch %v; want %v", got, t0)
	}
	e.clock.Advance(4 * time.Minute)
	close(release)
	if err := <-done; err == nil {
		t.Fatal("relay B: no error; want its lost answer")
	}
	if got := dispatchedAt(t, e, k); !got.Equal(t0) {
		t.Errorf("after relay B: first dispatch %v; want A's, %v", got, t0)
	}

	e.clock.Advance(2 * time.Minute)
	e.targets.set(nil, nil)
	if err := e.relay.Publish(ctx, k); !errors.Is(err, outbox.ErrWindowPassed) {
		t.Errorf("six minutes after the first dispatch: %v; want ErrWindowPassed (set aside)", err)
	}
	fifoSends := 0
	for _, m := range e.targets.sent() {
		if m.Kind == outbox.KindSQSFIFO {
			fifoSends++
		}
	}
	e.targets.mu.Lock()
	delivered := len(e.targets.fifo)
	e.targets.mu.Unlock()
	if fifoSends != 2 || delivered != 1 {
		t.Errorf("the FIFO message: sent %d times, delivered %d; want 2 (A, B inside the window) and 1", fifoSends, delivered)
	}
}

// dispatchedAt is the first dispatch recorded on the outbox item of record
// key k (zero if none).
func dispatchedAt(t *testing.T, e *env, k string) time.Time {
	t.Helper()
	v, ok := e.item(t, k)["dispatched_at"].(*types.AttributeValueMemberN)
	if !ok {
		return time.Time{}
	}
	ms, err := strconv.ParseInt(v.Value, 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	return time.UnixMilli(ms)
}
