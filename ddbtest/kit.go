package ddbtest

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/lambdaidem/lambdaidem/dynamostore"
)

// Kit is what a test of an idempotent handler needs, from one call: a
// DynamoDB-compatible endpoint (the in-process emulator, or a Dynoxide
// process with LAMBDAIDEM_WORLD=dynoxide, behind the fidelity [Proxy]; or
// $AWS_ENDPOINT_URL_DYNAMODB), a client for it, a
// fresh idempotency table and a dynamostore.Store over that table, with
// the outbox table the construct binds beside it (outbox messages staged
// by a handler commit there; [Kit.OutboxItems]). Build a
// lambdaidem.Guard over Store, and create the handler's own tables with
// [Kit.NewTable].
type Kit struct {
	// Endpoint is the endpoint; its Proxy is nil on an external one.
	Endpoint *Endpoint
	// Client is a DynamoDB client for the endpoint, built from explicit
	// options (see [NewClient]).
	Client *dynamodb.Client
	// Table is the idempotency table's name.
	Table string
	// Store is the store over Table, with the options the kit was given.
	Store *dynamostore.Store
	// Outbox is the outbox table's name, the Store's
	// dynamostore.Options.OutboxTable (see outbox.go).
	Outbox string

	close func()
}

// NewKit returns a Kit for tb: the endpoint, an idempotency table named
// after the test (unique, so that tests may share an external endpoint)
// and its store, built with optFns (attribute names, a sort key). It fails
// tb if the table cannot be created. The endpoint (and its Dynoxide
// process, if any) stops when tb ends.
func NewKit(tb testing.TB, optFns ...func(*dynamostore.Options)) *Kit {
	tb.Helper()
	k, err := newKit(context.Background(), Start(tb), TableName(tb, "idempotency"), optFns...)
	if err != nil {
		tb.Fatal(err)
	}
	return k
}

// OpenKit is [NewKit] outside a test (an Example, a local server). The
// idempotency table is "idempotency", on a fresh endpoint of the world
// $LAMBDAIDEM_WORLD selects (see [Start]), or on $AWS_ENDPOINT_URL_DYNAMODB,
// where it must not exist yet. Close the Kit to stop the endpoint.
func OpenKit(ctx context.Context, optFns ...func(*dynamostore.Options)) (*Kit, error) {
	ep, err := Open(ctx)
	if err != nil {
		return nil, fmt.Errorf("ddbtest: kit: %w", err)
	}
	k, err := newKit(ctx, ep, "idempotency", optFns...)
	if err != nil {
		ep.Close()
		return nil, err
	}
	k.close = ep.Close
	return k, nil
}

func newKit(ctx context.Context, ep *Endpoint, table string, optFns ...func(*dynamostore.Options)) (*Kit, error) {
	client := ep.Client()
	outbox, optFns := outboxTable(table, optFns)
	if err := CreateTable(ctx, client, table, optFns...); err != nil {
		return nil, fmt.Errorf("ddbtest: kit: %w", err)
	}
	if err := CreateOutboxTable(ctx, client, outbox); err != nil {
		return nil, fmt.Errorf("ddbtest: kit: %w", err)
	}
	store, err := dynamostore.New(client, table, optFns...)
	if err != nil {
		return nil, fmt.Errorf("ddbtest: kit: %w", err)
	}
	return &Kit{Endpoint: ep, Client: client, Table: table, Store: store, Outbox: outbox, close: func() {}}, nil
}

// NewTable creates a table for the handler's own items on the kit's
// endpoint, keyed by the string attribute keyAttr, with a name unique to
// the test built from prefix, and returns the name. It fails tb if the
// table cannot be created.
func (k *Kit) NewTable(tb testing.TB, prefix, keyAttr string) string {
	tb.Helper()
	name := TableName(tb, prefix)
	if err := k.CreateTable(context.Background(), name, keyAttr); err != nil {
		tb.Fatal(err)
	}
	return name
}

// CreateTable creates a table named name for the handler's own items,
// keyed by the string attribute keyAttr; [Kit.NewTable] does it for a
// test.
func (k *Kit) CreateTable(ctx context.Context, name, keyAttr string) error {
	if keyAttr == "" {
		return fmt.Errorf("ddbtest: CreateTable %s: empty key attribute", name)
	}
	return CreateTable(ctx, k.Client, name, func(o *dynamostore.Options) { o.KeyAttr = keyAttr })
}

// Close stops the endpoint of a Kit from [OpenKit] (and its Dynoxide
// process, if any). It does
// nothing for one from [NewKit], whose test's end stops it.
func (k *Kit) Close() { k.close() }

// Contend gives every call through the kit's proxy DynamoDB's order of
// latency (5 ms before it is served, all calls at once), so that
// contenders released together really race. Without it the backend
// (either world) answers within a millisecond, one request at a time, and
// the first contender often commits before the others have claimed: a
// race test then sees
// replays and proves nothing about the race. With it every contender's
// claim reaches the record while the first one's is still running, as in
// DynamoDB: in claim-first mode the others are refused as in progress, in
// optimistic mode each runs its handler and one commit stands. On an
// external endpoint, which has latency of its own, it does nothing.
func (k *Kit) Contend() {
	if p := k.Endpoint.Proxy; p != nil {
		p.SetLatency(contendLatency)
	}
}

// contendLatency is the latency [Kit.Contend] adds: DynamoDB answers
// single-digit milliseconds.
const contendLatency = 5 * time.Millisecond
