package relay_test

import (
	"context"
	"fmt"
	"slices"
	"strconv"
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
	"github.com/lambdaidem/lambdaidem/internal/testclock"
	"github.com/lambdaidem/lambdaidem/lambdaidem"
	"github.com/lambdaidem/lambdaidem/lambdaidem/outbox"
	"github.com/lambdaidem/lambdaidem/lambdaidem/sqsbatch"
)

const (
	standardQueue = "https://sqs.eu-west-1.amazonaws.com/123456789012/accepted"
	fifoQueue     = "https://sqs.eu-west-1.amazonaws.com/123456789012/accepted.fifo"
	retention     = 24 * time.Hour
)

// start is the test clock's start: the creation time of every record
// claimed before the clock moves, from which message ids derive.
var start = time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)

// env is one test's world: an endpoint, an idempotency table, an outbox
// table (its stream fed by the test from the table's items), a business
// table "orders", a guard over them, and a relay publishing to targets.
type env struct {
	ep      *ddbtest.Endpoint
	client  *dynamodb.Client
	table   string
	outbox  string
	orders  string
	store   *dynamostore.Store
	clock   *testclock.Clock
	targets *targets
	relay   *relay.Relay
	seq     int
	t       *testing.T
}

func newEnv(t *testing.T) *env {
	t.Helper()
	ep := ddbtest.Start(t)
	e := &env{
		ep: ep, client: ep.Client(),
		table: ddbtest.TableName(t, "idem"), outbox: ddbtest.TableName(t, "outbox"), orders: ddbtest.TableName(t, "orders"),
		clock:   testclock.New(start),
		targets: newTargets(),
		t:       t,
	}
	e.targets.now = e.clock.Now
	ctx := context.Background()
	for _, table := range []string{e.table, e.outbox} {
		// The outbox table's schema is the record table's default: "id" (S),
		// TTL on "expiration".
		if err := ddbtest.CreateTable(ctx, e.client, table); err != nil {
			t.Fatal(err)
		}
	}
	if err := ddbtest.CreateTable(ctx, e.client, e.orders, func(o *dynamostore.Options) { o.KeyAttr = "pk" }); err != nil {
		t.Fatal(err)
	}
	var err error
	if e.store, err = dynamostore.New(e.client, e.table, func(o *dynamostore.Options) { o.OutboxTable = e.outbox }); err != nil {
		t.Fatal(err)
	}
	e.relay = e.newRelay(t, e.targets)
	return e
}

func (e *env) newRelay(t *testing.T, p outbox.Publisher) *relay.Relay {
	t.Helper()
	r, err := relay.New(e.client, e.outbox, p, func(o *relay.Options) { o.Now = e.clock.Now; o.Retention = retention })
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func (e *env) guard(t *testing.T) *lambdaidem.Guard {
	t.Helper()
	g, err := lambdaidem.New(e.store, func(o *lambdaidem.Options) {
		o.RetryHorizon = time.Hour
		o.Lease = time.Minute
		o.Now = e.clock.Now
	})
	if err != nil {
		t.Fatal(err)
	}
	return g
}

func call(key string) lambdaidem.Call[string] {
	return lambdaidem.Call[string]{Operation: "AcceptOrder", Key: key, Fingerprint: "fp-" + key}
}

func recordKey(key string) string { return lambdaidem.RecordKey("lambdaidem", "", "AcceptOrder", key) }

// accept runs the "accept order" handler for key: it writes the order and
// stages, in order, an event to the standard queue, one to the FIFO queue
// and a generic item.
func (e *env) accept(ctx context.Context, g *lambdaidem.Guard, key string) error {
	_, err := lambdaidem.Do(ctx, g, call(key), func(ctx context.Context) (string, error) {
		if err := dynamostore.Stage(ctx, types.Put{
			TableName:           aws.String(e.orders),
			Item:                map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: key}},
			ConditionExpression: aws.String("attribute_not_exists(pk)"),
		}); err != nil {
			return "", err
		}
		body := `{"order":"` + key + `","event":"accepted"}`
		if _, err := outbox.Stage(ctx, outbox.SQS{QueueURL: standardQueue, Body: body}); err != nil {
			return "", err
		}
		if _, err := outbox.Stage(ctx, outbox.SQSFIFO{QueueURL: fifoQueue, GroupID: key, Body: body}); err != nil {
			return "", err
		}
		if _, err := outbox.Stage(ctx, outbox.Item{Target: "ledger", Body: body}); err != nil {
			return "", err
		}
		return "accepted " + key, nil
	})
	return err
}

