package e2estack

import (
	"context"
	"crypto/md5"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/lambdaidem/lambdaidem/ddbtest/rie"
)

// StreamPollerOptions configure a [StreamPoller]. The fields are the event
// source mapping's parameters for Kinesis
// (https://docs.aws.amazon.com/lambda/latest/dg/services-kinesis-parameters.html).
type StreamPollerOptions struct {
	// Stream is the stream to read. Required.
	Stream *Stream
	// Function runs the batches. Required.
	Function rie.Invoker
	// BatchSize is the most records per invocation. Default 100.
	BatchSize int
	// ReportBatchItemFailures makes the poller read the function's partial
	// batch response. Without it any answer but an error is a complete
	// success.
	ReportBatchItemFailures bool
	// BisectBatchOnFunctionError splits a batch whose invocation failed in
	// two, and retries the halves, without counting against
	// MaximumRetryAttempts.
	BisectBatchOnFunctionError bool
	// MaximumRetryAttempts bounds the retries of a failed batch; -1 (and
	// the zero value) retry until the records expire.
	MaximumRetryAttempts int
	// MaximumRecordAge discards records older than this before they are
	// sent; 0 never. (Lambda accepts 60 seconds to 7 days; the poller
	// accepts less, so that a test need not wait a minute.)
	MaximumRecordAge time.Duration
	// OnFailure, the on-failure destination, receives a description of
	// each discarded batch.
	OnFailure func(StreamFailure)
	// OnBatch, if set, is called after each invocation.
	OnBatch func(StreamBatch)
	// PollInterval is the wait before reading an idle shard again. Default
	// 50ms.
	PollInterval time.Duration
	// RetryDelay is the wait before retrying a failed batch. Default 100ms.
	RetryDelay time.Duration
	// Now is the clock of record ages. Default time.Now.
	Now func() time.Time
}

// StreamFailure describes records the poller discarded, as Lambda's
// invocation record for an on-failure destination does (its
// KinesisBatchInfo and condition).
type StreamFailure struct {
	Shard                    string
	StartSequenceNumber      string
	EndSequenceNumber        string
	BatchSize                int
	Condition                string // "RetryAttemptsExhausted" or "RecordAgeExceeded"
	RetryAttempts            int
	ApproximateArrivalOfLast time.Time
}

// StreamBatch is what one invocation of the poller did.
type StreamBatch struct {
	Shard string
	// SequenceNumbers are the records sent, in order.
	SequenceNumbers []string
	// Invocation is what the function returned; InvokeErr is set when it
	// could not be invoked.
	Invocation rie.Invocation
	InvokeErr  error
	// Reported lists the itemIdentifiers of the partial batch response.
	Reported []string
	// Outcome is "success", "partial" (the checkpoint moved to the lowest
	// reported record), or "error" (the whole batch failed).
	Outcome string
	// Bisected is set when the failed batch was split in two.
	Bisected bool
	// Attempt counts the failed invocations before this one that started at
	// the same record (bisected halves not counted).
	Attempt int
}

// StreamPoller behaves like Lambda's event source mapping for a Kinesis
// stream (or a DynamoDB stream, whose mapping has the same parameters and
// the same partial batch response): one reader per shard, in order, one batch in flight per shard;
// a checkpoint per shard that moves past a batch when it succeeds, to the
// lowest reported sequence number of a partial batch response ("Lambda
// uses the record with the lowest sequence number as the checkpoint. Lambda
// then retries all records starting from that checkpoint"); a batch whose
// invocation failed (a function error, a timeout, a crash, or a response
// that is malformed or names a record not in the batch) is retried from the
// checkpoint, split in two first if BisectBatchOnFunctionError is set; and
// records are discarded, described to OnFailure, once MaximumRetryAttempts
// or MaximumRecordAge is exceeded
// (https://docs.aws.amazon.com/lambda/latest/dg/services-kinesis-batchfailurereporting.html,
// https://docs.aws.amazon.com/lambda/latest/dg/kinesis-on-failure-destination.html).
type StreamPoller struct {
	o StreamPollerOptions

	mu      sync.Mutex
	batches []StreamBatch
	fails   []StreamFailure
	sent    map[string]int // sequence number → times sent
	pos     map[string]int // shard → checkpoint (a position in the shard)
}

