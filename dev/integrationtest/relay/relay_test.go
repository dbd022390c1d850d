package relay_test

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/lambdaidem/lambdaidem/ddbtest"
	"github.com/lambdaidem/lambdaidem/dynamostore"
	"github.com/lambdaidem/lambdaidem/dynamostore/relay"
	"github.com/lambdaidem/lambdaidem/lambdaidem"
	"github.com/lambdaidem/lambdaidem/lambdaidem/outbox"
)

// ids lists the kinds and ids of messages, "kind:id" each.
func ids(ms []outbox.Message) string {
	var parts []string
	for _, m := range ms {
		parts = append(parts, string(m.Kind)+":"+m.ID)
	}
	return strings.Join(parts, " ")
}

// TestCommitWritesOneOutboxItem: the record, the order and the outbox
// item holding the three messages are one TransactWriteItems; the item is
// unpublished and has no expiration (it never expires unpublished).
func TestCommitWritesOneOutboxItem(t *testing.T) {
	e := newEnv(t)
	p := e.ep.RequireProxy(t)
	p.ResetCalls()
	if err := e.accept(context.Background(), e.guard(t), "o-1"); err != nil {
		t.Fatal(err)
	}
	if c := p.Calls(); c["TransactWriteItems"] != 1 || c["PutItem"] != 0 {
		t.Errorf("calls %v; want the commit as one TransactWriteItems", c)
	}
	status, published, exp := e.state(t, recordKey("o-1"))
	if status != "PENDING" || published != 0 || exp != "" {
		t.Fatalf("outbox item: %s, %d published, expiration %q; want PENDING, 0, none", status, published, exp)
	}
	msgs := e.item(t, recordKey("o-1"))["messages"].(*types.AttributeValueMemberL).Value
	if len(msgs) != 3 {
		t.Fatalf("%d messages; want 3", len(msgs))
	}
	opKey := lambdaidem.OperationKey(recordKey("o-1"))
	for i, m := range msgs {
		if id := m.(*types.AttributeValueMemberM).Value["id"].(*types.AttributeValueMemberS).Value; id != outbox.ID(opKey, start, i) {
			t.Errorf("message %d id %s; want %s", i, id, outbox.ID(opKey, start, i))
		}
	}
}

// TestCommitFaults: at every step of the commit, the messages are written
// with the record and the order, or none of them are: a business condition
// that fails, a commit that DynamoDB refuses for good, and a commit whose
// response is lost (applied once).
func TestCommitFaults(t *testing.T) {
	cases := []struct {
		name    string
		rule    ddbtest.Rule
		pre     func(e *env)
		wantErr bool
		written bool
	}{
		{name: "business condition fails", pre: func(e *env) {
			if _, err := e.client.PutItem(context.Background(), &dynamodb.PutItemInput{
				TableName: aws.String(e.orders), Item: map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: "o-1"}},
			}); err != nil {
				panic(err)
			}
		}, wantErr: true},
		{name: "commit refused (5xx past the SDK's retries)", rule: ddbtest.Rule{Op: "TransactWriteItems", Fault: ddbtest.InternalServerError}, wantErr: true},
		{name: "commit response lost once", rule: ddbtest.Rule{Op: "TransactWriteItems", Fault: ddbtest.LostResponse, Times: 1}, written: true},
		{name: "commit throttled once", rule: ddbtest.Rule{Op: "TransactWriteItems", Fault: ddbtest.TransactionThrottled, Times: 1}, written: true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := newEnv(t)
			if c.pre != nil {
				c.pre(e)
			}
			if c.rule.Op != "" {
				defer e.ep.RequireProxy(t).Inject(c.rule)()
			}
			err := e.accept(context.Background(), e.guard(t), "o-1")
			if (err != nil) != c.wantErr {
				t.Fatalf("accept = %v; want error %v", err, c.wantErr)
			}
			if got := e.item(t, recordKey("o-1")) != nil; got != c.written {
				t.Errorf("outbox item written = %v; want %v", got, c.written)
			}
		})
	}
}

