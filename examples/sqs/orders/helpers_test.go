package orders_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/lambdaidem/lambdaidem/ddbtest"
	"github.com/lambdaidem/lambdaidem/dynamostore"
	"github.com/lambdaidem/lambdaidem/examples/sqs/orders"
	"github.com/lambdaidem/lambdaidem/lambdaidem"
	"github.com/lambdaidem/lambdaidem/lambdaidem/sqsbatch"
)

// env is the orders consumer over dynamostore on the test endpoint, with a
// fresh idempotency table and orders table.
type env struct {
	ep          *ddbtest.Endpoint
	client      *dynamodb.Client
	idemTable   string
	ordersTable string
	guard       *lambdaidem.Guard

	mu   sync.Mutex
	runs map[string]int // message id → handler runs
}

func newEnv(t *testing.T) *env {
	t.Helper()
	ctx := context.Background()
	e := &env{ep: ddbtest.Start(t), runs: map[string]int{}}
	e.client = e.ep.Client()
	e.idemTable = ddbtest.TableName(t, "idem")
	e.ordersTable = ddbtest.TableName(t, "orders")
	if err := ddbtest.CreateTable(ctx, e.client, e.idemTable); err != nil {
		t.Fatal(err)
	}
	_, err := e.client.CreateTable(ctx, &dynamodb.CreateTableInput{
		TableName:            aws.String(e.ordersTable),
		BillingMode:          types.BillingModePayPerRequest,
		AttributeDefinitions: []types.AttributeDefinition{{AttributeName: aws.String("id"), AttributeType: types.ScalarAttributeTypeS}},
		KeySchema:            []types.KeySchemaElement{{AttributeName: aws.String("id"), KeyType: types.KeyTypeHash}},
	})
	if err != nil {
		t.Fatal(err)
	}
	waitActive(t, e.client, e.ordersTable)
	store, err := dynamostore.New(e.client, e.idemTable)
	if err != nil {
		t.Fatal(err)
	}
	if e.guard, err = lambdaidem.New(store); err != nil {
		t.Fatal(err)
	}
	return e
}

// handler is the orders consumer's batch handler, as main builds it, with
// a hook that runs before each message's handler and counts the runs.
func (e *env) handler(t *testing.T, before func(events.SQSMessage), optFns ...func(*sqsbatch.Options)) func(context.Context, events.SQSEvent) (events.SQSEventResponse, error) {
	t.Helper()
	h := orders.Handler{Table: e.ordersTable}
	a, err := sqsbatch.New(e.guard, orders.Operation, append([]func(*sqsbatch.Options){orders.Configure}, optFns...)...)
	if err != nil {
		t.Fatal(err)
	}
	wrapped := a.Wrap(func(ctx context.Context, m events.SQSMessage) error {
		e.mu.Lock()
		e.runs[m.MessageId]++
		e.mu.Unlock()
		if before != nil {
			before(m)
		}
		return h.Handle(ctx, m)
	})
	return wrapped
}

func (e *env) ran(id string) int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.runs[id]
}

// invoke runs a batch with a deadline, as Lambda would.
func invoke(t *testing.T, h func(context.Context, events.SQSEvent) (events.SQSEventResponse, error), msgs ...events.SQSMessage) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	resp, err := h(ctx, events.SQSEvent{Records: msgs})
	if err != nil {
		t.Fatalf("batch handler error: %v", err)
	}
	return failed(resp)
}

func failed(resp events.SQSEventResponse) []string {
	ids := []string{}
	for _, f := range resp.BatchItemFailures {
		ids = append(ids, f.ItemIdentifier)
	}
	return ids
}

// count returns the number of items in a table.
func (e *env) count(t *testing.T, table string) int {
	t.Helper()
	out, err := e.client.Scan(context.Background(), &dynamodb.ScanInput{TableName: aws.String(table), ConsistentRead: aws.Bool(true)})
	if err != nil {
		t.Fatal(err)
	}
	return len(out.Items)
}

// message is an SQS message of the orders queue carrying body.
func message(id, body string) events.SQSMessage {
	return events.SQSMessage{
		MessageId:      id,
		ReceiptHandle:  "AQEB-" + id,
		Body:           body,
		Attributes:     map[string]string{"ApproximateReceiveCount": "1", "SentTimestamp": "1767168000000"},
		EventSourceARN: "arn:aws:sqs:eu-west-1:123456789012:orders",
		EventSource:    "aws:sqs",
		AWSRegion:      "eu-west-1",
	}
}

// order is a valid order body.
func order(id string, total int) string {
	return fmt.Sprintf(`{"order_id":%q,"customer":"c-17","items":[{"sku":"tea","qty":2}],"total":%d}`, id, total)
}

// waitActive polls DescribeTable until table is ACTIVE, or reports no
// status (minidyn's tables are ready at once and report none; the SDK's
// TableExists waiter does not accept that).
func waitActive(t *testing.T, client *dynamodb.Client, table string) {
	t.Helper()
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		out, err := client.DescribeTable(context.Background(), &dynamodb.DescribeTableInput{TableName: aws.String(table)})
		if err != nil {
			t.Fatal(err)
		}
		if s := out.Table.TableStatus; s == types.TableStatusActive || s == "" {
			return
		}
	}
	t.Fatalf("table %s is not active after a minute", table)
}