// NewStreamPoller returns a poller; start it with Start.
func NewStreamPoller(o StreamPollerOptions) (*StreamPoller, error) {
	if o.Stream == nil || o.Function == nil {
		return nil, errors.New("e2estack: a StreamPoller needs Stream and Function")
	}
	if o.BatchSize <= 0 {
		o.BatchSize = 100
	}
	if o.MaximumRetryAttempts == 0 {
		o.MaximumRetryAttempts = -1
	}
	if o.PollInterval <= 0 {
		o.PollInterval = 50 * time.Millisecond
	}
	if o.RetryDelay <= 0 {
		o.RetryDelay = 100 * time.Millisecond
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return &StreamPoller{o: o, sent: map[string]int{}, pos: map[string]int{}}, nil
}

// Start runs one reader per shard until the returned stop function is
// called; stop waits for the invocations in progress.
func (p *StreamPoller) Start(ctx context.Context) (stop func()) {
	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	for _, id := range p.o.Stream.Shards() {
		wg.Go(func() { p.runShard(ctx, id) })
	}
	return func() {
		cancel()
		wg.Wait()
	}
}

// span is a range of positions in a shard still to be processed: what
// remains of a batch being retried, or one of its bisected halves.
type span struct{ from, to int }

// runShard reads one shard until ctx ends.
func (p *StreamPoller) runShard(ctx context.Context, shardID string) {
	var pending []span        // spans to retry, first one next; empty: read a fresh batch
	failures := map[int]int{} // span start → failed invocations that started there
	for ctx.Err() == nil {
		checkpoint := p.checkpoint(shardID)
		var recs []StreamRecord
		var first int
		if len(pending) > 0 {
			sp := pending[0]
			recs, first = p.o.Stream.read(shardID, sp.from, sp.to-sp.from)
			if first != sp.from { // records trimmed meanwhile: retry what is left
				pending = nil
				continue
			}
		} else {
			recs, first = p.o.Stream.read(shardID, checkpoint, p.o.BatchSize)
		}
		if len(recs) == 0 {
			pending = nil
			p.setCheckpoint(shardID, first)
			sleep(ctx, p.o.PollInterval)
			continue
		}
		// Records past the maximum age are discarded before the invoke.
		if n := p.expired(recs); n > 0 {
			p.discard(shardID, recs[:n], "RecordAgeExceeded", failures[first])
			p.setCheckpoint(shardID, first+n)
			pending = nil
			continue
		}
		b := p.invoke(ctx, shardID, recs)
		b.Attempt = failures[first]
		if ctx.Err() != nil && b.InvokeErr != nil {
			return // stopping: the invocation was abandoned, not failed
		}
		end := first + len(recs)
		switch b.Outcome {
		case "success":
			p.setCheckpoint(shardID, end)
			if len(pending) > 0 {
				pending = pending[1:]
			}
			clear(failures)
		case "partial":
			// The checkpoint moves to the lowest reported record; only the
			// records from there are retried, and that counts as a retry.
			at := first + indexOf(recs, lowest(b.Reported, recs))
			p.setCheckpoint(shardID, at)
			failures[at]++
			if p.exhausted(failures[at]) {
				p.discard(shardID, recs[at-first:], "RetryAttemptsExhausted", failures[at]-1)
				p.setCheckpoint(shardID, end)
				pending, failures = pending[min(1, len(pending)):], map[int]int{}
				break
			}
			rest := span{at, end}
			if len(pending) > 0 {
				pending[0] = rest
			} else {
				pending = []span{rest}
			}
		case "error":
			if p.o.BisectBatchOnFunctionError && len(recs) > 1 {
				half := first + len(recs)/2
				b.Bisected = true
				rest := []span{{first, half}, {half, end}}
				if len(pending) > 0 {
					pending = append(rest, pending[1:]...)
				} else {
					pending = rest
				}
				break
			}
			failures[first]++
			if p.exhausted(failures[first]) {
				p.discard(shardID, recs, "RetryAttemptsExhausted", failures[first]-1)
				p.setCheckpoint(shardID, end)
				if len(pending) > 0 {
					pending = pending[1:]
				}
				break
			}
			if len(pending) == 0 {
				pending = []span{{first, end}}
			}
		}
		p.record(b)
		if b.Outcome != "success" {
			sleep(ctx, p.o.RetryDelay)
		}
	}
}

// invoke sends one batch and classifies the answer.
func (p *StreamPoller) invoke(ctx context.Context, shardID string, recs []StreamRecord) StreamBatch {
	b := StreamBatch{Shard: shardID}
	p.mu.Lock()
	for _, r := range recs {
		b.SequenceNumbers = append(b.SequenceNumbers, r.SequenceNumber)
		p.sent[r.SequenceNumber]++
	}
	p.mu.Unlock()
	payload, err := p.payload(recs)
	if err != nil {
		b.InvokeErr, b.Outcome = err, "error"
		return b
	}
	b.Invocation, b.InvokeErr = p.o.Function.Invoke(ctx, payload)
	if b.InvokeErr != nil || b.Invocation.FunctionError != "" || b.Invocation.Status >= 300 {
		b.Outcome = "error"
		return b
	}
	if !p.o.ReportBatchItemFailures {
		b.Outcome = "success"
		return b
	}
	// An empty or null response, or an empty list, is a complete success;
	// an empty, null or unknown itemIdentifier fails the whole batch. (The
	// Kinesis and DynamoDB responses have the same shape.)
	var resp events.KinesisEventResponse
	if len(b.Invocation.Payload) > 0 && string(b.Invocation.Payload) != "null" {
		if err := json.Unmarshal(b.Invocation.Payload, &resp); err != nil {
			b.Outcome = "error"
			return b
		}
	}
	for _, f := range resp.BatchItemFailures {
		b.Reported = append(b.Reported, f.ItemIdentifier)
		if indexOf(recs, f.ItemIdentifier) < 0 {
			b.Outcome = "error"
			return b
		}
	}
	b.Outcome = "success"
	if len(b.Reported) > 0 {
		b.Outcome = "partial"
	}
	return b
}

// payload renders a batch as the event Lambda sends: an events.KinesisEvent,
// or an events.DynamoDBEvent for a DynamoDB stream.
func (p *StreamPoller) payload(recs []StreamRecord) ([]byte, error) {
	if !p.o.Stream.dynamo {
		ev := events.KinesisEvent{Records: make([]events.KinesisEventRecord, len(recs))}
		for i, r := range recs {
			ev.Records[i] = p.event(r)
		}
		return json.Marshal(ev)
	}
	ev := events.DynamoDBEvent{Records: make([]events.DynamoDBEventRecord, len(recs))}
	for i, r := range recs {
		ev.Records[i] = p.change(r)
	}
	return json.Marshal(ev)
}

// change renders a record as Lambda's DynamoDB stream event record: the
// event id is unique per record (DynamoDB's are 32 hex digits).
func (p *StreamPoller) change(r StreamRecord) events.DynamoDBEventRecord {
	c := Change{}
	if r.Change != nil {
		c = *r.Change
	}
	id := md5.Sum([]byte(p.o.Stream.ARN + "/" + r.SequenceNumber))
	return events.DynamoDBEventRecord{
		AWSRegion:      "us-east-1",
		EventID:        hex.EncodeToString(id[:]),
		EventName:      c.EventName,
		EventSource:    "aws:dynamodb",
		EventVersion:   "1.1",
		EventSourceArn: p.o.Stream.ARN,
		Change: events.DynamoDBStreamRecord{
			ApproximateCreationDateTime: events.SecondsEpochTime{Time: r.Arrival.Truncate(time.Second)},
			Keys:                        c.Keys,
			NewImage:                    c.NewImage,
			OldImage:                    c.OldImage,
			SequenceNumber:              r.SequenceNumber,
			SizeBytes:                   int64(len(r.PartitionKey)),
			StreamViewType:              "NEW_AND_OLD_IMAGES",
		},
	}
}

// event renders a record as Lambda's Kinesis event record.
func (p *StreamPoller) event(r StreamRecord) events.KinesisEventRecord {
	return events.KinesisEventRecord{
		AwsRegion:         "us-east-1",
		EventID:           r.Shard + ":" + r.SequenceNumber,
		EventName:         "aws:kinesis:record",
		EventSource:       "aws:kinesis",
		EventSourceArn:    p.o.Stream.ARN,
		EventVersion:      "1.0",
		InvokeIdentityArn: "arn:aws:iam::000000000000:role/stream-consumer",
		Kinesis: events.KinesisRecord{
			ApproximateArrivalTimestamp: events.SecondsEpochTime{Time: r.Arrival},
			Data:                        r.Data,
			PartitionKey:                r.PartitionKey,
			SequenceNumber:              r.SequenceNumber,
			KinesisSchemaVersion:        "1.0",
		},
	}
}

// expired returns how many records at the front of recs are older than
// the maximum record age.
func (p *StreamPoller) expired(recs []StreamRecord) int {
	if p.o.MaximumRecordAge <= 0 {
		return 0
	}
	cut := p.o.Now().Add(-p.o.MaximumRecordAge)
	n := 0
	for n < len(recs) && recs[n].Arrival.Before(cut) {
		n++
	}
	return n
}

func (p *StreamPoller) exhausted(failures int) bool {
	return p.o.MaximumRetryAttempts >= 0 && failures > p.o.MaximumRetryAttempts
}

// discard drops records, describing them to the on-failure destination.
func (p *StreamPoller) discard(shardID string, recs []StreamRecord, condition string, retries int) {
	f := StreamFailure{
		Shard: shardID, StartSequenceNumber: recs[0].SequenceNumber, EndSequenceNumber: recs[len(recs)-1].SequenceNumber,
		BatchSize: len(recs), Condition: condition, RetryAttempts: retries, ApproximateArrivalOfLast: recs[len(recs)-1].Arrival,
	}
	p.mu.Lock()
	p.fails = append(p.fails, f)
	p.mu.Unlock()
	if p.o.OnFailure != nil {
		p.o.OnFailure(f)
	}
}

func (p *StreamPoller) record(b StreamBatch) {
	p.mu.Lock()
	p.batches = append(p.batches, b)
	p.mu.Unlock()
	if p.o.OnBatch != nil {
		p.o.OnBatch(b)
	}
}

func (p *StreamPoller) checkpoint(shardID string) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.pos[shardID]
}

