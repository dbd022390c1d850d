//go:build e2e

package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	ddbtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/lambdaidem/lambdaidem/ddbtest"
	"github.com/lambdaidem/lambdaidem/ddbtest/rie"
	"github.com/lambdaidem/lambdaidem/dev/e2estack"
	"github.com/lambdaidem/lambdaidem/dynamostore"
	"github.com/lambdaidem/lambdaidem/dynamostore/relay"
	"github.com/lambdaidem/lambdaidem/lambdaidem"
	"github.com/lambdaidem/lambdaidem/lambdaidem/outbox"
	"github.com/lambdaidem/lambdaidem/lambdaidem/sqsbatch"
	"github.com/lambdaidem/lambdaidem/outboxaws"
)

// inProcess is an Invoker that runs a Lambda handler in this process: the
// event source pollers' payloads in, the handler's JSON answer out.
type inProcess[E, R any] func(context.Context, E) (R, error)

func (h inProcess[E, R]) Invoke(ctx context.Context, payload []byte) (rie.Invocation, error) {
	start := time.Now()
	var ev E
	if err := json.Unmarshal(payload, &ev); err != nil {
		return rie.Invocation{}, err
	}
	resp, err := h(ctx, ev)
	if err != nil {
		return rie.Invocation{Status: 200, Payload: []byte(strconv.Quote(err.Error())), FunctionError: "error", Duration: time.Since(start)}, nil
	}
	out, err := json.Marshal(resp)
	return rie.Invocation{Status: 200, Payload: out, Duration: time.Since(start)}, err
}