// TestTransactionLimits: the outbox item is one of the transaction's 100
// actions and counts in its 4 MB; one item holds at most 400 KB of
// messages. Each limit fails the commit before anything is sent, with an
// error that says which, and the claim is released.
func TestTransactionLimits(t *testing.T) {
	e := newEnv(t)
	g := e.guard(t)
	cases := map[string]func(ctx context.Context) error{
		"99 writes and a message": func(ctx context.Context) error {
			for i := range dynamostore.MaxEffects {
				if err := dynamostore.Stage(ctx, types.Put{TableName: aws.String(e.orders), Item: map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: strconv.Itoa(i)}}}); err != nil {
					return err
				}
			}
			_, err := outbox.Stage(ctx, outbox.SQS{QueueURL: standardQueue, Body: "b"})
			return err
		},
		"messages over 400 KB": func(ctx context.Context) error {
			for range 5 {
				if _, err := outbox.Stage(ctx, outbox.SQS{QueueURL: standardQueue, Body: strings.Repeat("x", 100<<10)}); err != nil {
					return err
				}
			}
			return nil
		},
	}
	want := map[string]string{"99 writes and a message": "at most 99", "messages over 400 KB": "400 KB"}
	for name, stage := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := lambdaidem.Do(context.Background(), g, call(name), func(ctx context.Context) (string, error) {
				return "ok", stage(ctx)
			})
			if !errors.Is(err, lambdaidem.ErrEffectRejected) || !errors.Is(err, dynamostore.ErrInvalidEffect) {
				t.Fatalf("commit = %v; want ErrEffectRejected and ErrInvalidEffect", err)
			}
			if msg := err.Error(); !strings.Contains(msg, want[name]) && !strings.Contains(msg, strconv.Itoa(400<<10)) {
				t.Errorf("error %q does not say the limit", msg)
			}
			if e.item(t, recordKey(name)) != nil {
				t.Error("an outbox item was written")
			}
		})
	}
	t.Run("no outbox table", func(t *testing.T) {
		s, err := dynamostore.New(e.client, e.table)
		if err != nil {
			t.Fatal(err)
		}
		g, _ := lambdaidem.New(s)
		_, err = lambdaidem.Do(context.Background(), g, call("no-table"), func(ctx context.Context) (string, error) {
			_, err := outbox.Stage(ctx, outbox.SQS{QueueURL: standardQueue, Body: "b"})
			return "ok", err
		})
		if !errors.Is(err, lambdaidem.ErrEffectRejected) || !strings.Contains(err.Error(), "OutboxTable") {
			t.Fatalf("commit without an outbox table = %v", err)
		}
	})
	t.Run("outbox table is the record table", func(t *testing.T) {
		if _, err := dynamostore.New(e.client, e.table, func(o *dynamostore.Options) { o.OutboxTable = e.table }); err == nil {
			t.Fatal("New accepted the record table as the outbox table")
		}
	})
}

// TestRelayPublishesInOrderAndExpires: the relay publishes the messages
// of an item in position order, marks the item PUBLISHED with its TTL, and
// passes the changes of its own marks, deletions, and other records.
func TestRelayPublishesInOrderAndExpires(t *testing.T) {
	e := newEnv(t)
	k := recordKey("o-1")
	if err := e.accept(context.Background(), e.guard(t), "o-1"); err != nil {
		t.Fatal(err)
	}
	insert := e.change(t, "INSERT", k)
	if failed := e.handle(t, e.relay, insert); len(failed) != 0 {
		t.Fatalf("reported %v", failed)
	}
	opKey := lambdaidem.OperationKey(k)
	want := "sqs:" + outbox.ID(opKey, start, 0) + " sqs-fifo:" + outbox.ID(opKey, start, 1) + " item:" + outbox.ID(opKey, start, 2)
	if got := ids(e.targets.sent()); got != want {
		t.Errorf("published %s; want %s", got, want)
	}
	status, published, exp := e.state(t, k)
	if wantExp := strconv.FormatInt(e.clock.Now().Add(retention).Unix(), 10); status != "PUBLISHED" || published != 3 || exp != wantExp {
		t.Errorf("item %s, %d published, expiration %s; want PUBLISHED, 3, %s", status, published, exp, wantExp)
	}
	if failed := e.handle(t, e.relay, e.change(t, "MODIFY", k), e.change(t, "REMOVE", k), insert); len(failed) != 0 {
		t.Fatalf("reported %v", failed)
	}
	if n := len(e.targets.sent()); n != 3 {
		t.Errorf("%d publishes after the mark's change, a removal and a redelivery; want still 3", n)
	}
}