func (p *StreamPoller) setCheckpoint(shardID string, pos int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.pos[shardID] = pos
}

// Checkpoint returns how many records of the shard the poller is done
// with: processed, or discarded.
func (p *StreamPoller) Checkpoint(shardID string) int { return p.checkpoint(shardID) }

// Sent returns how many times the record with the sequence number was sent
// to the function.
func (p *StreamPoller) Sent(sequenceNumber string) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.sent[sequenceNumber]
}

// Batches returns a copy of every invocation so far.
func (p *StreamPoller) Batches() []StreamBatch {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]StreamBatch(nil), p.batches...)
}

// Failures returns a copy of what was sent to the on-failure destination.
func (p *StreamPoller) Failures() []StreamFailure {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]StreamFailure(nil), p.fails...)
}

// String summarizes a batch for logs.
func (b StreamBatch) String() string {
	s := fmt.Sprintf("%s: %d record(s), %s", b.Shard, len(b.SequenceNumbers), b.Outcome)
	if b.Invocation.FunctionError != "" {
		s += " (" + b.Invocation.FunctionError + ")"
	}
	if b.Bisected {
		s += ", bisected"
	}
	return s
}

// indexOf returns the index of the record with the sequence number, or -1.
func indexOf(recs []StreamRecord, seq string) int {
	for i, r := range recs {
		if r.SequenceNumber == seq {
			return i
		}
	}
	return -1
}

// lowest returns the reported sequence number that comes first in recs
// (sequence numbers grow within a shard).
func lowest(reported []string, recs []StreamRecord) string {
	best := -1
	for _, s := range reported {
		if i := indexOf(recs, s); i >= 0 && (best < 0 || i < best) {
			best = i
		}
	}
	return recs[max(best, 0)].SequenceNumber
}
