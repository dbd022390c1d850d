package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/lambdaidem/lambdaidem/dev/bench/payload"
	"github.com/lambdaidem/lambdaidem/dynamostore"
	"github.com/lambdaidem/lambdaidem/lambdaidem"
)

// payment is the event every scenario handles: the same JSON shape in Go
// and in the Node peer.
type payment struct {
	ID       string `json:"id"`
	Amount   int64  `json:"amount"`
	Currency string `json:"currency"`
	SleepMs  int    `json:"sleepMs,omitempty"`
	// Shard picks the tables (see shardTable).
	Shard int `json:"shard"`
	// Lines, when set, are echoed in the receipt: they size the stored
	// outcome (the capacity part).
	Lines []payload.Line `json:"lines,omitempty"`
	// Memo, when set, is written in the business item: it sizes the
	// business write (the capacity part).
	Memo string `json:"memo,omitempty"`
}

type receipt struct {
	ID     string         `json:"id"`
	Status string         `json:"status"`
	Amount int64          `json:"amount"`
	Lines  []payload.Line `json:"lines,omitempty"`
}

// receiptOf is every handler's result for ev.
func receiptOf(ev payment) receipt {
	return receipt{ID: ev.ID, Status: "captured", Amount: ev.Amount, Lines: ev.Lines}
}

// scenario is one way of handling a payment.
type scenario interface {
	// name is the row label.
	name() string
	// sdk names the SDK whose baseline applies ("go" or "node").
	sdk() string
	// invoke handles ev and returns the handler's latency, measured in the
	// runtime that runs it.
	invoke(ctx context.Context, ev payment) (time.Duration, error)
	// burst starts n invocations of ev together, in the runtime that runs
	// the handler, and returns each one's latency and error.
	burst(ctx context.Context, ev payment, n int) ([]invocation, error)
	// ran returns how many times the handler body ran for id.
	ran(ctx context.Context, id string) (int, error)
}

// invocation is the result of one invocation.
type invocation struct {
	d   time.Duration
	err error
}

// counter counts handler bodies by payment id.
type counter struct {
	mu sync.Mutex
	n  map[string]int
}

func (c *counter) add(id string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.n == nil {
		c.n = map[string]int{}
	}
	c.n[id]++
}

func (c *counter) get(id string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n[id]
}

// goScenario runs a Go handler in process, as lambda.Start would call it.
type goScenario struct {
	label string
	h     func(context.Context, payment) (receipt, error)
	runs  *counter
}

func (s *goScenario) name() string { return s.label }
func (s *goScenario) sdk() string  { return "go" }

func (s *goScenario) invoke(ctx context.Context, ev payment) (time.Duration, error) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second) // a Lambda deadline
	defer cancel()
	start := time.Now()
	_, err := s.h(ctx, ev)
	return time.Since(start), err
}

func (s *goScenario) ran(_ context.Context, id string) (int, error) { return s.runs.get(id), nil }

func (s *goScenario) burst(ctx context.Context, ev payment, n int) ([]invocation, error) {
	out := make([]invocation, n)
	var ready, done sync.WaitGroup
	start := make(chan struct{})
	for i := range n {
		ready.Add(1)
		done.Add(1)
		go func() {
			defer done.Done()
			ready.Done()
			<-start
			d, err := s.invoke(ctx, ev)
			out[i] = invocation{d, err}
		}()
	}
	ready.Wait()
	close(start)
	done.Wait()
	return out, nil
}

func businessItem(ev payment) map[string]types.AttributeValue {
	item := map[string]types.AttributeValue{
		"pk":       &types.AttributeValueMemberS{Value: "payment#" + ev.ID},
		"amount":   &types.AttributeValueMemberN{Value: strconv.FormatInt(ev.Amount, 10)},
		"currency": &types.AttributeValueMemberS{Value: ev.Currency},
	}
	if ev.Memo != "" {
		item["memo"] = &types.AttributeValueMemberS{Value: ev.Memo}
	}
	return item
}

