// Package lambdaidemcdk defines the AWS infrastructure that lambdaidem needs, as
// CDK constructs for your own Go CDK app.
//
// It is a separate Go module (github.com/lambdaidem/lambdaidem/cdk) so that users
// of the library itself never download the CDK.
//
// # The two-minute version
//
//	table, err := lambdaidemcdk.NewTable(stack, "Idempotency", nil)
//	if err != nil { ... }
//	// An HTTP function: completed keys are remembered for 24 hours.
//	if err := table.GrantTo(httpFn, 24*time.Hour); err != nil { ... }
//
//	// A queue consumer: the retry horizon (and so the TTL) follows from the
//	// queue's settings, and settings that would break the guarantee are refused.
//	src, err := lambdaidemcdk.NewQueueSource(stack, "Orders", lambdaidemcdk.QueueSourceProps{
//		Function: ordersFn,
//		Table:    table,
//	})
//
// # The table
//
// [NewTable] creates the record table with the schema the DynamoDB store and
// Powertools for AWS Lambda use: partition key "id" (String), an optional String
// sort key, TTL on the Number attribute "expiration", on-demand billing,
// point-in-time recovery, AWS-owned encryption unless a customer-managed KMS key is
// given, and RemovalPolicy RETAIN: a deleted stack must not forget which
// operations already ran.
//
// # The grant
//
// [Table.GrantTo] gives one function exactly the actions the store calls
// (dynamodb:GetItem, dynamodb:PutItem, dynamodb:UpdateItem, dynamodb:DeleteItem) on
// exactly the table's ARN, and sets the environment the examples read:
// IDEMPOTENCY_TABLE (the table name) and IDEMPOTENCY_TTL (the retry horizon as a Go
// duration string, such as "24h0m0s").
//
// # The SQS rules
//
// [NewQueueSource] wires a queue to a function with ReportBatchItemFailures and a
// dead-letter queue, and enforces two rules at synthesis time by returning an
// error:
//
//  1. The queue's visibility timeout is at least six times the function timeout
//     plus the event source's maximum batching window (the AWS guidance for Lambda
//     event source mappings). A shorter one lets SQS hand a message to a second
//     poller while the first invocation still runs it.
//  2. The idempotency TTL is at least the queue's retry horizon, the larger of the
//     retention period and maxReceiveCount × visibility timeout: any redelivery of
//     a message happens within that time of its first delivery, so a record that
//     lives that long still catches it.
//
// # The stream rules
//
// [NewStreamSource] feeds a Kinesis data stream or a DynamoDB stream to a function
// with ReportBatchItemFailures, BisectBatchOnFunctionError, bounded retry attempts
// (default 10, so a poison record does not block its shard for the whole
// retention), the maximum record age if set, and an on-failure destination (a
// 14-day SQS queue unless one is given). It refuses a TTL shorter than the
// stream's horizon, [StreamHorizon]: the stream's retention (Kinesis 24 hours to
// 365 days, DynamoDB Streams 24 hours), or the maximum record age if shorter.
package lambdaidemcdk
