package e2estack

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/lambdaidem/lambdaidem/internal/testclock"

	"github.com/lambdaidem/lambdaidem/ddbtest/rie"
)

// standIn is a stand-in function for the stream poller's tests: it sees
// each batch's records (their data) and answers for them. With partial set,
// it reports the first record whose data is "poison" (ReportBatchItemFailures);
// otherwise a batch holding one fails as a whole (a function error).
type standIn struct {
	partial bool
	answer  func(ev events.KinesisEvent) (rie.Invocation, bool) // optional override

	mu      sync.Mutex
	batches [][]string
}

func (s *standIn) Invoke(_ context.Context, payload []byte) (rie.Invocation, error) {
	var ev events.KinesisEvent
	if err := json.Unmarshal(payload, &ev); err != nil {
		return rie.Invocation{}, err
	}
	var data []string
	for _, r := range ev.Records {
		data = append(data, string(r.Kinesis.Data))
	}
	s.mu.Lock()
	s.batches = append(s.batches, data)
	s.mu.Unlock()
	if s.answer != nil {
		if inv, ok := s.answer(ev); ok {
			return inv, nil
		}
	}
	var resp events.KinesisEventResponse
	for _, r := range ev.Records {
		if string(r.Kinesis.Data) != "poison" {
			continue
		}
		if !s.partial {
			return rie.Invocation{Status: 200, FunctionError: "Unhandled", Payload: []byte(`{"errorType":"Unhandled"}`)}, nil
		}
		resp.BatchItemFailures = append(resp.BatchItemFailures, events.KinesisBatchItemFailure{ItemIdentifier: r.Kinesis.SequenceNumber})
		break
	}
	b, _ := json.Marshal(resp)
	return rie.Invocation{Status: 200, Payload: b}, nil
}

func (s *standIn) seen() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for _, b := range s.batches {
		out = append(out, strings.Join(b, " "))
	}
	return out
}

// putAll puts records with the given data, all with one partition key (one
// shard), and returns them.
func putAll(s *Stream, key string, data ...string) []StreamRecord {
	var out []StreamRecord
	for _, d := range data {
		out = append(out, s.Put(key, []byte(d)))
	}
	return out
}