func pause(ctx context.Context, ms int) error {
	if ms <= 0 {
		return nil
	}
	t := time.NewTimer(time.Duration(ms) * time.Millisecond)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// bareScenario is the handler without idempotency: one PutItem.
func bareScenario(client *dynamodb.Client) *goScenario {
	runs := &counter{}
	return &goScenario{label: "bare handler", runs: runs, h: func(ctx context.Context, ev payment) (receipt, error) {
		runs.add(ev.ID)
		if err := pause(ctx, ev.SleepMs); err != nil {
			return receipt{}, err
		}
		_, err := client.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(shardTable(businessTable, ev.Shard)), Item: businessItem(ev)})
		if err != nil {
			return receipt{}, err
		}
		return receiptOf(ev), nil
	}}
}

// lambdaidemScenario is the same handler wrapped by lambdaidem over the
// DynamoDB store; the business PutItem is staged, so it commits in one
// TransactWriteItems with the record. Each shard has its own store (its
// table) and Guard, built on first use.
func lambdaidemScenario(label string, client *dynamodb.Client, mode lambdaidem.Mode, cacheSize int, optFns ...func(*lambdaidem.Options)) *goScenario {
	return guardScenario(label, client, nil, nil, append([]func(*lambdaidem.Options){func(o *lambdaidem.Options) {
		o.Mode = mode
		o.CacheSize = cacheSize
	}}, optFns...)...)
}

// guardScenario is lambdaidemScenario with the store's options (storeFn,
// nil for the defaults) and the wrapped handler wrapped once more (wrap,
// nil for none) with its shard's store.
func guardScenario(label string, client *dynamodb.Client, storeFn func(*dynamostore.Options),
	wrap func(*dynamostore.Store, func(context.Context, payment) (receipt, error)) func(context.Context, payment) (receipt, error),
	optFns ...func(*lambdaidem.Options)) *goScenario {
	runs := &counter{}
	var mu sync.Mutex
	handlers := map[int]func(context.Context, payment) (receipt, error){}
	business := func(ctx context.Context, ev payment) (receipt, error) {
		runs.add(ev.ID)
		if err := pause(ctx, ev.SleepMs); err != nil {
			return receipt{}, err
		}
		if err := dynamostore.Stage(ctx, types.Put{TableName: aws.String(shardTable(businessTable, ev.Shard)), Item: businessItem(ev)}); err != nil {
			return receipt{}, err
		}
		return receiptOf(ev), nil
	}
	spec := lambdaidem.Spec[payment, receipt]{
		Operation: "CreatePayment",
		Key:       func(_ context.Context, ev payment) (string, error) { return ev.ID, nil },
	}
	handler := func(shard int) (func(context.Context, payment) (receipt, error), error) {
		mu.Lock()
		defer mu.Unlock()
		if h, ok := handlers[shard]; ok {
			return h, nil
		}
		var storeFns []func(*dynamostore.Options)
		if storeFn != nil {
			storeFns = append(storeFns, storeFn)
		}
		store, err := dynamostore.New(client, shardTable(lambdaidemTable, shard), storeFns...)
		if err != nil {
			return nil, err
		}
		g, err := lambdaidem.New(store, optFns...)
		if err != nil {
			return nil, err
		}
		w, err := lambdaidem.NewWrapper(g, spec)
		if err != nil {
			return nil, err
		}
		h := w.Wrap(business)
		if wrap != nil {
			h = wrap(store, h)
		}
		handlers[shard] = h
		return h, nil
	}
	return &goScenario{label: label, runs: runs, h: func(ctx context.Context, ev payment) (receipt, error) {
		h, err := handler(ev.Shard)
		if err != nil {
			return receipt{}, err
		}
		return h(ctx, ev)
	}}
}

// nodeScenario is the Powertools peer, served by bench/powertools/server.mjs.
type nodeScenario struct {
	peer *nodePeer
}

func (s *nodeScenario) name() string { return "Powertools (TypeScript)" }
func (s *nodeScenario) sdk() string  { return "node" }

