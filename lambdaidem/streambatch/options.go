package streambatch

import (
	"context"
	"log/slog"
	"time"

	"github.com/lambdaidem/lambdaidem/lambdaidem"
)

// Options configure an [Adapter]. The zero value of every field means its
// documented default.
type Options struct {
	// Key returns the idempotency key of a record. Default
	// [KeyFromEventID]: each record is processed once across Lambda's
	// retries, but a Kinesis producer that puts the same intent twice makes
	// two records. A record whose key cannot be derived is a failure and
	// never processed.
	Key KeyFunc

	// Fingerprint returns the fingerprint of a record: a record that reuses
	// a key with another fingerprint is refused. Default [Fingerprint].
	Fingerprint func(context.Context, Record) (string, error)

	// Scope returns the tenant or principal a record acts for; records of
	// different scopes never share an idempotency record. Set, it is
	// required: a record for which it returns an error or an empty scope
	// (or panics) is not run but reported, so that Lambda retries the shard
	// from it, with one error log line. Default: no scope.
	Scope func(context.Context, Record) (string, error)

	// Reconcile, if set, resolves a record whose idempotency record an
	// earlier attempt left UNKNOWN (it began an external effect and then
	// failed): it reports whether the effect happened, or an error if it
	// cannot tell yet. See [lambdaidem.Call]. Default: such a record fails
	// until its idempotency record expires.
	Reconcile func(context.Context, Record, lambdaidem.Unknown) (bool, error)

	// ConditionFailed, if set, decides what becomes of a record whose
	// staged writes a business condition refused at commit (see
	// lambdaidem.ErrConditionFailed; err reaches the store's typed error):
	// true counts it as processed, so that the shard goes on past it;
	// false reports it, so that Lambda retries the shard from it. Nothing
	// was written either way. Default: reported, until the event source
	// mapping's retry settings give up on it.
	ConditionFailed func(ctx context.Context, r Record, err error) bool

	// Logger receives one line per failed, refused or skipped record, with
	// its event id, sequence number and record key (a hash, never the raw
	// key); record data is never logged. A handler's failure or panic and a
	// store failure are logged at level Error. Default: the Guard's Logger
	// (see lambdaidem.Options.Logger: its Error lines go to slog.Default()).
	Logger *slog.Logger
}

func (o *Options) setDefaults() {
	if o.Key == nil {
		o.Key = KeyFromEventID
	}
	if o.Fingerprint == nil {
		o.Fingerprint = Fingerprint
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
}

// Retention limits of the streams Lambda reads, for [Horizon].
const (
	// DynamoDBStreamRetention is how long a DynamoDB stream keeps a record:
	// 24 hours, fixed.
	// (https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/Streams.html)
	DynamoDBStreamRetention = 24 * time.Hour
	// KinesisMinRetention and KinesisMaxRetention bound a Kinesis data
	// stream's retention period: 24 hours (the default) to 8,760 hours.
	// (https://docs.aws.amazon.com/streams/latest/dev/kinesis-extended-retention.html)
	KinesisMinRetention = 24 * time.Hour
	KinesisMaxRetention = 8760 * time.Hour
)

// Horizon returns how long after it first arrives a stream record may be
// sent to the function again: the stream's retention, or the event source
// mapping's maximum record age if that is set (positive) and shorter.
// Records older than either are never sent. Use it, or anything longer, as
// the Guard's RetryHorizon: a record's idempotency record then outlives
// every retry of it.
func Horizon(retention, maxRecordAge time.Duration) time.Duration {
	if maxRecordAge > 0 && maxRecordAge < retention {
		return maxRecordAge
	}
	return retention
}
