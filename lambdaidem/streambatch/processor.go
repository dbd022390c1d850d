package streambatch

import (
	"context"
	"errors"

	"github.com/aws/aws-lambda-go/events"

	"github.com/lambdaidem/lambdaidem/lambdaidem"
)

// ErrUnreportable is returned by a wrapped batch handler when a record
// failed but has no sequence number to report it by. Lambda treats an
// empty itemIdentifier as a failure of the whole batch; the error says so
// plainly. The batch is then retried from the shard's checkpoint, and the
// records that succeeded replay their outcome without running.
var ErrUnreportable = errors.New("streambatch: a failed record has no sequence number; the whole batch is retried")

// Processor runs stream records through a Guard, once each. Build it with
// [New]; it is safe for concurrent use, so one Processor serves every
// invocation.
type Processor struct {
	g         *lambdaidem.Guard
	operation string
	opts      Options
	namespace string
}

// New returns a Processor that runs records through g under the operation
// name. It returns an error if g is nil or the operation is empty.
func New(g *lambdaidem.Guard, operation string, optFns ...func(*Options)) (*Processor, error) {
	switch {
	case g == nil:
		return nil, errors.New("streambatch: nil Guard")
	case operation == "":
		return nil, errors.New("streambatch: empty operation")
	}
	var o Options
	for _, fn := range optFns {
		fn(&o)
	}
	o.setDefaults()
	return &Processor{g: g, operation: operation, opts: o, namespace: g.Options().Namespace}, nil
}

// Kinesis returns a batch handler for a Kinesis event source mapping with
// ReportBatchItemFailures: it runs h once per record, in shard order, and
// reports in the response the sequence number of each shard's first
// failure. The result has the signature lambda.Start accepts.
//
// Kinesis panics if h is nil: that is a mistake in the program, not in an
// event.
func (p *Processor) Kinesis(h func(context.Context, events.KinesisEventRecord) error) func(context.Context, events.KinesisEvent) (events.KinesisEventResponse, error) {
	if h == nil {
		panic("streambatch: Processor.Kinesis: nil handler")
	}
	return func(ctx context.Context, ev events.KinesisEvent) (events.KinesisEventResponse, error) {
		failed, err := handle(ctx, p, ev.Records, kinesisRecord, h, func(seq string) events.KinesisBatchItemFailure {
			return events.KinesisBatchItemFailure{ItemIdentifier: seq}
		})
		return events.KinesisEventResponse{BatchItemFailures: failed}, err
	}
}

// DynamoDB returns a batch handler for a DynamoDB stream event source
// mapping with ReportBatchItemFailures: it runs h once per record, in
// shard order, and reports in the response the sequence number of each
// shard's first failure. The result has the signature lambda.Start
// accepts.
//
// DynamoDB panics if h is nil: that is a mistake in the program, not in an
// event.
func (p *Processor) DynamoDB(h func(context.Context, events.DynamoDBEventRecord) error) func(context.Context, events.DynamoDBEvent) (events.DynamoDBEventResponse, error) {
	if h == nil {
		panic("streambatch: Processor.DynamoDB: nil handler")
	}
	return func(ctx context.Context, ev events.DynamoDBEvent) (events.DynamoDBEventResponse, error) {
		failed, err := handle(ctx, p, ev.Records, dynamoDBRecord, h, func(seq string) events.DynamoDBBatchItemFailure {
			return events.DynamoDBBatchItemFailure{ItemIdentifier: seq}
		})
		return events.DynamoDBEventResponse{BatchItemFailures: failed}, err
	}
}

// handle processes one batch of records of type R and returns its batch
// item failures, built by failure from each reported sequence number: an
// empty, non-nil list for a complete success, nil with [ErrUnreportable].
func handle[R, F any](ctx context.Context, p *Processor, records []R, view func(*R) Record, h func(context.Context, R) error, failure func(seq string) F) ([]F, error) {
	items := make([]*item, len(records))
	for i := range records {
		r := &records[i]
		items[i] = p.prepare(ctx, view(r), func(ctx context.Context) error { return h(ctx, *r) })
	}
	seqs, err := p.run(ctx, items)
	if err != nil {
		return nil, err
	}
	failed := make([]F, 0, len(seqs))
	for _, seq := range seqs {
		failed = append(failed, failure(seq))
	}
	return failed, nil
}
