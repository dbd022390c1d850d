//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	ddbtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/lambdaidem/lambdaidem/ddbtest"
	"github.com/lambdaidem/lambdaidem/ddbtest/rie"
	"github.com/lambdaidem/lambdaidem/dev/e2estack"
)

// streamStack is the stream scenarios' world: the ledger function
// (examples/stream) under the Runtime Interface Emulator, the in-process
// DynamoDB endpoint, and a Kinesis-shaped stream read by a poller that
// behaves like Lambda's event source mapping.
type streamStack struct {
	ddb    *e2estack.DynamoDB
	fn     *rie.Function
	stream *e2estack.Stream
	poller *e2estack.StreamPoller
	ledger string

	// The same ledger fed by a transfers table's DynamoDB stream
	// (LEDGER_SOURCE=dynamodb).
	changesFn     *rie.Function
	changes       *e2estack.Stream
	changesPoller *e2estack.StreamPoller
}

const (
	streamFunctionTimeout = 3 * time.Second
	streamRetryAttempts   = 10
)

// startStreamStack starts the stream scenarios' world (embedded target
// only: it needs the in-process poller and fault injection).
func startStreamStack(t *testing.T) *streamStack {
	t.Helper()
	ctx := t.Context()
	root, err := e2estack.ModuleRoot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if cfg, err := e2estack.ConfigFromEnv(os.Getenv, root); err != nil {
		t.Fatal(err)
	} else if cfg.Target != e2estack.TargetEmbedded {
		t.Skip("the stream scenarios drive the in-process stream poller: embedded target only")
	}
	if runtime.GOOS != "linux" {
		t.Skip("the embedded stack runs Linux bootstraps under the Runtime Interface Emulator; this is " + runtime.GOOS)
	}
	rieBin, err := rie.Find(ctx)
	if err != nil {
		t.Fatal(err)
	}
	work := t.TempDir()
	logPath := os.Getenv("E2E_STREAM_LOG")
	if logPath == "" {
		logPath = filepath.Join(work, "ledger.log")
	}
	log := newLogFile(t, logPath)

	s := &streamStack{ledger: "ledger"}
	bin, err := e2estack.Build(ctx, e2estack.BuildOptions{ModuleRoot: root, Package: "./examples/stream", Out: filepath.Join(work, "stream")})
	if err != nil {
		t.Fatal(err)
	}
	if s.ddb, err = e2estack.StartDynamoDB(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.ddb.Close)
	if err := ddbtest.CreateTable(ctx, s.ddb.Client, "ledger-idempotency"); err != nil {
		t.Fatal(err)
	}
	if err := e2estack.CreateBusinessTable(ctx, s.ddb.Client, s.ledger); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{
		// What Lambda sets (credentials, region) comes from rie.Environment.
		"AWS_ENDPOINT_URL_DYNAMODB": s.ddb.URL,
		"IDEMPOTENCY_TABLE":         "ledger-idempotency",
		"LEDGER_TABLE":              s.ledger,
		"IDEMPOTENCY_TTL":           "24h", // the streams' retention
	}
	s.fn, err = rie.Start(ctx, rie.Options{
		RIE: rieBin, Bootstrap: bin, Name: "ledger", Timeout: streamFunctionTimeout, Log: log, Env: env,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.fn.Close)
	s.changesFn, err = rie.Start(ctx, rie.Options{
		RIE: rieBin, Bootstrap: bin, Name: "ledger-outbox", Timeout: streamFunctionTimeout, Log: log,
		Env: with(env, "LEDGER_SOURCE", "dynamodb"),
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.changesFn.Close)

	s.stream = e2estack.NewStream("transfers", e2estack.StreamOptions{Shards: 2, Retention: 24 * time.Hour})
	s.changes = e2estack.NewDynamoDBStream("transfers", e2estack.StreamOptions{Shards: 1})
	for _, src := range []struct {
		stream *e2estack.Stream
		fn     *rie.Function
		poller **e2estack.StreamPoller
	}{{s.stream, s.fn, &s.poller}, {s.changes, s.changesFn, &s.changesPoller}} {
		p, err := e2estack.NewStreamPoller(e2estack.StreamPollerOptions{
			Stream: src.stream, Function: src.fn, BatchSize: 10,
			ReportBatchItemFailures: true, BisectBatchOnFunctionError: true, MaximumRetryAttempts: streamRetryAttempts,
			OnBatch: func(b e2estack.StreamBatch) {
				if b.Outcome != "success" {
					t.Logf("%s batch: %v", src.fn.Name(), b)
				}
			},
		})
		if err != nil {
			t.Fatal(err)
		}
		*src.poller = p
		t.Cleanup(p.Start(context.WithoutCancel(ctx)))
	}
	return s
}

// put writes a transfer record; the partition key chooses the shard.
func (s *streamStack) put(partitionKey, transferID string, amount int) e2estack.StreamRecord {
	return s.stream.Put(partitionKey, transferData(transferID, amount))
}

func transferData(transferID string, amount int) []byte {
	return fmt.Appendf(nil, `{"transfer_id":%q,"account":"acc-1","amount":%d}`, transferID, amount)
}

// waitDone waits until the Kinesis poller is done with every record put
// so far.
func (s *streamStack) waitDone(t *testing.T, timeout time.Duration) {
	t.Helper()
	waitDone(t, s.stream, s.poller, timeout)
}

// waitDone waits until p is done with every record of stream put so far.
func waitDone(t *testing.T, stream *e2estack.Stream, p *e2estack.StreamPoller, timeout time.Duration) {
	t.Helper()
	eventually(t, timeout, 50*time.Millisecond, "the poller checkpoints every record", func() bool {
		for _, sh := range stream.Shards() {
			if p.Checkpoint(sh) < stream.Len(sh) {
				return false
			}
		}
		return true
	})
}

// with returns a copy of env with k set to v.
func with(env map[string]string, k, v string) map[string]string {
	out := map[string]string{k: v}
	for key, val := range env {
		if key != k {
			out[key] = val
		}
	}
	return out
}

// booked returns how many ledger entries hold the transfer id (0 or 1: the
// table's key is the transfer id; a second booking would be refused by the
// entry's condition and fail the record instead).
func (s *streamStack) booked(t *testing.T, c *dynamodb.Client, id string) int {
	return len(itemsWhere(t, c, s.ledger, "id", id))
}

// TestStreams drives the ledger function (examples/stream) as Lambda's
// Kinesis event source mapping would: ReportBatchItemFailures,
// BisectBatchOnFunctionError, MaximumRetryAttempts, a checkpoint per shard.
func TestStreams(t *testing.T) {
	s := startStreamStack(t)

	t.Run("every transfer is booked once, a producer's retried PutRecord included", func(t *testing.T) {
		var ids []string
		for i := range 12 {
			id := unique("t")
			ids = append(ids, id)
			s.put(fmt.Sprintf("acc-%d", i), id, 100+i)
			if i%4 == 0 {
				s.put(fmt.Sprintf("acc-%d", i), id, 100+i) // the producer put it again: a new record, a new sequence number
			}
		}
		s.waitDone(t, 30*time.Second)
		for _, id := range ids {
			if n := s.booked(t, s.ddb.Client, id); n != 1 {
				t.Errorf("transfer %s booked %d times", id, n)
			}
		}
		if f := s.poller.Failures(); len(f) != 0 {
			t.Fatalf("records discarded: %+v", f)
		}
	})

	t.Run("a batch retried after the function crashed mid-batch books each transfer once", func(t *testing.T) {
		ids := make([]string, 5)
		for i := range ids {
			ids[i] = unique("crash")
		}
		// The function is killed when it reaches the commit of the third
		// transfer: the first two are committed, the third's record is left
		// in progress. Lambda then retries the batch from the checkpoint,
		// bisected.
		s.ddb.Hold.Add(rie.HoldRule{Op: "TransactWriteItems", Contains: ids[2], OnHold: func() {
			if err := s.fn.KillRuntime(); err != nil {
				t.Errorf("crash the function: %v", err)
			}
		}})
		// One PutRecords call with one partition key: one shard, and the
		// poller sees all five at once, so they form one batch.
		entries := make([]e2estack.PutEntry, len(ids))
		for i, id := range ids {
			entries[i] = e2estack.PutEntry{PartitionKey: "one-shard", Data: transferData(id, 500+i)}
		}
		recs := s.stream.PutRecords(entries...)
		s.waitDone(t, 60*time.Second)
		for _, id := range ids {
			if n := s.booked(t, s.ddb.Client, id); n != 1 {
				t.Errorf("transfer %s booked %d times", id, n)
			}
		}
		var crashed, bisected bool
		for _, b := range s.poller.Batches() {
			if !slices.Contains(b.SequenceNumbers, recs[2].SequenceNumber) {
				continue
			}
			crashed = crashed || b.Invocation.FunctionError == "Runtime.ExitError"
			bisected = bisected || b.Bisected
		}
		if !crashed || !bisected {
			t.Fatalf("crashed %v, bisected %v: the fault never fired as planned; batches %v", crashed, bisected, s.poller.Batches())
		}
		for i, r := range recs {
			t.Logf("transfer %d sent %d time(s)", i+1, s.poller.Sent(r.SequenceNumber))
		}
		if s.poller.Sent(recs[0].SequenceNumber) < 2 {
			t.Fatalf("the records before the crash were not sent again: the scenario proves nothing")
		}
		if f := s.poller.Failures(); len(f) != 0 {
			t.Fatalf("records discarded: %+v", f)
		}
	})

	t.Run("a transfer that can never be booked goes to the on-failure destination and the shard moves on", func(t *testing.T) {
		before := len(s.poller.Failures())
		good := []string{unique("ok"), unique("ok"), unique("ok")}
		for _, id := range good {
			s.put("poison-shard", id, 10)
		}
		bad := s.put("poison-shard", unique("bad"), -5) // not a valid transfer: a terminal error
		s.waitDone(t, 60*time.Second)
		later := unique("later")
		s.put("poison-shard", later, 20)
		s.waitDone(t, 30*time.Second)

		for _, id := range append(good, later) {
			if n := s.booked(t, s.ddb.Client, id); n != 1 {
				t.Errorf("transfer %s booked %d times", id, n)
			}
		}
		f := s.poller.Failures()[before:]
		if len(f) != 1 || f[0].StartSequenceNumber != bad.SequenceNumber || f[0].Condition != "RetryAttemptsExhausted" {
			t.Fatalf("on-failure destination got %+v, want the invalid transfer alone", f)
		}
		if got := s.poller.Sent(bad.SequenceNumber); got != streamRetryAttempts+1 {
			t.Fatalf("the invalid transfer was sent %d times, want 1 + MaximumRetryAttempts = %d", got, streamRetryAttempts+1)
		}
	})

	t.Run("a transfers table's DynamoDB stream: each INSERT booked once, across a crash mid-batch; other changes book nothing", func(t *testing.T) {
		ids := make([]string, 5)
		for i := range ids {
			ids[i] = unique("outbox")
		}
		s.ddb.Hold.Add(rie.HoldRule{Op: "TransactWriteItems", Contains: ids[2], OnHold: func() {
			if err := s.changesFn.KillRuntime(); err != nil {
				t.Errorf("crash the function: %v", err)
			}
		}})
		item := func(id string, amount int) map[string]events.DynamoDBAttributeValue {
			return map[string]events.DynamoDBAttributeValue{
				"transfer_id": events.NewStringAttribute(id),
				"account":     events.NewStringAttribute("acc-9"),
				"amount":      events.NewNumberAttribute(strconv.Itoa(amount)),
			}
		}
		key := func(id string) map[string]events.DynamoDBAttributeValue {
			return map[string]events.DynamoDBAttributeValue{"transfer_id": events.NewStringAttribute(id)}
		}
		// One transaction's writes reach the stream together: one batch.
		changes := make([]e2estack.Change, 0, len(ids)+1)
		for i, id := range ids {
			changes = append(changes, e2estack.Change{EventName: "INSERT", Keys: key(id), NewImage: item(id, 700+i)})
		}
		// A later MODIFY of the first transfer books nothing.
		changes = append(changes, e2estack.Change{EventName: "MODIFY", Keys: key(ids[0]), NewImage: item(ids[0], 1), OldImage: item(ids[0], 700)})
		recs := s.changes.PutChanges(changes...)
		waitDone(t, s.changes, s.changesPoller, 60*time.Second)

		for _, id := range ids {
			if n := s.booked(t, s.ddb.Client, id); n != 1 {
				t.Errorf("transfer %s booked %d times", id, n)
			}
		}
		if it := itemsWhere(t, s.ddb.Client, s.ledger, "id", ids[0]); len(it) == 1 {
			if n, ok := it[0]["amount"].(*ddbtypes.AttributeValueMemberN); !ok || n.Value != "700" {
				t.Errorf("transfer %s: the MODIFY changed its booking: %v", ids[0], it[0]["amount"])
			}
		}
		var crashed, bisected bool
		for _, b := range s.changesPoller.Batches() {
			if slices.Contains(b.SequenceNumbers, recs[2].SequenceNumber) {
				crashed = crashed || b.Invocation.FunctionError == "Runtime.ExitError"
				bisected = bisected || b.Bisected
			}
		}
		if !crashed || !bisected {
			t.Fatalf("crashed %v, bisected %v: the fault never fired as planned", crashed, bisected)
		}
		if s.changesPoller.Sent(recs[0].SequenceNumber) < 2 {
			t.Fatal("the changes before the crash were not sent again: the scenario proves nothing")
		}
		if f := s.changesPoller.Failures(); len(f) != 0 {
			t.Fatalf("records discarded: %+v", f)
		}
	})
}
