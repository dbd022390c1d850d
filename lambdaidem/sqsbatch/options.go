package sqsbatch

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/aws/aws-lambda-go/events"

	"github.com/lambdaidem/lambdaidem/lambdaidem"
)

// DefaultConcurrency is the default bound on records (standard queues) or
// message groups (FIFO queues) processed at once in one batch.
const DefaultConcurrency = 8

// Options configure an [Adapter]. The zero value of every field means its
// documented default.
type Options struct {
	// Key returns the idempotency key of a message. Default
	// [KeyFromMessageID]: each message is processed once across its
	// redeliveries, but a producer that sends the same intent twice makes two
	// messages. Prefer a key the producer chooses, such as
	// [KeyFromJSONField] or [KeyFromAttribute]. A message whose key cannot be
	// derived is reported as a batch item failure and never processed.
	Key KeyFunc

	// Scope returns the tenant or principal a message acts for; messages of
	// different scopes never share a record. Set, it is required: a message
	// for which it returns an error or an empty scope (or panics) is not run
	// but reported as a batch item failure, so SQS redelivers it (and, past
	// maxReceiveCount, moves it to the dead-letter queue), with one error log
	// line. Default: no scope.
	Scope func(context.Context, events.SQSMessage) (string, error)

	// FingerprintAttributes names the message attributes that, with the
	// body, define a message's intent. A message that reuses a key with a
	// different body or different values of these attributes is refused and
	// never processed. Default: none, the body alone.
	FingerprintAttributes []string

	// Concurrency bounds how many records of a standard queue, or message
	// groups of a FIFO queue, are processed at once. Default
	// [DefaultConcurrency]; 1 processes the batch sequentially.
	Concurrency int

	// Reconcile, if set, resolves a message whose record an earlier attempt
	// left UNKNOWN (it began an external effect and then failed): it reports
	// whether the effect happened, or an error if it cannot tell yet. See
	// [lambdaidem.Call]. Default: such a message is a batch item failure
	// until the record expires.
	Reconcile func(context.Context, events.SQSMessage, lambdaidem.Unknown) (bool, error)

	// ConditionFailed, if set, decides what becomes of a message whose
	// staged writes a business condition refused at commit (see
	// lambdaidem.ErrConditionFailed; err reaches the store's typed error):
	// true acknowledges it, as a success, so that SQS deletes it; false
	// reports it as a batch item failure. Nothing was written either way.
	// Default: a batch item failure, redelivered until the queue's redrive
	// policy moves it to the dead-letter queue.
	ConditionFailed func(ctx context.Context, m events.SQSMessage, err error) bool

	// Logger receives one line per failed, refused or skipped message, with
	// the message id and the record key (a hash, never the raw key); bodies
	// are never logged. A handler's failure or panic and a store failure are
	// logged at level Error. Default: the Guard's Logger (see
	// lambdaidem.Options.Logger: its Error lines go to slog.Default()).
	Logger *slog.Logger
}

func (o *Options) setDefaults() error {
	switch {
	case o.Concurrency < 0:
		return fmt.Errorf("sqsbatch: Concurrency must not be negative, got %d", o.Concurrency)
	case o.Concurrency == 0:
		o.Concurrency = DefaultConcurrency
	}
	if o.Key == nil {
		o.Key = KeyFromMessageID
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	for _, name := range o.FingerprintAttributes {
		if name == "" {
			return errors.New("sqsbatch: FingerprintAttributes holds an empty name")
		}
	}
	return nil
}
