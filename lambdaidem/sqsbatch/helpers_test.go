package sqsbatch_test

import (
	"context"
	"encoding/json"
	"errors"
	"github.com/lambdaidem/lambdaidem/internal/testclock"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/lambdaidem/lambdaidem/lambdaidem"
	"github.com/lambdaidem/lambdaidem/lambdaidem/memstore"
	"github.com/lambdaidem/lambdaidem/lambdaidem/sqsbatch"
)

// loadEvent reads an SQS event fixture from testdata.
func loadEvent(t testing.TB, name string) events.SQSEvent {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	var ev events.SQSEvent
	if err := json.Unmarshal(b, &ev); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return ev
}

// records returns an event holding the records of ev at the given indexes.
func records(ev events.SQSEvent, idx ...int) events.SQSEvent {
	var out events.SQSEvent
	for _, i := range idx {
		out.Records = append(out.Records, ev.Records[i])
	}
	return out
}

// redeliver returns the records of ev that resp reports failed, as SQS
// would deliver them again.
func redeliver(ev events.SQSEvent, resp events.SQSEventResponse) events.SQSEvent {
	var out events.SQSEvent
	for _, r := range ev.Records {
		if slices.Contains(failedIDs(resp), r.MessageId) {
			out.Records = append(out.Records, r)
		}
	}
	return out
}

func failedIDs(resp events.SQSEventResponse) []string {
	ids := []string{}
	for _, f := range resp.BatchItemFailures {
		ids = append(ids, f.ItemIdentifier)
	}
	return ids
}

func ids(ev events.SQSEvent, idx ...int) []string {
	out := []string{}
	for _, i := range idx {
		out = append(out, ev.Records[i].MessageId)
	}
	return out
}

// orders is a per-message handler that stages one order item per message
// in the memstore, keyed by the body's order_id, and counts its runs. It
// fails for the message ids in fail.
type orders struct {
	mu    sync.Mutex
	runs  map[string]int // message id → runs
	fail  map[string]error
	delay time.Duration
}

func newOrders() *orders { return &orders{runs: map[string]int{}, fail: map[string]error{}} }

func (o *orders) handle(ctx context.Context, m events.SQSMessage) error {
	o.mu.Lock()
	o.runs[m.MessageId]++
	err := o.fail[m.MessageId]
	o.mu.Unlock()
	if o.delay > 0 {
		time.Sleep(o.delay)
	}
	if err != nil {
		return err
	}
	var body struct {
		OrderID string `json:"order_id"`
	}
	if err := json.Unmarshal([]byte(m.Body), &body); err != nil {
		return err
	}
	return memstore.Stage(ctx, memstore.Put{Table: "orders", Key: body.OrderID, Value: []byte(m.Body), IfAbsent: true})
}

func (o *orders) ran(id string) int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.runs[id]
}

func (o *orders) total() int {
	o.mu.Lock()
	defer o.mu.Unlock()
	n := 0
	for _, r := range o.runs {
		n += r
	}
	return n
}

// setup is a guard over a fresh memstore and a batch handler over h keyed
// by order_id.
type setup struct {
	store   *memstore.Store
	guard   *lambdaidem.Guard
	clock   *testclock.Clock
	handler func(context.Context, events.SQSEvent) (events.SQSEventResponse, error)
}

func newSetup(t testing.TB, h func(context.Context, events.SQSMessage) error, storeOpts []func(*memstore.Options), optFns ...func(*sqsbatch.Options)) *setup {
	t.Helper()
	s := &setup{store: memstore.New(storeOpts...), clock: testclock.New(time.Now())}
	var err error
	s.guard, err = lambdaidem.New(s.store, func(o *lambdaidem.Options) {
		o.Now = s.clock.Now
		o.Renew = lambdaidem.RenewNever // standard Lambda: a crashed owner's lease lapses at its deadline
	})
	if err != nil {
		t.Fatal(err)
	}
	opts := append([]func(*sqsbatch.Options){func(o *sqsbatch.Options) { o.Key = sqsbatch.KeyFromJSONField("order_id") }}, optFns...)
	s.handler, err = wrapBatch(s.guard, "CreateOrder", h, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// invoke runs the batch handler with a deadline, as Lambda would.
func (s *setup) invoke(t testing.TB, ev events.SQSEvent) events.SQSEventResponse {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	resp, err := s.handler(ctx, ev)
	if err != nil {
		t.Fatalf("batch handler error: %v", err)
	}
	return resp
}

var errDeclined = errors.New("card declined")

// keyFromMessageID keys messages by their id, for tests whose bodies repeat.
func keyFromMessageID(o *sqsbatch.Options) { o.Key = sqsbatch.KeyFromMessageID }

// mustWrapRecording wraps a handler that appends each message id to order
// as it runs, over s's guard.
func mustWrapRecording(t testing.TB, s *setup, order *[]string) func(context.Context, events.SQSEvent) (events.SQSEventResponse, error) {
	t.Helper()
	var mu sync.Mutex
	h, err := wrapBatch(s.guard, "CreateOrder", func(ctx context.Context, m events.SQSMessage) error {
		mu.Lock()
		*order = append(*order, m.MessageId)
		mu.Unlock()
		time.Sleep(time.Millisecond)
		return nil
	}, func(o *sqsbatch.Options) { o.Key = sqsbatch.KeyFromJSONField("order_id") })
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// wrapBatch builds an Adapter and wraps h with it.
func wrapBatch(g *lambdaidem.Guard, operation string, h func(context.Context, events.SQSMessage) error, optFns ...func(*sqsbatch.Options)) (func(context.Context, events.SQSEvent) (events.SQSEventResponse, error), error) {
	a, err := sqsbatch.New(g, operation, optFns...)
	if err != nil {
		return nil, err
	}
	return a.Wrap(h), nil
}
