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
//	if _, err := table.Bind(httpFn, 24*time.Hour); err != nil { ... }
//	// Its handler stages a Put and an Update on the payments table.
//	if _, err := lambdaidemcdk.GrantStagedWrites(httpFn, paymentsTable,
//		lambdaidemcdk.StagedPut, lambdaidemcdk.StagedUpdate); err != nil { ... }
//
//	// A queue consumer: the retry horizon (and so the TTL) follows from the
//	// queue's settings, and settings that would break the guarantee are refused.
//	src, err := lambdaidemcdk.NewQueueSource(stack, "Orders", lambdaidemcdk.QueueSourceProps{
//		Function: ordersFn,
//		Table:    table,
//	})
//
// Every constructor and binder checks its props before it creates anything and
// returns an error (never a panic from inside the CDK): a refused call leaves the
// scope unchanged.
//
// # The table
//
// [NewTable] creates the record table with the schema the DynamoDB store and
// Powertools for AWS Lambda use: partition key "id" (String), an optional String
// sort key, TTL on the Number attribute "expiration", on-demand billing,
// point-in-time recovery, AWS-owned encryption unless a customer-managed KMS key is
// given, deletion protection, and RemovalPolicy RETAIN: a deleted stack must not
// forget which operations already ran. [TableProps.V2] makes it an
// awsdynamodb.TableV2, to which Regions can be added later; [GlobalTableProps]
// says which global-table mode the store supports (multi-Region eventual
// consistency with every key homed in one Region) and why multi-Region strong
// consistency is refused.
//
// An existing table is adopted with [FromTableName], [FromTableArn] or
// [FromTable], naming its attributes ([Attributes]): a team moving from
// Powertools keeps its table.
//
// # The grants
//
// [Table.GrantStore] gives any IGrantable (a function, an alias, an ECS task
// role, a state machine) exactly the actions the store calls ([StoreActions]) on
// exactly the table's ARN, and returns the awsiam.Grant. [Table.Bind] does that
// for a function and also sets the environment the store needs to match the
// table ([Table.Environment]: IDEMPOTENCY_TABLE, IDEMPOTENCY_TTL,
// IDEMPOTENCY_KEY_ATTR, IDEMPOTENCY_EXPIRATION_ATTR, and for a sort key
// IDEMPOTENCY_SORT_KEY_ATTR and IDEMPOTENCY_SORT_KEY_VALUE); a function reads one
// idempotency table, so a second Bind is refused with [ErrAlreadyBound]. Bind
// takes any awslambda.IFunction: for an alias or a version it sets the
// environment of the function it runs; for an imported function it grants
// (when the import names the role) and returns an [*EnvironmentNotSetError]
// with the variables to set where the function is defined. A variable the
// function already sets to another value is refused with
// [ErrEnvironmentConflict], never overwritten.
//
// [BindSealing] gives a function exactly what kmsseal calls on the KMS key a
// Sealer uses (GenerateDataKey and Decrypt under the Sealer's encryption
// context, DescribeKey) and the variables kmsseal.ReadEnv reads to find it.
//
// A handler's staged business writes commit in the same TransactWriteItems as
// its record, and DynamoDB authorizes each item by its own action:
// [GrantStagedWrites] grants exactly the kinds the handler stages (Put →
// PutItem, Update → UpdateItem, Delete → DeleteItem, ConditionCheck →
// ConditionCheckItem). A kind left out fails the whole transaction with
// AccessDenied.
//
// # The SQS rules
//
// [NewQueueSource] wires a queue to a function with ReportBatchItemFailures and a
// dead-letter queue (maxReceiveCount 5 by default, AWS's guidance for Lambda),
// and enforces two rules at synthesis time by returning an error:
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
// Batch sizes, batching windows and FIFO combinations the event source would
// refuse are errors too.
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
