package streambatch_test

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/aws/aws-lambda-go/events"

	"github.com/lambdaidem/lambdaidem/lambdaidem"
	"github.com/lambdaidem/lambdaidem/lambdaidem/memstore"
	"github.com/lambdaidem/lambdaidem/lambdaidem/streambatch"
)

func newAdapter(t testing.TB, store *memstore.Store, optFns ...func(*streambatch.Options)) *streambatch.Adapter {
	t.Helper()
	_, p := guarded(t, store, func(*lambdaidem.Options) {}, optFns...)
	return p
}

// guarded returns a processor over a guard with the options guardOpts.
func guarded(t testing.TB, store *memstore.Store, guardOpts func(*lambdaidem.Options), optFns ...func(*streambatch.Options)) (*lambdaidem.Guard, *streambatch.Adapter) {
	t.Helper()
	g, err := lambdaidem.New(store, guardOpts)
	if err != nil {
		t.Fatal(err)
	}
	p, err := streambatch.New(g, "RecordTransfer", optFns...)
	if err != nil {
		t.Fatal(err)
	}
	return g, p
}

// Lambda checkpoints at the lowest sequence number a partial batch
// response reports and sends every record from there again
// (https://docs.aws.amazon.com/lambda/latest/dg/services-kinesis-batchfailurereporting.html).
// The adapter reports a shard's first failure, does not run the records
// after it, and on the retry replays what completed without running it.
func TestAFailureIsReportedByItsSequenceNumberAndBlocksTheRestOfItsShard(t *testing.T) {
	ev := loadKinesis(t, "kinesis.json")
	store := memstore.New()
	l := newLedger()
	h := newAdapter(t, store).Kinesis(l.kinesis)

	l.setFail(ev.Records[2].EventID, errDownstream)
	resp, err := h(t.Context(), ev)
	wantReported(t, resp, err, seqs(ev, 2))
	if got := l.ran(ev); !slices.Equal(got, []int{1, 1, 1, 0}) {
		t.Fatalf("runs per record %v, want [1 1 1 0]: record 3 must wait behind record 2", got)
	}

	// Lambda retries from the checkpoint: records 2 and 3, the failure fixed.
	l.setFail(ev.Records[2].EventID, nil)
	resp, err = h(t.Context(), from(ev, 2))
	wantReported(t, resp, err, []string{})
	// A whole-batch retry (the invocation failed after the response was
	// lost) sends every record again; nothing runs twice.
	if resp, err = h(t.Context(), ev); err != nil || len(resp.BatchItemFailures) != 0 {
		t.Fatalf("whole-batch retry: %+v, %v", resp, err)
	}
	if got := l.ran(ev); !slices.Equal(got, []int{1, 1, 2, 1}) {
		t.Fatalf("runs per record %v, want [1 1 2 1]: only the failed record runs again", got)
	}
	if n := len(store.Items("ledger")); n != 4 {
		t.Fatalf("ledger entries %d, want 4", n)
	}
}

func TestTheResponseIsTheDocumentedPartialBatchResponse(t *testing.T) {
	ev := loadKinesis(t, "kinesis.json")
	l := newLedger()
	h := newAdapter(t, memstore.New()).Kinesis(l.kinesis)

	resp, err := h(t.Context(), ev)
	if err != nil {
		t.Fatal(err)
	}
	// An empty list (never null) is a complete success.
	if resp.BatchItemFailures == nil || len(resp.BatchItemFailures) != 0 {
		t.Fatalf("success: %#v, want an empty, non-nil list", resp.BatchItemFailures)
	}
	// A failure is named by the record's sequence number, not its event id.
	ev2 := events.KinesisEvent{Records: slices.Clone(ev.Records)}
	for i := range ev2.Records {
		ev2.Records[i].EventID = "shardId-000000000003:other-" + ev2.Records[i].EventID[21:] // new keys, same sequence numbers
	}
	l.setFail(ev2.Records[1].EventID, errDownstream)
	resp, err = h(t.Context(), ev2)
	wantReported(t, resp, err, seqs(ev2, 1))
}

// Records of other shards go on after one shard fails. Lambda's batches
// hold one shard each; a hand-made event may mix them.
func TestShardsAreIndependent(t *testing.T) {
	ev := loadKinesis(t, "kinesis.json")
	other := slices.Clone(ev.Records)
	for i := range other {
		other[i].EventID = "shardId-000000000007:" + other[i].Kinesis.SequenceNumber
	}
	// Interleave the two shards: a0 b0 a1 b1 a2 b2 a3 b3.
	var mixed events.KinesisEvent
	for i := range ev.Records {
		mixed.Records = append(mixed.Records, ev.Records[i], other[i])
	}
	l := newLedger()
	l.setFail(ev.Records[1].EventID, errDownstream)
	h := newAdapter(t, memstore.New()).Kinesis(l.kinesis)
	resp, err := h(t.Context(), mixed)
	wantReported(t, resp, err, seqs(ev, 1))
	if got := l.ran(mixed); !slices.Equal(got, []int{1, 1, 1, 1, 0, 1, 0, 1}) {
		t.Fatalf("runs %v: shard 3 stops after its record 1, shard 7 runs to the end", got)
	}
}