// TestRelayCrashes: a crash at every step of the relay. Before a publish,
// nothing is sent and the redelivery sends each message once. After a
// publish, before its mark, the redelivery sends that message again with
// the same id (the FIFO target drops it; the standard one delivers it for
// the consumer to drop), and nothing else twice. A mark that fails is the
// same; a mark whose response is lost is recognized (the SDK's retry
// finds the item moved, the relay reads it again) and nothing is sent
// twice. Whatever happened, the item ends PUBLISHED with every message
// sent in order, and expires only then.
func TestRelayCrashes(t *testing.T) {
	crash := errors.New("crash")
	cases := []struct {
		name   string
		inject func(e *env) (remove func())
		twice  int // position sent twice, -1 for none
	}{
		{"before publishing message 1", func(e *env) func() {
			once := sync.Once{}
			e.targets.set(func(m outbox.Message) error {
				var err error
				if m.Position == 1 {
					once.Do(func() { err = crash })
				}
				return err
			}, nil)
			return func() { e.targets.set(nil, nil) }
		}, -1},
		{"after publishing message 1, before its mark", func(e *env) func() {
			once := sync.Once{}
			e.targets.set(nil, func(m outbox.Message) error {
				var err error
				if m.Position == 1 {
					once.Do(func() { err = crash })
				}
				return err
			})
			return func() { e.targets.set(nil, nil) }
		}, 1},
		{"the mark of message 0 fails", func(e *env) func() {
			return e.ep.RequireProxy(e.t).Inject(ddbtest.Rule{Op: "UpdateItem", Fault: ddbtest.InternalServerError, Times: 4})
		}, 0},
		{"the mark of message 0 loses its response", func(e *env) func() {
			return e.ep.RequireProxy(e.t).Inject(ddbtest.Rule{Op: "UpdateItem", Fault: ddbtest.LostResponse, Times: 1})
		}, -1},
		{"the read fails", func(e *env) func() {
			return e.ep.RequireProxy(e.t).Inject(ddbtest.Rule{Op: "GetItem", Fault: ddbtest.InternalServerError, Times: 4})
		}, -1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := newEnv(t)
			e.t = t
			k := recordKey("o-1")
			if err := e.accept(context.Background(), e.guard(t), "o-1"); err != nil {
				t.Fatal(err)
			}
			insert := e.change(t, "INSERT", k)
			remove := c.inject(e)
			first := e.handle(t, e.relay, insert)
			remove()
			if c.name != "the mark of message 0 loses its response" {
				if len(first) != 1 || first[0] != insert.Change.SequenceNumber {
					t.Fatalf("crashed batch reported %v; want the record", first)
				}
				if _, _, exp := e.state(t, k); exp != "" {
					t.Fatal("an unpublished item has an expiration")
				}
			}
			if again := e.handle(t, e.relay, insert); len(again) != 0 {
				t.Fatalf("redelivery reported %v", again)
			}
			sent := e.targets.sent()
			opKey := lambdaidem.OperationKey(k)
			var want []string
			for i := range 3 {
				want = append(want, outbox.ID(opKey, start, i))
				if i == c.twice {
					want = append(want, outbox.ID(opKey, start, i))
				}
			}
			var got []string
			for _, m := range sent {
				got = append(got, m.ID)
			}
			if strings.Join(got, " ") != strings.Join(want, " ") {
				t.Errorf("sent %v; want %v", got, want)
			}
			if status, _, exp := e.state(t, k); status != "PUBLISHED" || exp == "" {
				t.Errorf("item %s, expiration %q; want PUBLISHED with a TTL", status, exp)
			}
			e.targets.mu.Lock()
			defer e.targets.mu.Unlock()
			if len(e.targets.fifo) != 1 {
				t.Errorf("the FIFO queue delivered %d; want 1 (it deduplicates)", len(e.targets.fifo))
			}
		})
	}
}

