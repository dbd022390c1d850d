//go:build e2e

package e2e

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/kinesis"
	ktypes "github.com/aws/aws-sdk-go-v2/service/kinesis/types"

	"github.com/lambdaidem/lambdaidem/ddbtest"
	"github.com/lambdaidem/lambdaidem/ddbtest/rie"
	"github.com/lambdaidem/lambdaidem/dev/e2estack"
)

// The Kinesis source end to end on an independent Kinesis emulator: the
// ledger function (examples/stream) under the Runtime Interface Emulator,
// fed by a two-shard data stream on kinesalite, written with the SDK's
// PutRecords and read through the Kinesis API (ListShards,
// GetShardIterator, GetRecords), delivered with the event source mapping's
// rules. Twelve transfers over six partition keys, three of them put again
// by the producer (a retried PutRecords: new records, new sequence
// numbers): each booked once, nothing discarded.
func TestKinesisSourceUnderKinesalite(t *testing.T) {
	ctx := t.Context()
	root, err := e2estack.ModuleRoot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	kl, err := e2estack.StartKinesalite(ctx, root, nil)
	if errors.Is(err, e2estack.ErrNoKinesalite) {
		t.Skip(err)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(kl.Close)
	ddb, err := e2estack.StartDynamoDB(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(ddb.Close)
	if err := ddbtest.CreateTable(ctx, ddb.Client, "ledger-idempotency"); err != nil {
		t.Fatal(err)
	}
	if err := e2estack.CreateBusinessTable(ctx, ddb.Client, "ledger"); err != nil {
		t.Fatal(err)
	}
	bin, err := e2estack.Build(ctx, e2estack.BuildOptions{ModuleRoot: root, Package: "./examples/stream", Out: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	fn := rie.Run(t, rie.Options{Bootstrap: bin, Name: "ledger", Timeout: streamFunctionTimeout, DynamoDBEndpoint: ddb.URL,
		Env: map[string]string{"IDEMPOTENCY_TABLE": "ledger-idempotency", "LEDGER_TABLE": "ledger", "IDEMPOTENCY_TTL": "24h"}})

	kc := e2estack.NewKinesisClient(kl.URL)
	arn, err := e2estack.CreateKinesisStream(ctx, kc, "transfers", 2)
	if err != nil {
		t.Fatal(err)
	}
	stream := e2estack.NewStream("transfers", e2estack.StreamOptions{Shards: 2})
	tail := e2estack.TailKinesis(context.WithoutCancel(ctx), kc, arn, "transfers", stream, 0)
	t.Cleanup(tail.Stop)
	poller, err := e2estack.NewStreamPoller(e2estack.StreamPollerOptions{
		Stream: stream, Function: fn, BatchSize: 10,
		ReportBatchItemFailures: true, BisectBatchOnFunctionError: true, MaximumRetryAttempts: streamRetryAttempts,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(poller.Start(context.WithoutCancel(ctx)))

	var ids []string
	var entries []ktypes.PutRecordsRequestEntry
	for i := range 12 {
		id := unique("k")
		ids = append(ids, id)
		e := ktypes.PutRecordsRequestEntry{PartitionKey: aws.String(fmt.Sprintf("acc-%d", i%6)), Data: transferData(id, 100+i)}
		entries = append(entries, e)
		if i%4 == 0 {
			entries = append(entries, e) // the producer's retry
		}
	}
	out, err := kc.PutRecords(ctx, &kinesis.PutRecordsInput{StreamName: aws.String("transfers"), Records: entries})
	if err != nil || aws.ToInt32(out.FailedRecordCount) != 0 {
		t.Fatalf("PutRecords: %v (%d failed)", err, aws.ToInt32(out.FailedRecordCount))
	}
	shards := map[string]int{}
	for _, r := range out.Records {
		shards[aws.ToString(r.ShardId)]++
	}
	wctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if err := tail.WaitFor(wctx, len(entries)); err != nil {
		t.Fatal(err)
	}
	waitDone(t, stream, poller, 60*time.Second)
	for _, id := range ids {
		if n := len(itemsWhere(t, ddb.Client, "ledger", "id", id)); n != 1 {
			t.Errorf("transfer %s booked %d times", id, n)
		}
	}
	if f := poller.Failures(); len(f) != 0 {
		t.Fatalf("records discarded: %+v", f)
	}
	if len(shards) != 2 {
		t.Errorf("kinesalite put the records in shards %v; want both shards used", shards)
	}
	for i, sh := range stream.Shards() {
		if got, want := stream.Len(sh), shards[fmt.Sprintf("shardId-%012d", i)]; got != want {
			t.Errorf("harness shard %s holds %d records, kinesalite's %d: the partition keys map differently", sh, got, want)
		}
	}
	t.Logf("%d records (%v per shard) read through the Kinesis API, %d batches", len(entries), shards, len(poller.Batches()))
}
