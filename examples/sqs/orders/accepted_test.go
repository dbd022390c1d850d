package orders_test

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/lambdaidem/lambdaidem/ddbtest"
	"github.com/lambdaidem/lambdaidem/dynamostore"
	"github.com/lambdaidem/lambdaidem/dynamostore/relay"
	"github.com/lambdaidem/lambdaidem/examples/sqs/orders"
	"github.com/lambdaidem/lambdaidem/lambdaidem"
	"github.com/lambdaidem/lambdaidem/lambdaidem/outbox"
	"github.com/lambdaidem/lambdaidem/lambdaidem/sqsbatch"
)

const acceptedQueue = "https://sqs.eu-west-1.amazonaws.com/123456789012/order-accepted.fifo"

// published records what the relay hands its publisher.
type published struct {
	mu   sync.Mutex
	msgs []outbox.Message
}

func (p *published) Publish(_ context.Context, m outbox.Message) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.msgs = append(p.msgs, m)
	return nil
}

// The "order accepted" event is committed with the order through the
// outbox: an order delivered three times is one order and one event, an
// invalid order is neither, and the relay publishes the event once, to the
// FIFO queue, grouped by order, with its id as the deduplication id.
func TestOrderAcceptedEventGoesThroughTheOutbox(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t)
	outboxTable := ddbtest.TableName(t, "outbox")
	if err := ddbtest.CreateTable(ctx, e.client, outboxTable); err != nil {
		t.Fatal(err)
	}
	store, err := dynamostore.New(e.client, e.idemTable, func(o *dynamostore.Options) { o.OutboxTable = outboxTable })
	if err != nil {
		t.Fatal(err)
	}
	g, err := lambdaidem.New(store)
	if err != nil {
		t.Fatal(err)
	}
	h, err := orders.NewBatchHandler(g, orders.Handler{Table: e.ordersTable, Accepted: acceptedQueue})
	if err != nil {
		t.Fatal(err)
	}
	msg := message("m-1", order("o-2001", 700))
	for range 3 {
		if got := invoke(t, h, msg); len(got) != 0 {
			t.Fatalf("failures %v", got)
		}
	}
	if got := invoke(t, h, message("m-2", `{"order_id":"o-2002"}`)); len(got) != 1 {
		t.Fatalf("invalid order not reported: %v", got)
	}
	if n := e.count(t, outboxTable); n != 1 {
		t.Fatalf("%d outbox items; want 1 (one accepted order)", n)
	}

	p := &published{}
	r, err := relay.New(e.client, outboxTable, p)
	if err != nil {
		t.Fatal(err)
	}
	recordKey := lambdaidem.RecordKey("lambdaidem", "", orders.Operation, "o-2001")
	for range 2 { // a redelivered stream record publishes nothing more
		if err := r.Publish(ctx, recordKey); err != nil {
			t.Fatal(err)
		}
	}
	if len(p.msgs) != 1 {
		t.Fatalf("published %d; want 1", len(p.msgs))
	}
	m := p.msgs[0]
	var ev orders.AcceptedEvent
	if err := json.Unmarshal([]byte(m.Body), &ev); err != nil || ev != (orders.AcceptedEvent{Event: "OrderAccepted", OrderID: "o-2001", Total: 700}) {
		t.Errorf("event %s (%v)", m.Body, err)
	}
	if m.Kind != outbox.KindSQSFIFO || m.Target != acceptedQueue || m.GroupID != "o-2001" ||
		!strings.HasPrefix(m.ID, lambdaidem.OperationKey(recordKey)+"-") || !strings.HasSuffix(m.ID, "-0") {
		t.Errorf("message %+v", m)
	}
}

// A consumer of the events wrapped by lambdaidem and keyed on the
// message's id runs its effect once per event, even if a queue without
// deduplication delivered it twice (the relay resends after a crash
// between publish and mark): here the FIFO queue's deduplication id, which
// SQS passes to the consumer as the attribute MessageDeduplicationId. For a
// standard queue, key on sqsbatch.KeyFromAttribute(outbox.IDAttribute).
func TestAcceptedConsumerDedupesOnTheMessageID(t *testing.T) {
	e := newEnv(t)
	a, err := sqsbatch.New(e.guard, "OnOrderAccepted", func(o *sqsbatch.Options) { o.Key = sqsbatch.KeyFromDeduplicationID })
	if err != nil {
		t.Fatal(err)
	}
	effects := 0
	h := a.Wrap(func(context.Context, events.SQSMessage) error { effects++; return nil })
	id := outbox.ID(lambdaidem.OperationKey("k"), time.Unix(0, 0), 0)
	for i := range 2 {
		m := message("delivery-"+string(rune('a'+i)), `{"event":"OrderAccepted","order_id":"o-1"}`)
		m.Attributes["MessageDeduplicationId"] = id
		if got := invoke(t, h, m); len(got) != 0 {
			t.Fatal(got)
		}
	}
	if effects != 1 {
		t.Errorf("effect ran %d times; want 1", effects)
	}
}