// TestRedeliveredAndBisectedBatches: a batch of three operations' items
// whose second fails is reported from the second record on; Lambda's
// bisection then sends the first half alone and the second half alone
// (BisectBatchOnFunctionError), and a plain redelivery sends the whole
// batch again. The first operation's messages are sent once, the second's
// failed message once more with its id, the third's once.
func TestRedeliveredAndBisectedBatches(t *testing.T) {
	e := newEnv(t)
	g := e.guard(t)
	recs := make([]events.DynamoDBEventRecord, 3)
	for i, key := range []string{"a", "b", "c"} {
		if err := e.accept(context.Background(), g, key); err != nil {
			t.Fatal(err)
		}
		recs[i] = e.change(t, "INSERT", recordKey(key))
	}
	failing := true
	e.targets.set(func(m outbox.Message) error {
		if failing && strings.Contains(m.Body, `"b"`) && m.Position == 1 {
			return errors.New("target unavailable")
		}
		return nil
	}, nil)
	if failed := e.handle(t, e.relay, recs...); len(failed) != 1 || failed[0] != recs[1].Change.SequenceNumber {
		t.Fatalf("reported %v; want the second record", failed)
	}
	if n := len(e.targets.sent()); n != 4 {
		t.Fatalf("%d sent; want a's 3 and b's first", n)
	}
	failing = false
	e.handle(t, e.relay, recs[:1]...) // bisected: first half
	e.handle(t, e.relay, recs[1:]...) // second half
	e.handle(t, e.relay, recs...)     // redelivered whole
	counts := map[string]int{}
	for _, m := range e.targets.sent() {
		counts[m.ID]++
	}
	for i, key := range []string{"a", "b", "c"} {
		for pos := range 3 {
			id := outbox.ID(lambdaidem.OperationKey(recordKey(key)), start, pos)
			if counts[id] != 1 {
				t.Errorf("operation %d message %d sent %d times; want 1", i, pos, counts[id])
			}
		}
		if status, _, _ := e.state(t, recordKey(key)); status != "PUBLISHED" {
			t.Errorf("%s: %s", key, status)
		}
	}
}

// TestTwoRelaysAtOnce: two relays handle the same record at the same
// moment, each having read the item before either marked anything (a
// barrier in the target holds the first publish of each until both
// reached it). Both publish message 0; one mark wins, the other relay
// reads the item again and goes on from where it is. Every message is
// sent with its one id; the FIFO queue delivers each once; a consumer
// wrapped by lambdaidem and keyed on the id attribute has one effect per
// message although the standard queue delivered message 0 twice.
func TestTwoRelaysAtOnce(t *testing.T) {
	e := newEnv(t)
	k := recordKey("o-1")
	if err := e.accept(context.Background(), e.guard(t), "o-1"); err != nil {
		t.Fatal(err)
	}
	insert := e.change(t, "INSERT", k)
	var arrived sync.WaitGroup
	arrived.Add(2)
	var gate sync.Once
	both := make(chan struct{})
	e.targets.set(func(m outbox.Message) error {
		if m.Position == 0 {
			arrived.Done()
			gate.Do(func() { go func() { arrived.Wait(); close(both) }() })
			<-both
		}
		return nil
	}, nil)
	var wg sync.WaitGroup
	for range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			resp, err := e.relay.Handler()(context.Background(), eventOf(insert))
			if err != nil || len(resp.BatchItemFailures) != 0 {
				t.Errorf("relay = %+v, %v", resp, err)
			}
		}()
	}
	wg.Wait()
	counts := map[string]int{}
	for _, m := range e.targets.sent() {
		counts[m.ID]++
	}
	opKey := lambdaidem.OperationKey(k)
	if counts[outbox.ID(opKey, start, 0)] != 2 {
		t.Errorf("message 0 sent %d times; want 2 (both relays read it unpublished)", counts[outbox.ID(opKey, start, 0)])
	}
	for pos := range 3 {
		if counts[outbox.ID(opKey, start, pos)] == 0 {
			t.Errorf("message %d never sent", pos)
		}
	}
	if status, published, _ := e.state(t, k); status != "PUBLISHED" || published != 3 {
		t.Errorf("item %s, %d", status, published)
	}
	e.targets.mu.Lock()
	fifo, standard := len(e.targets.fifo), e.targets.standard
	e.targets.mu.Unlock()
	if fifo != 1 {
		t.Errorf("the FIFO queue delivered %d; want 1", fifo)
	}
	if len(standard) != 2 {
		t.Fatalf("the standard queue delivered %d; want 2 (it does not deduplicate)", len(standard))
	}
	if effects := consume(t, e, standard); effects != 1 {
		t.Errorf("the consumer ran its effect %d times; want 1", effects)
	}
}

