// Package sqsbatch processes each SQS message once across redeliveries. It
// wraps a per-message handler into a Lambda handler for an SQS event source
// mapping with ReportBatchItemFailures, running every message through a
// [lambdaidem.Guard] and reporting the ones SQS must deliver again.
//
// The two-minute version:
//
//	store, _ := dynamostore.New(dynamodb.NewFromConfig(cfg), "idempotency")
//	guard, _ := lambdaidem.New(store)
//	orders, err := sqsbatch.New(guard, "CreateOrder", func(o *sqsbatch.Options) {
//		o.Key = sqsbatch.KeyFromJSONField("order_id")
//	})
//	if err != nil {
//		log.Fatal(err)
//	}
//	lambda.Start(orders.Wrap(func(ctx context.Context, m events.SQSMessage) error {
//		// Staged writes commit in one transaction with the idempotency record.
//		return dynamostore.Stage(ctx, types.Put{TableName: aws.String("orders"), Item: item(m)})
//	}))
//
// The event source mapping must list ReportBatchItemFailures in its
// FunctionResponseTypes. Without it Lambda ignores the response, and a batch
// whose invocation succeeds is deleted whole, the failed messages with it.
//
// # What each message gets
//
//	first delivery, handler returns nil ------------> success (outcome committed)
//	completed duplicate (same key, same body) ------> success, handler not run
//	handler error or panic -------------------------> failure, claim released: redelivery runs it again
//	terminal error (lambdaidem.Terminal) -----------> failure, stored: redeliveries fail without running
//	same key, different body -----------------------> failure, never processed (logged with the key hash)
//	no key (KeyFunc error) -------------------------> failure, never processed
//	in progress in another invocation --------------> failure: redelivered after the visibility timeout
//	outcome unknown, lease lost, store failure -----> failure
//	FIFO: after a failure in the same group --------> failure, handler not run
//
// A message that keeps failing moves to the queue's dead-letter queue after
// maxReceiveCount receives; a poison message is therefore not retried
// forever, provided the queue has a redrive policy.
//
// # Keys and fingerprints
//
// [Options.Key] derives a message's idempotency key: [KeyFromJSONField],
// [KeyFromAttribute], [KeyFromDeduplicationID] or [KeyFromMessageID] (the
// default). The message id is stable across the redeliveries of one message
// but not across a producer's retry, so a key chosen by the producer
// protects more. The fingerprint covers the body (canonical JSON when it
// parses) and the attributes named in [Options.FingerprintAttributes].
//
// # Order and concurrency
//
// Messages of a standard queue run concurrently, at most
// [Options.Concurrency] at once. Messages of a FIFO queue (its event source
// ARN ends in ".fifo") run in order within their message group, groups
// concurrently; after the first failure in a group, the later messages of
// that group are reported failed without running, so the group's order
// holds on redelivery, while other groups go on. Within one batch, messages
// with the same key run one after the other: the second replays the first's
// outcome in the same invocation instead of being redelivered.
//
// # Leases
//
// Each message's claim holds a lease that ends at the invocation's deadline
// plus [lambdaidem.Options.LeaseMargin]. SQS redelivers a message only
// after its visibility timeout, which must be at least six times the
// function timeout (plus the batching window): by then the invocation that
// received it has ended and its lease has lapsed, so the redelivery can take
// the record over; and while an attempt may still run, its lease holds, so
// no redelivery takes over from it. A duplicate arriving in another
// invocation while the first runs is reported failed and comes back after
// the visibility timeout, when it replays the committed outcome. (With the
// Guard's InFlight set to Wait it waits instead, up to WaitTimeout, holding
// its place in the batch.)
//
// # The batch handler's error
//
// The handler returns per-message failures and a nil error, even when every
// message failed (the store was down). Lambda then deletes the messages not
// listed, makes exactly the listed ones visible again after their
// visibility timeout, and counts the invocation as a success. An error
// would redeliver the whole batch, successes included, count as a function
// error, and make Lambda reduce the mapping's concurrency. When every
// message failed, both redeliver the same messages; the difference is only
// in metrics and back-off, so alarm on this package's ERROR log lines
// (store failures) and on the dead-letter queue. The one exception is
// [ErrUnreportable], a failed message without a messageId, which cannot be
// named in the response.
package sqsbatch