// item reads the outbox item of record key k (nil when absent).
func (e *env) item(t *testing.T, k string) map[string]types.AttributeValue {
	t.Helper()
	out, err := e.client.GetItem(context.Background(), &dynamodb.GetItemInput{
		TableName: aws.String(e.outbox), ConsistentRead: aws.Bool(true),
		Key: map[string]types.AttributeValue{"id": &types.AttributeValueMemberS{Value: k}},
	})
	if err != nil {
		t.Fatal(err)
	}
	return out.Item
}

// state is the outbox item's status, published count and expiration ("" if none).
func (e *env) state(t *testing.T, k string) (status string, published int, expiration string) {
	t.Helper()
	it := e.item(t, k)
	if it == nil {
		return "", 0, ""
	}
	status = it["status"].(*types.AttributeValueMemberS).Value
	published, _ = strconv.Atoi(it["published"].(*types.AttributeValueMemberN).Value)
	if v, ok := it["expiration"].(*types.AttributeValueMemberN); ok {
		expiration = v.Value
	}
	return status, published, expiration
}

// change is the stream record DynamoDB would write for the outbox item of
// record key k as it is now (the DynamoDB stream stand-in: minidyn has no
// streams, so the test feeds the item it reads back), with a new sequence
// number.
func (e *env) change(t *testing.T, eventName, k string) events.DynamoDBEventRecord {
	t.Helper()
	e.seq++
	it := e.item(t, k)
	r := events.DynamoDBEventRecord{
		EventID: fmt.Sprintf("ev-%d", e.seq), EventName: eventName, EventSource: "aws:dynamodb",
		EventSourceArn: "arn:aws:dynamodb:eu-west-1:123456789012:table/" + e.outbox + "/stream/2026-12-01T00:00:00.000",
		Change: events.DynamoDBStreamRecord{
			Keys:           map[string]events.DynamoDBAttributeValue{"id": events.NewStringAttribute(k)},
			SequenceNumber: fmt.Sprintf("%021d", e.seq*100),
			StreamViewType: "NEW_IMAGE",
		},
	}
	if eventName != "REMOVE" {
		r.Change.NewImage = image(it)
	}
	return r
}

func image(m map[string]types.AttributeValue) map[string]events.DynamoDBAttributeValue {
	out := make(map[string]events.DynamoDBAttributeValue, len(m))
	for k, v := range m {
		out[k] = value(v)
	}
	return out
}

func value(v types.AttributeValue) events.DynamoDBAttributeValue {
	switch v := v.(type) {
	case *types.AttributeValueMemberS:
		return events.NewStringAttribute(v.Value)
	case *types.AttributeValueMemberN:
		return events.NewNumberAttribute(v.Value)
	case *types.AttributeValueMemberBOOL:
		return events.NewBooleanAttribute(v.Value)
	case *types.AttributeValueMemberL:
		l := make([]events.DynamoDBAttributeValue, len(v.Value))
		for i, e := range v.Value {
			l[i] = value(e)
		}
		return events.NewListAttribute(l)
	case *types.AttributeValueMemberM:
		return events.NewMapAttribute(image(v.Value))
	}
	return events.NewNullAttribute()
}

// handle runs the relay's handler on records and returns the reported
// sequence numbers.
func (e *env) handle(t *testing.T, r *relay.Relay, recs ...events.DynamoDBEventRecord) []string {
	t.Helper()
	resp, err := r.Handler()(context.Background(), events.DynamoDBEvent{Records: recs})
	if err != nil {
		t.Fatalf("relay handler: %v", err)
	}
	var seqs []string
	for _, f := range resp.BatchItemFailures {
		seqs = append(seqs, f.ItemIdentifier)
	}
	return seqs
}

// targets stands in for the queues the relay publishes to: a FIFO queue
// that drops a message whose deduplication id it saw within the last five
// minutes, as SQS FIFO does ("Any messages sent with the same message
// deduplication ID are accepted successfully but aren't delivered during
// the 5-minute deduplication interval",
// https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/using-messagededuplicationid-property.html),
// a standard queue that delivers every send, and a ledger for generic
// items. The mapping of a Message onto SendMessage's deduplication id is
// outboxaws's, tested there.
type targets struct {
	now func() time.Time

	mu       sync.Mutex
	sends    []outbox.Message           // every Publish, in order
	standard []outbox.Message           // delivered by the standard queue
	fifo     []outbox.Message           // delivered by the FIFO queue
	seen     map[string]time.Time       // FIFO deduplication ids and when first sent
	hook     func(outbox.Message) error // called before a send; its error fails it unsent
	after    func(outbox.Message) error // called after a send; its error loses the answer
}