// TestWindowRefusesRedispatch: a FIFO message whose first publish lost its
// answer is sent again while the queue still remembers its id, and never
// once the resend could land after five minutes from that first dispatch
// (the manual clock at the window's edge less the relay's margin): the
// relay refuses with ErrWindowPassed and sets the item aside (the stream
// record succeeds; the copy stays unpublished, with no expiration, for an
// operator; the original no longer blocks the record key).
func TestWindowRefusesRedispatch(t *testing.T) {
	// The relay's defaults: 5 s of clock skew and a 30 s publish bound.
	const margin = 35 * time.Second
	for _, c := range []struct {
		name  string
		after time.Duration
		sent  bool
	}{
		{"1ms before the edge", outbox.FIFOWindow - margin - time.Millisecond, true},
		{"at the edge", outbox.FIFOWindow - margin, false},
		{"a publish of up to 30 s would land after the window's end", outbox.FIFOWindow - 20*time.Second, false},
		{"at the window's end", outbox.FIFOWindow, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			e := newEnv(t)
			k := recordKey("o-1")
			if err := e.accept(context.Background(), e.guard(t), "o-1"); err != nil {
				t.Fatal(err)
			}
			insert := e.change(t, "INSERT", k)
			e.targets.set(nil, func(m outbox.Message) error {
				if m.Kind == outbox.KindSQSFIFO {
					return errors.New("answer lost")
				}
				return nil
			})
			e.handle(t, e.relay, insert)
			e.targets.set(nil, nil)
			if d := e.item(t, k)["dispatched_at"]; d == nil {
				t.Fatal("the first dispatch of the FIFO message was not recorded")
			}
			e.clock.Advance(c.after)
			err := e.relay.Publish(context.Background(), k)
			fifoSends := 0
			for _, m := range e.targets.sent() {
				if m.Kind == outbox.KindSQSFIFO {
					fifoSends++
				}
			}
			status, published, exp := e.state(t, k)
			if c.sent {
				if err != nil || fifoSends != 2 || status != "PUBLISHED" {
					t.Fatalf("inside the window: %v, %d sends, %s; want sent again and published", err, fifoSends, status)
				}
				return
			}
			if !errors.Is(err, outbox.ErrWindowPassed) || !errors.Is(err, relay.ErrSetAside) ||
				!strings.Contains(err.Error(), "deduplicates for 5m0s") || !strings.Contains(err.Error(), "may take 35s") {
				t.Fatalf("at the edge: Publish = %v; want ErrWindowPassed and ErrSetAside saying why", err)
			}
			// Set aside: the original is done (it no longer blocks the key),
			// the copy holds the message unpublished, with no expiration.
			if fifoSends != 1 || status != "PUBLISHED" || published != 1 || exp == "" {
				t.Errorf("at the edge: %d sends, %s, %d published, expiration %q; want 1, PUBLISHED (moved), 1, a TTL", fifoSends, status, published, exp)
			}
			aside := str(e.item(t, k), "set_aside")
			if status, published, exp := e.state(t, aside); status != "SET_ASIDE" || published != 1 || exp != "" {
				t.Errorf("the copy %q: %s, %d published, expiration %q; want SET_ASIDE, 1, none", aside, status, published, exp)
			}
			if failed := e.handle(t, e.relay, insert); len(failed) != 0 {
				t.Errorf("the set-aside record is reported (%v): it would hold the shard", failed)
			}
		})
	}
}

