package streambatch_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"

	"github.com/aws/aws-lambda-go/events"

	"github.com/lambdaidem/lambdaidem/lambdaidem/memstore"
)

// loadKinesis reads a Kinesis event fixture from testdata.
func loadKinesis(t testing.TB, name string) events.KinesisEvent {
	t.Helper()
	var ev events.KinesisEvent
	load(t, name, &ev)
	return ev
}

// loadDynamoDB reads a DynamoDB stream event fixture from testdata.
func loadDynamoDB(t testing.TB, name string) events.DynamoDBEvent {
	t.Helper()
	var ev events.DynamoDBEvent
	load(t, name, &ev)
	return ev
}

func load(t testing.TB, name string, v any) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
}

// from returns the records of ev from index i on, as Lambda sends them
// again after checkpointing before record i.
func from(ev events.KinesisEvent, i int) events.KinesisEvent {
	return events.KinesisEvent{Records: append([]events.KinesisEventRecord(nil), ev.Records[i:]...)}
}

// seqs returns the sequence numbers of ev's records at the indexes.
func seqs(ev events.KinesisEvent, idx ...int) []string {
	out := []string{}
	for _, i := range idx {
		out = append(out, ev.Records[i].Kinesis.SequenceNumber)
	}
	return out
}

func reported(resp events.KinesisEventResponse) []string {
	out := []string{}
	for _, f := range resp.BatchItemFailures {
		out = append(out, f.ItemIdentifier)
	}
	return out
}

// ledger is a per-record handler that stages one ledger entry per record
// in the memstore, keyed by the record's event id, and counts its runs by
// event id. It fails with the error in fail for the event ids listed, and
// calls before, if set, before it runs a record.
type ledger struct {
	mu     sync.Mutex
	runs   map[string]int
	fail   map[string]error
	before func(ctx context.Context, eventID string)
}

func newLedger() *ledger {
	return &ledger{runs: map[string]int{}, fail: map[string]error{}}
}

func (l *ledger) kinesis(ctx context.Context, r events.KinesisEventRecord) error {
	return l.handle(ctx, r.EventID)
}

func (l *ledger) dynamoDB(ctx context.Context, r events.DynamoDBEventRecord) error {
	return l.handle(ctx, r.EventID)
}

func (l *ledger) handle(ctx context.Context, eventID string) error {
	if l.before != nil {
		l.before(ctx, eventID)
	}
	l.mu.Lock()
	l.runs[eventID]++
	err := l.fail[eventID]
	l.mu.Unlock()
	if err != nil {
		return err
	}
	return memstore.Stage(ctx, memstore.Put{Table: "ledger", Key: eventID})
}

func (l *ledger) setFail(eventID string, err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if err == nil {
		delete(l.fail, eventID)
		return
	}
	l.fail[eventID] = err
}

// ran returns how often each record of ev ran, in batch order.
func (l *ledger) ran(ev events.KinesisEvent) []int {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := []int{}
	for _, r := range ev.Records {
		out = append(out, l.runs[r.EventID])
	}
	return out
}

var errDownstream = errors.New("downstream refused")

// wantReported fails the test unless the invocation answered, without an
// error, with exactly the sequence numbers want.
func wantReported(t testing.TB, resp events.KinesisEventResponse, err error, want []string) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
	if got := reported(resp); !slices.Equal(got, want) {
		t.Fatalf("reported %v, want %v", got, want)
	}
}

// wantEachOnce fails the test unless every record of ev ran once and has
// one ledger entry.
func wantEachOnce(t testing.TB, l *ledger, store *memstore.Store, ev events.KinesisEvent) {
	t.Helper()
	for i, runs := range l.ran(ev) {
		if runs != 1 {
			t.Fatalf("record %d ran %d times, want once (runs %v)", i, runs, l.ran(ev))
		}
	}
	if n := len(store.Items("ledger")); n != len(ev.Records) {
		t.Fatalf("ledger entries %d, want %d", n, len(ev.Records))
	}
}