func (s *nodeScenario) invoke(ctx context.Context, ev payment) (time.Duration, error) {
	var out struct {
		NS    int64  `json:"ns"`
		Error string `json:"error"`
	}
	if err := s.peer.post(ctx, "invoke", map[string]any{"event": ev}, &out); err != nil {
		return 0, err
	}
	if out.Error != "" {
		return time.Duration(out.NS), errors.New(out.Error)
	}
	return time.Duration(out.NS), nil
}

func (s *nodeScenario) burst(ctx context.Context, ev payment, n int) ([]invocation, error) {
	var out struct {
		Results []struct {
			NS    int64  `json:"ns"`
			Error string `json:"error"`
		} `json:"results"`
	}
	if err := s.peer.post(ctx, "burst", map[string]any{"event": ev, "n": n}, &out); err != nil {
		return nil, err
	}
	res := make([]invocation, len(out.Results))
	for i, r := range out.Results {
		res[i].d = time.Duration(r.NS)
		if r.Error != "" {
			res[i].err = errors.New(r.Error)
		}
	}
	return res, nil
}

func (s *nodeScenario) ran(ctx context.Context, id string) (int, error) {
	var out struct {
		Ran int `json:"ran"`
	}
	err := s.peer.post(ctx, "ran", map[string]string{"id": id}, &out)
	return out.Ran, err
}

// baseliner measures one plain call with an SDK.
type baseliner interface {
	call(ctx context.Context, shard int, key string) (time.Duration, error)
}

type goBaseline struct{ client *dynamodb.Client }

func (b goBaseline) call(ctx context.Context, shard int, key string) (time.Duration, error) {
	start := time.Now()
	_, err := b.client.GetItem(ctx, &dynamodb.GetItemInput{
		TableName: aws.String(shardTable(businessTable, shard)),
		Key:       map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: key}},
	})
	return time.Since(start), err
}

// goTxBaseline is one TransactWriteItems with the Go SDK, shaped like an
// optimistic commit: a conditional Put of a record asking for ALL_OLD, a
// business Put and a ClientRequestToken. It
// is not a per-call baseline: it shows what the endpoint charges for a
// transaction over a single write.
type goTxBaseline struct{ client *dynamodb.Client }

func (b goTxBaseline) call(ctx context.Context, shard int, key string) (time.Duration, error) {
	start := time.Now()
	_, err := b.client.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{ClientRequestToken: aws.String("baseline-" + key), TransactItems: []types.TransactWriteItem{
		{Put: &types.Put{
			TableName:                           aws.String(shardTable(lambdaidemTable, shard)),
			Item:                                map[string]types.AttributeValue{"id": &types.AttributeValueMemberS{Value: "baseline#" + key}, "status": &types.AttributeValueMemberS{Value: "COMPLETED"}},
			ConditionExpression:                 aws.String("attribute_not_exists(id)"),
			ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
		}},
		{Put: &types.Put{TableName: aws.String(shardTable(businessTable, shard)), Item: businessItem(payment{ID: "baseline-" + key, Amount: 1, Currency: "EUR"})}},
	}})
	return time.Since(start), err
}

type nodeBaseline struct{ peer *nodePeer }

func (b nodeBaseline) call(ctx context.Context, shard int, key string) (time.Duration, error) {
	var out struct {
		NS int64 `json:"ns"`
	}
	err := b.peer.post(ctx, "baseline", map[string]any{"key": key, "shard": shard}, &out)
	return time.Duration(out.NS), err
}

// nodePeer talks to the Node server over loopback HTTP.
type nodePeer struct {
	base   string
	client *http.Client
}

func (p *nodePeer) post(ctx context.Context, route string, in, out any) error {
	body, err := json.Marshal(in)
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, p.base+"/"+route, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := p.client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		var e struct{ Error string }
		_ = json.NewDecoder(resp.Body).Decode(&e)
		return fmt.Errorf("powertools peer %s: %s: %s", route, resp.Status, e.Error)
	}
	return json.NewDecoder(resp.Body).Decode(out)
}
