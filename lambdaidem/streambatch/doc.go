// Package streambatch processes each record of a Kinesis data stream or a
// DynamoDB stream once across Lambda's retries. It wraps a per-record
// handler into a Lambda handler for a stream event source mapping with
// ReportBatchItemFailures, running every record through a
// [lambdaidem.Guard] and reporting where the shard must be read again.
//
// The two-minute version:
//
//	store, _ := dynamostore.New(dynamodb.NewFromConfig(cfg), "idempotency")
//	guard, _ := lambdaidem.New(store, func(o *lambdaidem.Options) {
//		o.RetryHorizon = streambatch.Horizon(7*24*time.Hour, 0) // the stream's retention
//		o.InFlight = lambdaidem.Wait                            // see "Leases" below
//	})
//	p, err := streambatch.New(guard, "RecordTransfer", func(o *streambatch.Options) {
//		o.Key = streambatch.KeyFromDataField("transfer_id")
//	})
//	if err != nil {
//		log.Fatal(err)
//	}
//	lambda.Start(p.Kinesis(func(ctx context.Context, r events.KinesisEventRecord) error {
//		// Staged writes commit in one transaction with the idempotency record.
//		return dynamostore.Stage(ctx, types.Put{TableName: aws.String("ledger"), Item: item(r)})
//	}))
//
// [Adapter.DynamoDB] does the same for a DynamoDB stream.
//
// # How Lambda reads a stream
//
// The event source mapping reads each shard in order and hands a batch of
// one shard's records to one invocation. With ReportBatchItemFailures
// listed in the mapping's FunctionResponseTypes, the function answers with
// the sequence numbers of failed records; Lambda checkpoints at the lowest
// one reported and sends every record from there again. An empty list is a
// complete success; a function error, a timeout or a crash fails the whole
// batch, which is retried from the last checkpoint, records that already
// succeeded included. (AWS Lambda Developer Guide, "Configuring partial
// batch response with Kinesis Data Streams and Lambda" and its DynamoDB
// twin: https://docs.aws.amazon.com/lambda/latest/dg/services-kinesis-batchfailurereporting.html,
// https://docs.aws.amazon.com/lambda/latest/dg/services-ddb-batchfailurereporting.html.)
//
// A failed batch is retried until the records expire from the stream, or
// are older than the mapping's MaximumRecordAgeInSeconds, or have been
// retried MaximumRetryAttempts times; both default to -1, unbounded. With
// BisectBatchOnFunctionError a failed batch is split in two, and the halves
// retried, without counting against the retry quota. Records discarded are
// described to the on-failure destination, if one is configured, and the
// shard moves on. (https://docs.aws.amazon.com/lambda/latest/dg/kinesis-on-failure-destination.html)
//
// So a record may arrive again after it succeeded (a later record failed
// its batch as a whole), and a failing record blocks its shard until it
// succeeds or is discarded.
//
// # What each record gets
//
//	first delivery, handler returns nil ------------> success (outcome committed)
//	completed duplicate (same key, same fingerprint) -> success, handler not run
//	handler error or panic -------------------------> failure, claim released: the retry runs it again
//	terminal error (lambdaidem.Terminal) -----------> failure, stored: retries fail without running it
//	same key, different fingerprint ----------------> failure, never processed (logged with the key hash)
//	no key (KeyFunc error) -------------------------> failure, never processed
//	Scope set, but no scope (error, "", panic) -----> failure, never processed (one ERROR line)
//	in progress in another invocation --------------> failure (or a wait, with InFlight: Wait)
//	outcome unknown, lease lost, store failure -----> failure
//	later record of a shard that failed ------------> not run, not reported: Lambda sends it again
//	invocation deadline reached before it ran ------> failure, not run
//
// Records of one shard run one after the other, in the order of the batch.
// At a shard's first failure its sequence number is reported and the rest
// of that shard's records in the batch do not run: they come back, in
// order, with the retry. Records of other shards (not in a batch from
// Lambda, which holds one shard's records, but possible in a hand-made
// event) go on. Records that completed before the failure replay without
// running when the retry brings them back.
//
// A record that cannot succeed (no key, a key reused with another payload,
// a terminal error) blocks its shard until Lambda discards it, and what
// Lambda discards is the batch it was retrying, which may hold records
// after the failing one that never ran (the on-failure destination's
// record names the batch's first and last sequence numbers and its size,
// so they can be read again from the stream). Configure
// MaximumRetryAttempts (or MaximumRecordAgeInSeconds), BisectBatchOnFunctionError
// and an on-failure destination, as the CDK helper in
// github.com/lambdaidem/lambdaidem/cdk/lambdaidemcdk does.
//
// # Keys and fingerprints
//
// [Options.Key] derives a record's idempotency key. The default,
// [KeyFromEventID], is the stream ARN and the record's event id: the same
// on every one of Lambda's retries of the record, which is all a DynamoDB
// stream can repeat (each change appears in the stream exactly once). A
// Kinesis producer that retries PutRecord writes a second record with a new
// sequence number and event id; only a key the producer chose catches it:
// [KeyFromDataField] (a field of the JSON data) or, for a DynamoDB stream,
// [KeyFromNewImage] (an attribute of the item as written).
//
// The fingerprint ([Options.Fingerprint], default [Fingerprint]) covers a
// Kinesis record's data (canonical JSON when it parses) and a DynamoDB
// record's event name, keys and new image. Two records with one key and
// different fingerprints are the key reused: the second is refused. A key
// taken from the new image therefore suits tables where each write of an
// item is one intent (an INSERT); for a table whose items are modified
// later, filter the mapping to INSERT events, or fingerprint less.
//
// # Horizon
//
// Lambda may send a record again for as long as the stream keeps it: 24
// hours up to 365 days on a Kinesis data stream (its retention period), 24
// hours on a DynamoDB stream; less if the mapping's maximum record age is
// shorter. The Guard's RetryHorizon (the record TTL) must be at least that
// long: use [Horizon].
//
// # Leases
//
// Each record's claim holds a lease that ends at the invocation's deadline
// plus [lambdaidem.Options.LeaseMargin]. When an invocation times out or
// crashes, Lambda retries the batch at once, and the retry finds the
// interrupted record in progress until its lease lapses. With the Guard's
// InFlight set to Reject, that record is reported failed, and the retry
// counts against MaximumRetryAttempts; with InFlight set to Wait (advised
// for streams, with a WaitTimeout longer than LeaseMargin), the retry waits
// for the lease to lapse, takes the record over and runs it.
//
// # What it does not cover
//
// Tumbling windows (events.KinesisTimeWindowEvent, with state carried
// between invocations) are not handled. Records aggregated by the Kinesis
// Producer Library reach the handler as one Kinesis record: de-aggregate
// inside the handler; the user records of one Kinesis record share its
// key, and fail and retry together.
//
// # The batch handler's error
//
// The batch handler reports failures in its response and returns a nil
// error, except [ErrUnreportable]: a failed record without a sequence
// number cannot be named in the response, so the whole batch fails.
package streambatch