func newTargets() *targets { return &targets{seen: map[string]time.Time{}, now: time.Now} }

func (tg *targets) Publish(_ context.Context, m outbox.Message) error {
	tg.mu.Lock()
	hook, after := tg.hook, tg.after
	tg.mu.Unlock()
	if hook != nil {
		if err := hook(m); err != nil {
			return err
		}
	}
	tg.mu.Lock()
	tg.sends = append(tg.sends, m)
	switch m.Kind {
	case outbox.KindSQS:
		tg.standard = append(tg.standard, m)
	case outbox.KindSQSFIFO:
		if at, ok := tg.seen[m.ID]; !ok || tg.now().Sub(at) >= outbox.FIFOWindow {
			tg.seen[m.ID] = tg.now()
			tg.fifo = append(tg.fifo, m)
		}
	}
	tg.mu.Unlock()
	if after != nil {
		return after(m)
	}
	return nil
}

// sent returns the bodies and ids of every Publish, in order.
func (tg *targets) sent() []outbox.Message {
	tg.mu.Lock()
	defer tg.mu.Unlock()
	return slices.Clone(tg.sends)
}

func (tg *targets) set(hook, after func(outbox.Message) error) {
	tg.mu.Lock()
	tg.hook, tg.after = hook, after
	tg.mu.Unlock()
}

func eventOf(recs ...events.DynamoDBEventRecord) events.DynamoDBEvent {
	return events.DynamoDBEvent{Records: recs}
}

// consume delivers msgs, as SQS would (each message's attributes as
// String message attributes), to a consumer wrapped by lambdaidem
// (sqsbatch, keyed on outbox.IDAttribute) whose effect is not idempotent
// by itself: it adds one to a counter item. It returns the counter.
func consume(t *testing.T, e *env, msgs []outbox.Message) int {
	t.Helper()
	ctx := context.Background()
	table := ddbtest.TableName(t, "consumer")
	if err := ddbtest.CreateTable(ctx, e.client, table); err != nil {
		t.Fatal(err)
	}
	s, err := dynamostore.New(e.client, table)
	if err != nil {
		t.Fatal(err)
	}
	g, err := lambdaidem.New(s)
	if err != nil {
		t.Fatal(err)
	}
	a, err := sqsbatch.New(g, "OnOrderAccepted", func(o *sqsbatch.Options) { o.Key = sqsbatch.KeyFromAttribute(outbox.IDAttribute) })
	if err != nil {
		t.Fatal(err)
	}
	h := a.Wrap(func(ctx context.Context, m events.SQSMessage) error {
		return dynamostore.Stage(ctx, types.Update{
			TableName:                 aws.String(e.orders),
			Key:                       map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: "effects"}},
			UpdateExpression:          aws.String("ADD n :one"),
			ExpressionAttributeValues: map[string]types.AttributeValue{":one": &types.AttributeValueMemberN{Value: "1"}},
		})
	})
	for i, m := range msgs {
		attrs := map[string]events.SQSMessageAttribute{}
		for k, v := range m.Attributes {
			attrs[k] = events.SQSMessageAttribute{DataType: "String", StringValue: aws.String(v)}
		}
		resp, err := h(ctx, events.SQSEvent{Records: []events.SQSMessage{{
			MessageId: fmt.Sprintf("sqs-%d", i), Body: m.Body, MessageAttributes: attrs, EventSource: "aws:sqs",
		}}})
		if err != nil || len(resp.BatchItemFailures) != 0 {
			t.Fatalf("consumer: %+v, %v", resp, err)
		}
	}
	out, err := e.client.GetItem(ctx, &dynamodb.GetItemInput{
		TableName: aws.String(e.orders), ConsistentRead: aws.Bool(true),
		Key: map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: "effects"}},
	})
	if err != nil || out.Item == nil {
		t.Fatalf("counter: %v", err)
	}
	n, _ := strconv.Atoi(out.Item["n"].(*types.AttributeValueMemberN).Value)
	return n
}
