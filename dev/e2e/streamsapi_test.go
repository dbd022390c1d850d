//go:build e2e

package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http/httptest"
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
	"github.com/lambdaidem/lambdaidem/outboxaws"
)

// startDynoxide starts Dynoxide, the world with a DynamoDB Streams API (the
// embedded endpoint has none), or skips t in one line without it.
func startDynoxide(t *testing.T) *ddbtest.DynoxideServer {
	t.Helper()
	d, err := ddbtest.LaunchDynoxide(t.Context())
	if errors.Is(err, ddbtest.ErrNoDynoxide) {
		t.Skip(err)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(d.Close)
	return d
}

// The outbox relay fed by a real stream: the outbox table's stream read
// through Dynoxide's Streams API (DescribeStream, GetShardIterator,
// GetRecords), delivered with the event source mapping's rules, the relay
// publishing over the SDK to goaws and a lambdaidem consumer behind the
// SQS poller; DynamoDB requests go through ddbtest's proxy in front of
// Dynoxide, which fails the relay's marks (every SDK attempt, 12 times: a
// crash between a publish and its mark, over and over). Of 12 operations
// every third fails after staging its message: the relay publishes exactly
// the committed messages (some twice, with the same id), the consumer's
// effect runs once per committed operation, and the stream also carries
// the relay's own marks (MODIFY records), which publish nothing.
func TestOutboxRelayReadsTheStreamsAPI(t *testing.T) {
	d := startDynoxide(t)
	ctx := t.Context()
	proxy := ddbtest.NewProxy(ddbtest.Forward(d.URL), func(o *ddbtest.ProxyOptions) { o.Backend = ddbtest.Dynoxide() })
	srv := httptest.NewServer(proxy)
	t.Cleanup(srv.Close)
	client := ddbtest.NewClient(srv.URL)
	q, err := e2estack.StartSQS(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(q.Close)
	queueURL, err := q.CreateQueue(ctx, e2estack.QueueSpec{Name: "streams-api-accepted", VisibilityTimeout: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	for _, table := range []string{"orders-idem", "outbox", "consumer-idem"} {
		if err := ddbtest.CreateTable(ctx, client, table); err != nil {
			t.Fatal(err)
		}
	}
	for _, table := range []string{"orders", "effects"} {
		if err := e2estack.CreateBusinessTable(ctx, client, table); err != nil {
			t.Fatal(err)
		}
	}
	arn, err := e2estack.EnableStream(ctx, client, "outbox")
	if err != nil {
		t.Fatal(err)
	}

	store, err := dynamostore.New(client, "orders-idem", func(o *dynamostore.Options) { o.OutboxTable = "outbox" })
	if err != nil {
		t.Fatal(err)
	}
	producer, err := lambdaidem.New(store)
	if err != nil {
		t.Fatal(err)
	}
	p, err := outboxaws.New(outboxaws.Options{SQS: e2estack.NewSQSClient(q.URL, true)})
	if err != nil {
		t.Fatal(err)
	}
	r, err := relay.New(client, "outbox", p)
	if err != nil {
		t.Fatal(err)
	}
	stream := e2estack.NewDynamoDBStream("outbox", e2estack.StreamOptions{Shards: 1})
	tail := e2estack.TailStream(context.WithoutCancel(ctx), e2estack.NewStreamsClient(d.URL), arn, stream, 0)
	t.Cleanup(tail.Stop)
	sp, err := e2estack.NewStreamPoller(e2estack.StreamPollerOptions{
		Stream: stream, Function: inProcess[events.DynamoDBEvent, events.DynamoDBEventResponse](r.Handler()), BatchSize: 5,
		ReportBatchItemFailures: true, BisectBatchOnFunctionError: true, MaximumRetryAttempts: 20, RetryDelay: 20 * time.Millisecond,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(sp.Start(context.WithoutCancel(ctx)))

	qp := startOrderConsumer(t, client, q, queueURL, "arn:aws:sqs:us-east-1:000000000000:streams-api-accepted")

	onOutbox := func(body []byte) bool { return bytes.Contains(body, []byte(`"TableName":"outbox"`)) }
	remove := proxy.Inject(ddbtest.Rule{Op: "UpdateItem", Fault: ddbtest.InternalServerError, Times: 12, Match: onOutbox})
	defer remove()

	const n = 12
	errDeclined := errors.New("declined after staging")
	committed := map[string]bool{}
	for i := range n {
		order := fmt.Sprintf("o-%02d", i)
		_, err := lambdaidem.Do(ctx, producer, lambdaidem.Call[string]{Operation: "AcceptOrder", Key: order}, func(ctx context.Context) (string, error) {
			if err := dynamostore.Stage(ctx, ddbtypes.Put{TableName: aws.String("orders"),
				Item: map[string]ddbtypes.AttributeValue{"id": &ddbtypes.AttributeValueMemberS{Value: order}}}); err != nil {
				return "", err
			}
			if _, err := outbox.Stage(ctx, outbox.SQS{QueueURL: queueURL, Body: `{"order":"` + order + `","event":"accepted"}`}); err != nil {
				return "", err
			}
			if i%3 == 2 {
				return "", errDeclined
			}
			return "accepted", nil
		})
		switch {
		case i%3 == 2 && errors.Is(err, errDeclined):
		case i%3 != 2 && err == nil:
			committed[order] = true
		default:
			t.Fatalf("order %s: %v", order, err)
		}
	}

	effects := map[string]int{}
	eventually(t, 60*time.Second, 50*time.Millisecond, "every committed message reaches the consumer", func() bool {
		scan, err := client.Scan(ctx, &dynamodb.ScanInput{TableName: aws.String("effects"), ConsistentRead: aws.Bool(true)})
		if err != nil {
			t.Fatal(err)
		}
		clear(effects)
		for _, it := range scan.Items {
			c, _ := strconv.Atoi(it["n"].(*ddbtypes.AttributeValueMemberN).Value)
			effects[it["id"].(*ddbtypes.AttributeValueMemberS).Value] = c
		}
		visible, inFlight, _ := e2estack.Depth(ctx, q.Client, queueURL)
		return len(effects) >= len(committed) && visible == 0 && inFlight == 0
	})
	// The marks come back as MODIFY records: wait for them to be delivered
	// too, then nothing more may have been published.
	eventually(t, 30*time.Second, 50*time.Millisecond, "the marks' own records are read and delivered", func() bool {
		read, _ := tail.Read()
		sh := stream.Shards()[0]
		return read >= 2*len(committed) && sp.Checkpoint(sh) == stream.Len(sh)
	})
	for order := range committed {
		if effects[order] != 1 {
			t.Errorf("order %s: the consumer's effect ran %d times; want 1", order, effects[order])
		}
	}
	for order := range effects {
		if !committed[order] {
			t.Errorf("order %s was declined, yet its message was published", order)
		}
	}
	received, published := 0, map[string]int{}
	for _, b := range qp.Batches() {
		received += len(b.MessageIDs)
		for _, body := range b.Bodies {
			var ev struct {
				Order string `json:"order"`
			}
			if err := json.Unmarshal([]byte(body), &ev); err != nil {
				t.Fatalf("message %q: %v", body, err)
			}
			published[ev.Order]++
		}
	}
	for order := range published {
		if !committed[order] {
			t.Errorf("order %s was declined, yet its message was published", order)
		}
	}
	if len(published) != len(committed) {
		t.Errorf("messages of %d orders received, %d committed", len(published), len(committed))
	}
	if received <= len(committed) {
		t.Errorf("the consumer received %d messages for %d operations: the failed marks should have republished some", received, len(committed))
	}
	scan, err := client.Scan(ctx, &dynamodb.ScanInput{TableName: aws.String("outbox"), ConsistentRead: aws.Bool(true)})
	if err != nil {
		t.Fatal(err)
	}
	if len(scan.Items) != len(committed) {
		t.Errorf("%d outbox items for %d committed operations", len(scan.Items), len(committed))
	}
	for _, it := range scan.Items {
		if s := it["status"].(*ddbtypes.AttributeValueMemberS).Value; s != "PUBLISHED" {
			t.Errorf("outbox item %v: %s; want PUBLISHED", it["id"], s)
		}
	}
	read, _ := tail.Read()
	t.Logf("%d operations, %d committed, %d stream records read through the Streams API, %d stream batches, %d messages received",
		n, len(committed), read, len(sp.Batches()), received)
}

// The DynamoDB Streams source end to end on a real stream: the ledger
// function (examples/stream, LEDGER_SOURCE=dynamodb) under the Runtime
// Interface Emulator, fed by a transfers table's stream read through
// Dynoxide's Streams API. One transaction puts five transfers (one batch),
// a later update modifies one and a delete removes another: each INSERT is
// booked once, the MODIFY and REMOVE book nothing.
func TestDynamoDBStreamSourceReadsTheStreamsAPI(t *testing.T) {
	d := startDynoxide(t)
	ctx := t.Context()
	root, err := e2estack.ModuleRoot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	client := ddbtest.NewClient(d.URL)
	if err := ddbtest.CreateTable(ctx, client, "ledger-idempotency"); err != nil {
		t.Fatal(err)
	}
	if err := e2estack.CreateBusinessTable(ctx, client, "ledger"); err != nil {
		t.Fatal(err)
	}
	if err := ddbtest.CreateTable(ctx, client, "transfers", func(o *dynamostore.Options) { o.KeyAttr = "transfer_id" }); err != nil {
		t.Fatal(err)
	}
	arn, err := e2estack.EnableStream(ctx, client, "transfers")
	if err != nil {
		t.Fatal(err)
	}
	bin, err := e2estack.Build(ctx, e2estack.BuildOptions{ModuleRoot: root, Package: "./examples/stream", Out: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	fn := rie.Run(t, rie.Options{Bootstrap: bin, Name: "ledger-outbox", Timeout: streamFunctionTimeout, DynamoDBEndpoint: d.URL,
		Env: map[string]string{"IDEMPOTENCY_TABLE": "ledger-idempotency", "LEDGER_TABLE": "ledger", "IDEMPOTENCY_TTL": "24h", "LEDGER_SOURCE": "dynamodb"}})

	stream := e2estack.NewDynamoDBStream("transfers", e2estack.StreamOptions{Shards: 1})
	tail := e2estack.TailStream(context.WithoutCancel(ctx), e2estack.NewStreamsClient(d.URL), arn, stream, 0)
	t.Cleanup(tail.Stop)
	poller, err := e2estack.NewStreamPoller(e2estack.StreamPollerOptions{
		Stream: stream, Function: fn, BatchSize: 10,
		ReportBatchItemFailures: true, BisectBatchOnFunctionError: true, MaximumRetryAttempts: streamRetryAttempts,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(poller.Start(context.WithoutCancel(ctx)))

	transfer := func(id string, amount int) map[string]ddbtypes.AttributeValue {
		return map[string]ddbtypes.AttributeValue{
			"transfer_id": &ddbtypes.AttributeValueMemberS{Value: id},
			"account":     &ddbtypes.AttributeValueMemberS{Value: "acc-9"},
			"amount":      &ddbtypes.AttributeValueMemberN{Value: strconv.Itoa(amount)},
		}
	}
	ids := make([]string, 5)
	puts := make([]ddbtypes.TransactWriteItem, len(ids))
	for i := range ids {
		ids[i] = unique("tr")
		puts[i] = ddbtypes.TransactWriteItem{Put: &ddbtypes.Put{TableName: aws.String("transfers"), Item: transfer(ids[i], 700+i)}}
	}
	if _, err := client.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: puts}); err != nil {
		t.Fatal(err)
	}
	if _, err := client.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String("transfers"), Item: transfer(ids[0], 1)}); err != nil {
		t.Fatal(err)
	}
	if _, err := client.DeleteItem(ctx, &dynamodb.DeleteItemInput{TableName: aws.String("transfers"),
		Key: map[string]ddbtypes.AttributeValue{"transfer_id": &ddbtypes.AttributeValueMemberS{Value: ids[1]}}}); err != nil {
		t.Fatal(err)
	}
	wctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if err := tail.WaitFor(wctx, len(ids)+2); err != nil {
		t.Fatal(err)
	}
	waitDone(t, stream, poller, 60*time.Second)

	for i, id := range ids {
		it := itemsWhere(t, client, "ledger", "id", id)
		if len(it) != 1 {
			t.Errorf("transfer %s booked %d times", id, len(it))
			continue
		}
		if n, ok := it[0]["amount"].(*ddbtypes.AttributeValueMemberN); !ok || n.Value != strconv.Itoa(700+i) {
			t.Errorf("transfer %s: booked %v, want %d (a MODIFY or REMOVE changed the booking)", id, it[0]["amount"], 700+i)
		}
	}
	if f := poller.Failures(); len(f) != 0 {
		t.Fatalf("records discarded: %+v", f)
	}
	read, _ := tail.Read()
	t.Logf("%d stream records read through the Streams API, %d batches", read, len(poller.Batches()))
}
