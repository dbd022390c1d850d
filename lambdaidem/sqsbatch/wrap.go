package sqsbatch

import (
	"context"
	"errors"

	"github.com/aws/aws-lambda-go/events"

	"github.com/lambdaidem/lambdaidem/lambdaidem"
)

// ErrUnreportable is returned by a wrapped batch handler when a message
// failed but has no messageId to report it by. Lambda would treat an empty
// itemIdentifier as a failure of the whole batch; the error says so
// plainly. Every message of the batch is then delivered again, and those
// that succeeded replay their outcome without running.
var ErrUnreportable = errors.New("sqsbatch: a failed message has no messageId; the whole batch is retried")

// Adapter makes SQS batch handlers idempotent under one operation. Build
// it with [New], which validates the options; its Wrap method cannot fail.
// It is read-only after New, so batches may run concurrently.
type Adapter struct {
	g         *lambdaidem.Guard
	operation string
	opts      Options
	namespace string
}

// New returns an Adapter that runs handlers through g under the operation
// name. It returns an error if g is nil, the operation is empty, or an
// option is invalid.
func New(g *lambdaidem.Guard, operation string, optFns ...func(*Options)) (*Adapter, error) {
	switch {
	case g == nil:
		return nil, errors.New("sqsbatch: nil Guard")
	case operation == "":
		return nil, errors.New("sqsbatch: empty operation")
	}
	o := Options{Logger: g.Options().Logger}
	for _, fn := range optFns {
		fn(&o)
	}
	if err := o.setDefaults(); err != nil {
		return nil, err
	}
	return &Adapter{g: g, operation: operation, opts: o, namespace: g.Options().Namespace}, nil
}

// Wrap returns a batch handler for an SQS event source mapping with
// ReportBatchItemFailures: it runs h once per message, and lists every
// message that must be delivered again in the response's
// BatchItemFailures. The result has the signature lambda.Start accepts.
//
// A message is a success when h returned nil for it, now or in an earlier
// delivery (a completed duplicate replays without running h). It is a batch
// item failure when h returned an error or panicked; when its key cannot be
// derived; when it reuses a key with a different fingerprint (h never runs
// for it); when another invocation holds its record (in progress), its
// outcome is unknown, the attempt's lease was lost, or the store failed;
// when h returned a [lambdaidem.Terminal] error, now or in an earlier
// delivery (so a message with a decided failure reaches the dead-letter
// queue without running again); and, on a FIFO queue, when an earlier
// message of its group failed in this batch (h never runs for it).
//
// The batch handler's error is nil except for [ErrUnreportable]: a store
// outage fails every message individually rather than the invocation.
// Wrap cannot fail: a nil h fails every message, and says so in the log.
func (a *Adapter) Wrap(h func(context.Context, events.SQSMessage) error) func(context.Context, events.SQSEvent) (events.SQSEventResponse, error) {
	if h == nil {
		h = func(context.Context, events.SQSMessage) error { return errNilHandler }
	}
	w := &wrapper{Adapter: a, h: h}
	return w.handle
}

var errNilHandler = errors.New("sqsbatch: nil handler")

// wrapper is one wrapped handler.
type wrapper struct {
	*Adapter
	h func(context.Context, events.SQSMessage) error
}

// handle processes one batch: prepare every record, plan the lanes, run
// them, and report the failures in the order of the batch.
func (w *wrapper) handle(ctx context.Context, ev events.SQSEvent) (events.SQSEventResponse, error) {
	items := make([]*item, len(ev.Records))
	for i := range ev.Records {
		items[i] = w.prepare(ctx, &ev.Records[i])
	}
	w.run(ctx, plan(items))
	return respond(items)
}

// respond lists the failed messages once each, in batch order.
func respond(items []*item) (events.SQSEventResponse, error) {
	resp := events.SQSEventResponse{BatchItemFailures: []events.SQSBatchItemFailure{}}
	seen := make(map[string]bool)
	for _, it := range items {
		if !it.failed {
			continue
		}
		id := it.msg.MessageId
		if id == "" {
			return events.SQSEventResponse{}, ErrUnreportable
		}
		if !seen[id] {
			seen[id] = true
			resp.BatchItemFailures = append(resp.BatchItemFailures, events.SQSBatchItemFailure{ItemIdentifier: id})
		}
	}
	return resp, nil
}