// drain runs the poller until every record of the shard is checkpointed.
func drain(t *testing.T, p *StreamPoller, s *Stream, shard string, n int) {
	t.Helper()
	stop := p.Start(t.Context())
	defer stop()
	deadline := time.Now().Add(10 * time.Second)
	for p.Checkpoint(shard) < n {
		if time.Now().After(deadline) {
			t.Fatalf("checkpoint %d of %d after 10s; batches: %v", p.Checkpoint(shard), n, p.Batches())
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// Lambda checkpoints at the lowest sequence number of a partial batch
// response and retries every record from there; once the retries are
// spent, the records are discarded to the on-failure destination and the
// shard moves on
// (https://docs.aws.amazon.com/lambda/latest/dg/services-kinesis-batchfailurereporting.html).
func TestStreamPollerRetriesFromTheReportedRecord(t *testing.T) {
	s := NewStream("partial", StreamOptions{})
	recs := putAll(s, "k", "a", "b", "poison", "c")
	fn := &standIn{partial: true}
	p, err := NewStreamPoller(StreamPollerOptions{Stream: s, Function: fn, ReportBatchItemFailures: true, MaximumRetryAttempts: 2, RetryDelay: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	drain(t, p, s, recs[0].Shard, 4)
	want := []string{"a b poison c", "poison c", "poison c"} // the first try and 2 retries
	if got := fn.seen(); !slices.Equal(got, want) {
		t.Fatalf("batches %q, want %q", got, want)
	}
	f := p.Failures()
	if len(f) != 1 || f[0].StartSequenceNumber != recs[2].SequenceNumber || f[0].EndSequenceNumber != recs[3].SequenceNumber ||
		f[0].Condition != "RetryAttemptsExhausted" || f[0].RetryAttempts != 2 {
		t.Fatalf("on-failure destination got %+v, want poison..c after 2 retries", f)
	}
}

// With BisectBatchOnFunctionError a failed batch is split in two and the
// halves retried, without counting against MaximumRetryAttempts; the one
// record that fails is isolated and, its retries spent, discarded alone
// (https://docs.aws.amazon.com/lambda/latest/dg/kinesis-on-failure-destination.html).
func TestStreamPollerBisectsAFailedBatch(t *testing.T) {
	s := NewStream("bisect", StreamOptions{})
	recs := putAll(s, "k", "a", "b", "c", "d", "poison", "e", "f", "g")
	fn := &standIn{}
	p, err := NewStreamPoller(StreamPollerOptions{
		Stream: s, Function: fn, ReportBatchItemFailures: true, BisectBatchOnFunctionError: true,
		MaximumRetryAttempts: 1, RetryDelay: time.Millisecond,
	})
	if err != nil {
		t.Fatal(err)
	}
	drain(t, p, s, recs[0].Shard, 8)
	want := []string{
		"a b c d poison e f g", // fails: bisect
		"a b c d",              // ok
		"poison e f g",         // fails: bisect
		"poison e",             // fails: bisect
		"poison",               // fails: 1st failure of the record
		"poison",               // fails: 2nd, retries (1) spent: discarded
		"e",
		"f g",
	}
	if got := fn.seen(); !slices.Equal(got, want) {
		t.Fatalf("batches\n%q\nwant\n%q", got, want)
	}
	f := p.Failures()
	if len(f) != 1 || f[0].BatchSize != 1 || f[0].StartSequenceNumber != recs[4].SequenceNumber {
		t.Fatalf("on-failure destination got %+v, want the poison record alone", f)
	}
}

// Without bisect, a batch whose invocation failed is retried whole, and
// discarded whole when its retries are spent.
func TestStreamPollerRetriesAFailedBatchWhole(t *testing.T) {
	s := NewStream("whole", StreamOptions{})
	recs := putAll(s, "k", "a", "poison", "b")
	fn := &standIn{}
	p, err := NewStreamPoller(StreamPollerOptions{Stream: s, Function: fn, ReportBatchItemFailures: true, MaximumRetryAttempts: 2, RetryDelay: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	drain(t, p, s, recs[0].Shard, 3)
	if got, want := fn.seen(), []string{"a poison b", "a poison b", "a poison b"}; !slices.Equal(got, want) {
		t.Fatalf("batches %q, want %q", got, want)
	}
	if f := p.Failures(); len(f) != 1 || f[0].BatchSize != 3 {
		t.Fatalf("on-failure destination got %+v, want the whole batch", f)
	}
}

// A response that names a record not in the batch, or an empty
// itemIdentifier, fails the whole batch
// (https://docs.aws.amazon.com/lambda/latest/dg/services-kinesis-batchfailurereporting.html:
// "Lambda treats a batch as a complete failure if ... empty string
// itemIdentifier ... null itemIdentifier ... itemIdentifier with a bad key
// name").
func TestStreamPollerTreatsAMalformedResponseAsAFailure(t *testing.T) {
	for _, bad := range []string{`{"batchItemFailures":[{"itemIdentifier":"123"}]}`, `{"batchItemFailures":[{"itemIdentifier":""}]}`, `{"batchItemFailures":[{}]}`, `not json`} {
		t.Run(bad, func(t *testing.T) {
			s := NewStream("malformed", StreamOptions{})
			recs := putAll(s, "k", "a")
			calls := 0
			fn := &standIn{answer: func(events.KinesisEvent) (rie.Invocation, bool) {
				calls++
				if calls == 1 {
					return rie.Invocation{Status: 200, Payload: []byte(bad)}, true
				}
				return rie.Invocation{}, false
			}}
			p, _ := NewStreamPoller(StreamPollerOptions{Stream: s, Function: fn, ReportBatchItemFailures: true, RetryDelay: time.Millisecond})
			drain(t, p, s, recs[0].Shard, 1)
			if got := p.Batches(); len(got) != 2 || got[0].Outcome != "error" || got[1].Outcome != "success" {
				t.Fatalf("batches %v, want an error, then the retry's success", got)
			}
		})
	}
}

// Records older than MaximumRecordAge are discarded before they are sent.
func TestStreamPollerDiscardsRecordsPastTheMaximumAge(t *testing.T) {
	clock := testclock.New(time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC))
	s := NewStream("age", StreamOptions{Now: clock.Now})
	old := putAll(s, "k", "old1", "old2")
	clock.Advance(2 * time.Hour)
	putAll(s, "k", "new")
	fn := &standIn{}
	p, _ := NewStreamPoller(StreamPollerOptions{Stream: s, Function: fn, ReportBatchItemFailures: true, MaximumRecordAge: time.Hour, Now: clock.Now})
	drain(t, p, s, old[0].Shard, 3)
	if got := fn.seen(); !slices.Equal(got, []string{"new"}) {
		t.Fatalf("batches %q, want only the new record", got)
	}
	if f := p.Failures(); len(f) != 1 || f[0].Condition != "RecordAgeExceeded" || f[0].BatchSize != 2 {
		t.Fatalf("on-failure destination got %+v", f)
	}
}

// Records older than the stream's retention are gone: the shard's reader
// starts at the oldest record left.
func TestStreamTrimsRecordsPastItsRetention(t *testing.T) {
	clock := testclock.New(time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC))
	s := NewStream("retention", StreamOptions{Now: clock.Now, Retention: 24 * time.Hour})
	first := s.Put("k", []byte("expires"))
	clock.Advance(25 * time.Hour)
	s.Put("k", []byte("kept"))
	recs, pos := s.read(first.Shard, 0, 10)
	if pos != 1 || len(recs) != 1 || string(recs[0].Data) != "kept" {
		t.Fatalf("read from 0: position %d, %d record(s); want the kept record at position 1", pos, len(recs))
	}
}

// Each shard has its own checkpoint: a record that blocks one shard does
// not hold up another.
func TestStreamPollerShardsAreIndependent(t *testing.T) {
	s := NewStream("shards", StreamOptions{Shards: 2})
	var onShard [2]string // a partition key for each shard
	for i := 0; onShard[0] == "" || onShard[1] == ""; i++ {
		k := "key-" + string(rune('a'+i%26)) + strings.Repeat("x", i/26)
		r := s.Put(k, []byte("probe"))
		for j, id := range s.Shards() {
			if r.Shard == id && onShard[j] == "" {
				onShard[j] = k
			}
		}
	}
	shards := s.Shards()
	fn := &standIn{partial: true}
	p, _ := NewStreamPoller(StreamPollerOptions{Stream: s, Function: fn, ReportBatchItemFailures: true, RetryDelay: time.Millisecond})
	stop := p.Start(t.Context())
	defer stop()
	base0, base1 := countOn(s, shards[0]), countOn(s, shards[1])
	// The probes go through first, on each shard at its own pace: only
	// then does a checkpoint at base0 mean "stopped at the poison".
	waitCheckpoint := func(shard string, want int, what string) {
		t.Helper()
		deadline := time.Now().Add(5 * time.Second)
		for p.Checkpoint(shard) < want {
			if time.Now().After(deadline) {
				t.Fatal(what)
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
	waitCheckpoint(shards[0], base0, "shard 0 did not process its probe records")
	waitCheckpoint(shards[1], base1, "shard 1 did not process its probe records")
	s.Put(onShard[0], []byte("poison")) // blocks shard 0 (unbounded retries)
	s.Put(onShard[1], []byte("fine"))
	waitCheckpoint(shards[1], base1+1, "shard 1 did not move past its record while shard 0 was blocked")
	if got := p.Checkpoint(shards[0]); got != base0 {
		t.Fatalf("shard 0's checkpoint is %d; want %d, stopped at the poison record", got, base0)
	}
}

func countOn(s *Stream, shard string) int {
	recs, _ := s.read(shard, 0, 1<<20)
	return len(recs)
}

// A DynamoDB stream's records reach the function as an
// events.DynamoDBEvent, with the change's name, keys and images and the
// sequence number the partial batch response names.
func TestStreamPollerSendsDynamoDBChanges(t *testing.T) {
	s := NewDynamoDBStream("transfers", StreamOptions{})
	item := func(id string) map[string]events.DynamoDBAttributeValue {
		return map[string]events.DynamoDBAttributeValue{"id": events.NewStringAttribute(id)}
	}
	a := s.PutChange(Change{EventName: "INSERT", Keys: item("t-1"), NewImage: item("t-1")})
	b := s.PutChange(Change{EventName: "MODIFY", Keys: item("t-1"), NewImage: item("t-1"), OldImage: item("t-1")})
	if a.Shard != b.Shard {
		t.Fatal("two changes of one item landed in two shards")
	}
	var mu sync.Mutex
	var seen [][]string
	fn := invokerFunc(func(_ context.Context, payload []byte) (rie.Invocation, error) {
		var ev events.DynamoDBEvent
		if err := json.Unmarshal(payload, &ev); err != nil {
			return rie.Invocation{}, err
		}
		var names []string
		var resp events.DynamoDBEventResponse
		mu.Lock()
		for _, r := range ev.Records {
			names = append(names, r.EventName+" "+r.Change.Keys["id"].String())
			if r.EventSourceArn != s.ARN || len(r.EventID) != 32 || r.Change.StreamViewType != "NEW_AND_OLD_IMAGES" {
				t.Errorf("record %+v", r)
			}
		}
		if len(seen) == 0 { // the first time, report the MODIFY
			resp.BatchItemFailures = []events.DynamoDBBatchItemFailure{{ItemIdentifier: ev.Records[1].Change.SequenceNumber}}
		}
		seen = append(seen, names)
		mu.Unlock()
		out, _ := json.Marshal(resp)
		return rie.Invocation{Status: 200, Payload: out}, nil
	})
	p, _ := NewStreamPoller(StreamPollerOptions{Stream: s, Function: fn, ReportBatchItemFailures: true, RetryDelay: time.Millisecond})
	drain(t, p, s, a.Shard, 2)
	mu.Lock()
	defer mu.Unlock()
	if want := [][]string{{"INSERT t-1", "MODIFY t-1"}, {"MODIFY t-1"}}; !slices.EqualFunc(seen, want, slices.Equal[[]string]) {
		t.Fatalf("batches %q, want %q", seen, want)
	}
}
