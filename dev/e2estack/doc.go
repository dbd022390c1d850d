// Package e2estack is the harness of the end-to-end suite (e2e/) and of the
// demo (dev/demo): it runs the example functions from outside, as AWS
// would.
//
// The embedded stack needs only Go and, on Linux, the AWS Lambda Runtime
// Interface Emulator:
//
//   - [Build] compiles an example's bootstrap the way `make build` does:
//     the functions under test are the release binaries; faults are injected
//     from outside (a [Hold] on the DynamoDB endpoint stalls a commit, the
//     emulator's timeout or [Function.KillRuntime] ends the process);
//   - [StartFunction] runs it under the Runtime Interface Emulator
//     (aws-lambda-rie), which enforces the function timeout for real; one
//     instance runs one invocation at a time (use a [Pool] of instances, as
//     Lambda scales out), or several at once in Lambda Managed Instances mode
//     (FunctionOptions.MaxConcurrency > 1);
//   - [StartDynamoDB] serves the in-process DynamoDB emulator (minidyn,
//     behind ddbtest's fidelity proxy) on a loopback port, with a
//     [Hold] in front of it that can stall chosen requests;
//   - [StartSQS] serves goaws, an SQS-compatible endpoint speaking the query
//     protocol, and [NewSQSClient] builds an SDK client for it;
//   - [Poller] behaves like Lambda's SQS event source mapping;
//   - [NewStream] and [NewDynamoDBStream] stand in for a Kinesis data stream
//     and a DynamoDB stream (shards, sequence numbers, retention), and a
//     [StreamPoller] behaves like Lambda's event source mapping for them
//     (in order per shard, ReportBatchItemFailures, retries, bisection).
//
// The LocalStack target reads its endpoints from the CDK stack outputs: see
// [Config] and [ReadOutputs].
//
// Every server listens on 127.0.0.1 only; every process and goroutine the
// harness starts is stopped by the Close or stop function it returns.
package e2estack