// The outbox end to end: 20 operations each commit an order and an "order
// accepted" message to a standard queue; the DynamoDB stream stand-in feeds
// each outbox item to the relay through the stream event source poller
// (partial batch responses, bisection, retries); the relay publishes over
// the SDK to goaws; the SQS event source poller feeds the queue to a
// consumer wrapped by lambdaidem, keyed on the message id, whose effect
// adds one to the order's counter. The relay's marks fail (every SDK
// attempt) for a while, so some messages are published twice with the
// same id: every order's counter still ends at exactly 1.
func TestOutboxOneEffectPerOperation(t *testing.T) {
	ctx := t.Context()
	ddb, err := e2estack.StartDynamoDB(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(ddb.Close)
	q, err := e2estack.StartSQS(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(q.Close)
	queueURL, err := q.CreateQueue(ctx, e2estack.QueueSpec{Name: "order-accepted", VisibilityTimeout: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	for _, table := range []string{"orders-idem", "outbox", "consumer-idem"} {
		if err := ddbtest.CreateTable(ctx, ddb.Client, table); err != nil {
			t.Fatal(err)
		}
	}
	for _, table := range []string{"orders", "effects"} {
		if err := e2estack.CreateBusinessTable(ctx, ddb.Client, table); err != nil {
			t.Fatal(err)
		}
	}

	// The producer: a guard over the orders' idempotency table with the outbox.
	store, err := dynamostore.New(ddb.Client, "orders-idem", func(o *dynamostore.Options) { o.OutboxTable = "outbox" })
	if err != nil {
		t.Fatal(err)
	}
	producer, err := lambdaidem.New(store)
	if err != nil {
		t.Fatal(err)
	}

	// The relay, fed by the stream poller.
	p, err := outboxaws.New(outboxaws.Options{SQS: e2estack.NewSQSClient(q.URL, true)})
	if err != nil {
		t.Fatal(err)
	}
	r, err := relay.New(ddb.Client, "outbox", p)
	if err != nil {
		t.Fatal(err)
	}
	stream := e2estack.NewDynamoDBStream("outbox", e2estack.StreamOptions{Shards: 1})
	sp, err := e2estack.NewStreamPoller(e2estack.StreamPollerOptions{
		Stream: stream, Function: inProcess[events.DynamoDBEvent, events.DynamoDBEventResponse](r.Handler()), BatchSize: 5,
		ReportBatchItemFailures: true, BisectBatchOnFunctionError: true, MaximumRetryAttempts: 20, RetryDelay: 20 * time.Millisecond,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(sp.Start(context.WithoutCancel(ctx)))

	// The consumer, fed by the SQS poller.
	qp := startOrderConsumer(t, ddb.Client, q, queueURL, "arn:aws:sqs:us-east-1:000000000000:order-accepted")

	// The relay's marks on the outbox fail, every SDK attempt, 12 times: a
	// crash between a publish and its mark, three times over.
	onOutbox := func(body []byte) bool { return bytes.Contains(body, []byte(`"TableName":"outbox"`)) }
	remove := ddb.Proxy.Inject(ddbtest.Rule{Op: "UpdateItem", Fault: ddbtest.InternalServerError, Times: 12, Match: onOutbox})
	defer remove()

	const n = 20
	for i := range n {
		order := fmt.Sprintf("o-%02d", i)
		_, err := lambdaidem.Do(ctx, producer, lambdaidem.Call[string]{Operation: "AcceptOrder", Key: order}, func(ctx context.Context) (string, error) {
			if err := dynamostore.Stage(ctx, ddbtypes.Put{TableName: aws.String("orders"),
				Item: map[string]ddbtypes.AttributeValue{"id": &ddbtypes.AttributeValueMemberS{Value: order}}}); err != nil {
				return "", err
			}
			_, err := outbox.Stage(ctx, outbox.SQS{QueueURL: queueURL, Body: `{"order":"` + order + `","event":"accepted"}`})
			return "accepted", err
		})
		if err != nil {
			t.Fatal(err)
		}
		// The stream record DynamoDB writes for the commit's outbox item
		// (the stand-in is fed from the item as the table holds it).
		key := lambdaidem.RecordKey("lambdaidem", "", "AcceptOrder", order)
		out, err := ddb.Client.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String("outbox"), ConsistentRead: aws.Bool(true),
			Key: map[string]ddbtypes.AttributeValue{"id": &ddbtypes.AttributeValueMemberS{Value: key}}})
		if err != nil || out.Item == nil {
			t.Fatalf("outbox item of %s: %v", order, err)
		}
		stream.PutChange(e2estack.Change{EventName: "INSERT",
			Keys: map[string]events.DynamoDBAttributeValue{"id": events.NewStringAttribute(key)}, NewImage: streamImage(out.Item)})
	}

	deadline := time.Now().Add(60 * time.Second)
	for {
		effects := map[string]int{}
		scan, err := ddb.Client.Scan(ctx, &dynamodb.ScanInput{TableName: aws.String("effects"), ConsistentRead: aws.Bool(true)})
		if err != nil {
			t.Fatal(err)
		}
		for _, it := range scan.Items {
			c, _ := strconv.Atoi(it["n"].(*ddbtypes.AttributeValueMemberN).Value)
			effects[it["id"].(*ddbtypes.AttributeValueMemberS).Value] = c
		}
		visible, inFlight, _ := e2estack.Depth(ctx, q.Client, queueURL)
		if len(effects) == n && visible == 0 && inFlight == 0 {
			for order, c := range effects {
				if c != 1 {
					t.Errorf("order %s: the consumer's effect ran %d times; want 1", order, c)
				}
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after 60s: %d of %d orders reached the consumer (%v), queue %d visible %d in flight", len(effects), n, effects, visible, inFlight)
		}
		time.Sleep(50 * time.Millisecond)
	}
	received := 0
	for _, b := range qp.Batches() {
		received += len(b.MessageIDs)
	}
	if received <= n {
		t.Errorf("the consumer received %d messages for %d operations: the failed marks should have republished some", received, n)
	}
	scan, err := ddb.Client.Scan(ctx, &dynamodb.ScanInput{TableName: aws.String("outbox"), ConsistentRead: aws.Bool(true)})
	if err != nil {
		t.Fatal(err)
	}
	for _, it := range scan.Items {
		if s := it["status"].(*ddbtypes.AttributeValueMemberS).Value; s != "PUBLISHED" || it["expiration"] == nil {
			t.Errorf("outbox item %v: %s; want PUBLISHED with a TTL", it["id"], s)
		}
	}
	t.Logf("%d operations, %d messages received by the consumer, %d stream batches", n, received, len(sp.Batches()))
}

// streamImage converts an item as the SDK reads it into a stream record's
// image.
func streamImage(m map[string]ddbtypes.AttributeValue) map[string]events.DynamoDBAttributeValue {
	out := make(map[string]events.DynamoDBAttributeValue, len(m))
	for k, v := range m {
		out[k] = streamValue(v)
	}
	return out
}

func streamValue(v ddbtypes.AttributeValue) events.DynamoDBAttributeValue {
	switch v := v.(type) {
	case *ddbtypes.AttributeValueMemberS:
		return events.NewStringAttribute(v.Value)
	case *ddbtypes.AttributeValueMemberN:
		return events.NewNumberAttribute(v.Value)
	case *ddbtypes.AttributeValueMemberBOOL:
		return events.NewBooleanAttribute(v.Value)
	case *ddbtypes.AttributeValueMemberL:
		l := make([]events.DynamoDBAttributeValue, len(v.Value))
		for i, e := range v.Value {
			l[i] = streamValue(e)
		}
		return events.NewListAttribute(l)
	case *ddbtypes.AttributeValueMemberM:
		return events.NewMapAttribute(streamImage(v.Value))
	}
	return events.NewNullAttribute()
}

// startOrderConsumer starts the "order accepted" consumer: a handler
// wrapped by lambdaidem (sqsbatch, keyed on the outbox message id) whose
// effect adds one to the order's counter in the effects table, fed by the
// SQS poller from queueURL. The counters show how often each effect ran.
func startOrderConsumer(t *testing.T, client *dynamodb.Client, q *e2estack.SQS, queueURL, queueARN string) *e2estack.Poller {
	t.Helper()
	ctx := t.Context()
	cstore, err := dynamostore.New(client, "consumer-idem")
	if err != nil {
		t.Fatal(err)
	}
	cg, err := lambdaidem.New(cstore)
	if err != nil {
		t.Fatal(err)
	}
	ca, err := sqsbatch.New(cg, "OnOrderAccepted", func(o *sqsbatch.Options) { o.Key = sqsbatch.KeyFromAttribute(outbox.IDAttribute) })
	if err != nil {
		t.Fatal(err)
	}
	consumer := ca.Wrap(func(ctx context.Context, m events.SQSMessage) error {
		var ev struct {
			Order string `json:"order"`
		}
		if err := json.Unmarshal([]byte(m.Body), &ev); err != nil {
			return err
		}
		return dynamostore.Stage(ctx, ddbtypes.Update{
			TableName:                 aws.String("effects"),
			Key:                       map[string]ddbtypes.AttributeValue{"id": &ddbtypes.AttributeValueMemberS{Value: ev.Order}},
			UpdateExpression:          aws.String("ADD n :one"),
			ExpressionAttributeValues: map[string]ddbtypes.AttributeValue{":one": &ddbtypes.AttributeValueMemberN{Value: "1"}},
		})
	})
	qp, err := e2estack.NewPoller(e2estack.PollerOptions{
		Client: q.Client, QueueURL: queueURL, QueueARN: queueARN,
		Function: inProcess[events.SQSEvent, events.SQSEventResponse](consumer), BatchSize: 10,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(qp.Start(context.WithoutCancel(ctx)))
	return qp
}