// A record with the same key as an earlier one in the same batch (a
// producer's retry of PutRecord) replays the first's outcome.
func TestAProducerRetryInTheSameBatchRunsOnce(t *testing.T) {
	ev := loadKinesis(t, "kinesis.json")
	dup := ev.Records[0]
	dup.Kinesis.SequenceNumber = "49656573102339474187618340291548099999999999999999999999"
	dup.EventID = "shardId-000000000003:" + dup.Kinesis.SequenceNumber
	ev.Records = append(ev.Records, dup)
	store := memstore.New()
	runs := 0
	h := newAdapter(t, store, func(o *streambatch.Options) {
		o.Key = streambatch.KeyFromDataField("transfer_id")
	}).Kinesis(func(ctx context.Context, r events.KinesisEventRecord) error {
		runs++
		return nil
	})
	resp, err := h(t.Context(), ev)
	if err != nil || len(resp.BatchItemFailures) != 0 {
		t.Fatalf("%+v, %v", resp, err)
	}
	if runs != 4 {
		t.Fatalf("handler ran %d times for 4 distinct transfers and one duplicate, want 4", runs)
	}
}

func TestAFailedRecordWithoutASequenceNumberFailsTheBatch(t *testing.T) {
	ev := loadKinesis(t, "kinesis.json")
	ev.Records[1].Kinesis.SequenceNumber = ""
	l := newLedger()
	l.setFail(ev.Records[1].EventID, errDownstream)
	resp, err := newAdapter(t, memstore.New()).Kinesis(l.kinesis)(t.Context(), ev)
	if !errors.Is(err, streambatch.ErrUnreportable) {
		t.Fatalf("err %v, want ErrUnreportable", err)
	}
	if len(resp.BatchItemFailures) != 0 {
		t.Fatalf("response %+v alongside the error", resp)
	}
}

// Lambda uses a DynamoDB stream record's dynamodb.SequenceNumber as its
// itemIdentifier
// (https://docs.aws.amazon.com/lambda/latest/dg/services-ddb-batchfailurereporting.html).
func TestDynamoDBStreams(t *testing.T) {
	ev := loadDynamoDB(t, "dynamodb.json")
	tests := []struct {
		name     string
		key      streambatch.KeyFunc
		wantRuns []int
		reported []string
	}{
		{
			name:     "default key (event id): every change once",
			wantRuns: []int{1, 1, 1, 1},
			reported: []string{},
		},
		{
			// The MODIFY of o-501 carries the same request_id with another
			// image: the key reused, refused, and the shard stops there.
			name:     "key from the new image: a later MODIFY reuses the INSERT's key",
			key:      streambatch.KeyFromNewImage("request_id"),
			wantRuns: []int{1, 1, 0, 0},
			reported: []string{ev.Records[2].Change.SequenceNumber},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := newLedger()
			h := newAdapter(t, memstore.New(), func(o *streambatch.Options) { o.Key = tt.key }).DynamoDB(l.dynamoDB)
			resp, err := h(t.Context(), ev)
			if err != nil {
				t.Fatal(err)
			}
			got := []string{}
			for _, f := range resp.BatchItemFailures {
				got = append(got, f.ItemIdentifier)
			}
			if !slices.Equal(got, tt.reported) {
				t.Fatalf("reported %v, want %v", got, tt.reported)
			}
			runs := []int{}
			for _, r := range ev.Records {
				runs = append(runs, l.runs[r.EventID])
			}
			if !slices.Equal(runs, tt.wantRuns) {
				t.Fatalf("runs %v, want %v", runs, tt.wantRuns)
			}
		})
	}
}

// A REMOVE has no new image: with a key from the new image it is a
// malformed record, reported (so that the mapping's retry limit and
// on-failure destination deal with it) and never run.
func TestARecordWithoutAKeyIsReportedAndNeverRun(t *testing.T) {
	ev := loadDynamoDB(t, "dynamodb.json")
	ev.Records = []events.DynamoDBEventRecord{ev.Records[1], ev.Records[3]} // INSERT o-502, REMOVE o-502
	l := newLedger()
	h := newAdapter(t, memstore.New(), func(o *streambatch.Options) {
		o.Key = streambatch.KeyFromNewImage("request_id")
	}).DynamoDB(l.dynamoDB)
	for range 2 {
		resp, err := h(t.Context(), ev)
		if err != nil {
			t.Fatal(err)
		}
		if len(resp.BatchItemFailures) != 1 || resp.BatchItemFailures[0].ItemIdentifier != ev.Records[1].Change.SequenceNumber {
			t.Fatalf("%+v, want the REMOVE reported", resp)
		}
	}
	if l.runs[ev.Records[0].EventID] != 1 || l.runs[ev.Records[1].EventID] != 0 {
		t.Fatalf("runs %v: the INSERT once, the REMOVE never", l.runs)
	}
}

func TestNewValidates(t *testing.T) {
	g, err := lambdaidem.New(memstore.New())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := streambatch.New(nil, "Op"); err == nil {
		t.Error("nil guard: want an error")
	}
	if _, err := streambatch.New(g, ""); err == nil {
		t.Error("empty operation: want an error")
	}
	a, err := streambatch.New(g, "Op")
	if err != nil {
		t.Fatal(err)
	}
	// Wrapping cannot fail: a nil handler fails every record.
	kin := loadKinesis(t, "kinesis.json")
	resp, err := a.Kinesis(nil)(t.Context(), kin)
	wantReported(t, resp, err, seqs(kin, 0))
	ddb := loadDynamoDB(t, "dynamodb.json")
	dresp, err := a.DynamoDB(nil)(t.Context(), ddb)
	if err != nil || len(dresp.BatchItemFailures) != 1 || dresp.BatchItemFailures[0].ItemIdentifier != ddb.Records[0].Change.SequenceNumber {
		t.Fatalf("DynamoDB(nil): %+v, %v; want the first record reported", dresp, err)
	}
}