// TestRelayNew: the constructor's checks.
func TestRelayNew(t *testing.T) {
	e := newEnv(t)
	for name, build := range map[string]func() (*relay.Relay, error){
		"nil client":    func() (*relay.Relay, error) { return relay.New(nil, "t", e.targets) },
		"empty table":   func() (*relay.Relay, error) { return relay.New(e.client, "", e.targets) },
		"nil publisher": func() (*relay.Relay, error) { return relay.New(e.client, "t", nil) },
		"negative retention": func() (*relay.Relay, error) {
			return relay.New(e.client, "t", e.targets, func(o *relay.Options) { o.Retention = -1 })
		},
		"negative publish timeout": func() (*relay.Relay, error) {
			return relay.New(e.client, "t", e.targets, func(o *relay.Options) { o.PublishTimeout = -1 })
		},
		"negative clock skew": func() (*relay.Relay, error) {
			return relay.New(e.client, "t", e.targets, func(o *relay.Options) { o.ClockSkew = -1 })
		},
	} {
		if _, err := build(); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

// TestMalformedItemFails: an item the relay cannot read fails its record
// (to the on-failure destination) instead of passing silently.
func TestMalformedItemFails(t *testing.T) {
	e := newEnv(t)
	if _, err := e.client.PutItem(context.Background(), &dynamodb.PutItemInput{TableName: aws.String(e.outbox), Item: map[string]types.AttributeValue{
		"id": &types.AttributeValueMemberS{Value: "k"}, "status": &types.AttributeValueMemberS{Value: "PENDING"},
	}}); err != nil {
		t.Fatal(err)
	}
	if err := e.relay.Publish(context.Background(), "k"); !errors.Is(err, relay.ErrMalformed) {
		t.Fatalf("Publish = %v; want ErrMalformed", err)
	}
}

// TestUnpublishedItemNeverOverwritten: when a record expired and its key
// ran again before the relay published the first run's messages, the
// second commit fails on the outbox item's condition rather than overwrite
// them, as "in progress" (ErrInProgress, dynamostore.ErrOutboxPending: a
// retry later commits), never as the caller's business condition
// (ErrConditionFailed: "the same request will fail the same way"); once
// they are published, the key commits new messages.
func TestUnpublishedItemNeverOverwritten(t *testing.T) {
	e := newEnv(t)
	g := e.guard(t)
	run := func() error {
		_, err := lambdaidem.Do(context.Background(), g, call("o-1"), func(ctx context.Context) (string, error) {
			_, err := outbox.Stage(ctx, outbox.Item{Target: "ledger", Body: "b"})
			return "ok", err
		})
		return err
	}
	if err := run(); err != nil {
		t.Fatal(err)
	}
	e.clock.Advance(2 * time.Hour) // past the retry horizon: the record is absent
	if err := run(); !errors.Is(err, lambdaidem.ErrInProgress) || !errors.Is(err, dynamostore.ErrOutboxPending) || errors.Is(err, lambdaidem.ErrConditionFailed) {
		t.Fatalf("second run over an unpublished item = %v; want ErrInProgress and ErrOutboxPending, not a business condition", err)
	}
	if err := e.relay.Publish(context.Background(), recordKey("o-1")); err != nil {
		t.Fatal(err)
	}
	if err := run(); err != nil {
		t.Fatalf("second run over a published item = %v", err)
	}
	if status, published, exp := e.state(t, recordKey("o-1")); status != "PENDING" || published != 0 || exp != "" {
		t.Errorf("the new item: %s, %d, %q; want PENDING, 0, no expiration", status, published, exp)
	}
}

// TestRelayOvertaken: while one relay is publishing message 0, another
// publishes and marks the whole item. The first relay's mark then fails
// its condition; it reads the item again, finds it published, and sends
// nothing more: the message it was sending is the only duplicate.
func TestRelayOvertaken(t *testing.T) {
	e := newEnv(t)
	k := recordKey("o-1")
	if err := e.accept(context.Background(), e.guard(t), "o-1"); err != nil {
		t.Fatal(err)
	}
	other := e.newRelay(t, e.targets)
	var once sync.Once
	e.targets.set(nil, func(m outbox.Message) error {
		var err error
		once.Do(func() {
			e.targets.set(nil, nil)
			err = other.Publish(context.Background(), k)
		})
		return err
	})
	if err := e.relay.Publish(context.Background(), k); err != nil {
		t.Fatal(err)
	}
	opKey := lambdaidem.OperationKey(k)
	want := []string{outbox.ID(opKey, start, 0), outbox.ID(opKey, start, 0), outbox.ID(opKey, start, 1), outbox.ID(opKey, start, 2)}
	var got []string
	for _, m := range e.targets.sent() {
		got = append(got, m.ID)
	}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("sent %v; want %v", got, want)
	}
}

// TestStreamWithoutNewImagesFails: a stream that carries no new images
// (KEYS_ONLY, OLD_IMAGE) would make the relay skip every message; its
// records fail loudly instead. A REMOVE (TTL) passes.
func TestStreamWithoutNewImagesFails(t *testing.T) {
	e := newEnv(t)
	k := recordKey("o-1")
	if err := e.accept(context.Background(), e.guard(t), "o-1"); err != nil {
		t.Fatal(err)
	}
	insert := e.change(t, "INSERT", k)
	insert.Change.NewImage = nil
	if failed := e.handle(t, e.relay, insert); len(failed) != 1 {
		t.Fatalf("a record without a new image passed (%v)", failed)
	}
	if failed := e.handle(t, e.relay, e.change(t, "REMOVE", k)); len(failed) != 0 {
		t.Fatalf("a removal failed (%v)", failed)
	}
}

// TestPublishIsBounded: a publish that does not return by itself (a target
// that never answers, the SDK retrying) is cut at PublishTimeout, which is
// the publish's part of the window margin: the Publisher's context has
// that deadline, and the relay reports the message unpublished.
func TestPublishIsBounded(t *testing.T) {
	e := newEnv(t)
	k := recordKey("o-1")
	if err := e.accept(context.Background(), e.guard(t), "o-1"); err != nil {
		t.Fatal(err)
	}
	const bound = 50 * time.Millisecond
	var left time.Duration
	slow := outbox.PublisherFunc(func(ctx context.Context, m outbox.Message) error {
		d, ok := ctx.Deadline()
		if !ok {
			return errors.New("no deadline")
		}
		left = time.Until(d)
		<-ctx.Done()
		return ctx.Err()
	})
	r, err := relay.New(e.client, e.outbox, slow, func(o *relay.Options) { o.Now = e.clock.Now; o.PublishTimeout = bound })
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Publish(context.Background(), k); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Publish = %v; want the publish cut at its bound", err)
	}
	if left <= 0 || left > bound {
		t.Errorf("the publish had %v left; want at most %v", left, bound)
	}
	if status, published, _ := e.state(t, k); status != "PENDING" || published != 0 {
		t.Errorf("%s, %d published; want PENDING, 0", status, published)
	}
}

