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

var errNilHandler = errors.New("streambatch: nil handler")

// Adapter makes stream batch handlers idempotent under one operation:
// build it with [New], which validates the options; its Kinesis and
// DynamoDB methods cannot fail. It is read-only after New, so batches may
// run concurrently.
type Adapter struct {
	g         *lambdaidem.Guard
	operation string
	opts      Options
	namespace string
}

// New returns an Adapter that runs records through g under the operation
// name. It returns an error if g is nil or the operation is empty.
func New(g *lambdaidem.Guard, operation string, optFns ...func(*Options)) (*Adapter, error) {
	switch {
	case g == nil:
		return nil, errors.New("streambatch: nil Guard")
	case operation == "":
		return nil, errors.New("streambatch: empty operation")
	}
	o := Options{Logger: g.Options().Logger}
	for _, fn := range optFns {
		fn(&o)
	}
	o.setDefaults()
	return &Adapter{g: g, operation: operation, opts: o, namespace: g.Options().Namespace}, nil
}

// Unguarded returns an Adapter that runs records exactly as one from [New]
// does (in shard order; each shard's first failure reported, its later
// records not run; a panic fails the record) but keeps no idempotency
// record: for a handler that is idempotent by itself, such as the outbox
// relay (dynamostore/relay), whose conditional writes are its record. Of
// the options only Logger applies.
func Unguarded(optFns ...func(*Options)) *Adapter {
	var o Options
	for _, fn := range optFns {
		fn(&o)
	}
	o.setDefaults()
	return &Adapter{opts: o}
}

// Kinesis returns a batch handler for a Kinesis event source mapping with
// ReportBatchItemFailures: it runs h once per record, in shard order, and
// reports in the response the sequence number of each shard's first
// failure. The result has the signature lambda.Start accepts.
//
// Kinesis cannot fail: a nil h fails every record, and says so in the log.
func (a *Adapter) Kinesis(h func(context.Context, events.KinesisEventRecord) error) func(context.Context, events.KinesisEvent) (events.KinesisEventResponse, error) {
	if h == nil {
		h = func(context.Context, events.KinesisEventRecord) error { return errNilHandler }
	}
	return func(ctx context.Context, ev events.KinesisEvent) (events.KinesisEventResponse, error) {
		failed, err := handle(ctx, a, ev.Records, kinesisRecord, h, func(seq string) events.KinesisBatchItemFailure {
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
// DynamoDB cannot fail: a nil h fails every record, and says so in the
// log.
func (a *Adapter) DynamoDB(h func(context.Context, events.DynamoDBEventRecord) error) func(context.Context, events.DynamoDBEvent) (events.DynamoDBEventResponse, error) {
	if h == nil {
		h = func(context.Context, events.DynamoDBEventRecord) error { return errNilHandler }
	}
	return func(ctx context.Context, ev events.DynamoDBEvent) (events.DynamoDBEventResponse, error) {
		failed, err := handle(ctx, a, ev.Records, dynamoDBRecord, h, func(seq string) events.DynamoDBBatchItemFailure {
			return events.DynamoDBBatchItemFailure{ItemIdentifier: seq}
		})
		return events.DynamoDBEventResponse{BatchItemFailures: failed}, err
	}
}

// handle processes one batch of records of type R and returns its batch
// item failures, built by failure from each reported sequence number: an
// empty, non-nil list for a complete success, nil with [ErrUnreportable].
func handle[R, F any](ctx context.Context, a *Adapter, records []R, view func(*R) Record, h func(context.Context, R) error, failure func(seq string) F) ([]F, error) {
	items := make([]*item, len(records))
	for i := range records {
		r := &records[i]
		items[i] = a.prepare(ctx, view(r), func(ctx context.Context) error { return h(ctx, *r) })
	}
	seqs, err := a.run(ctx, items)
	if err != nil {
		return nil, err
	}
	failed := make([]F, 0, len(seqs))
	for _, seq := range seqs {
		failed = append(failed, failure(seq))
	}
	return failed, nil
}