// TestReconcileDoneCommitsItsMessages: over DynamoDB, a charge left
// UNKNOWN (its order and message died with its process) is reconciled as
// done; the reconcile stages the order and the message through its
// context, and the record, the order and the outbox item commit in one
// TransactWriteItems; the relay then publishes the message under the
// operation's id.
func TestReconcileDoneCommitsItsMessages(t *testing.T) {
	e := newEnv(t)
	g := e.guard(t)
	c := call("o-1")
	if _, err := lambdaidem.Do(context.Background(), g, c, func(ctx context.Context) (string, error) {
		a, _ := lambdaidem.AttemptFrom(ctx)
		if err := a.BeginExternal(ctx); err != nil {
			return "", err
		}
		return "", errors.New("provider timed out")
	}); err == nil {
		t.Fatal("want the charge's error")
	}
	c.Reconcile = func(ctx context.Context, u lambdaidem.Unknown) (string, bool, error) {
		if err := dynamostore.Stage(ctx, types.Put{TableName: aws.String(e.orders), Item: map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: "o-1"}}}); err != nil {
			return "", false, err
		}
		_, err := outbox.Stage(ctx, outbox.SQSFIFO{QueueURL: fifoQueue, GroupID: "o-1", Body: `{"order":"o-1","event":"charged"}`})
		return "charged", true, err
	}
	p := e.ep.RequireProxy(t)
	p.ResetCalls()
	if out, err := lambdaidem.Do(context.Background(), g, c, func(context.Context) (string, error) {
		t.Error("the handler ran again")
		return "", nil
	}); err != nil || out != "charged" {
		t.Fatalf("reconcile = %q, %v", out, err)
	}
	if calls := p.Calls(); calls["TransactWriteItems"] != 1 {
		t.Errorf("calls %v; want the outcome, the order and the message in one TransactWriteItems", calls)
	}
	if out, err := e.client.GetItem(context.Background(), &dynamodb.GetItemInput{TableName: aws.String(e.orders), Key: map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: "o-1"}}}); err != nil || len(out.Item) == 0 {
		t.Fatalf("the order was not committed (%v)", err)
	}
	if err := e.relay.Publish(context.Background(), recordKey("o-1")); err != nil {
		t.Fatal(err)
	}
	sent := e.targets.sent()
	if len(sent) != 1 || sent[0].ID != outbox.ID(lambdaidem.OperationKey(recordKey("o-1")), start, 0) {
		t.Errorf("published %s; want the one message under the operation's id", ids(sent))
	}
}
