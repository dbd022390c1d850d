// Package e2estack is the harness of the end-to-end suite (e2e/) and of the
// demo (dev/demo): it runs the example functions from outside, as AWS
// would.
//
// It is what is specific to this repository's end-to-end suite. Running a
// function under the AWS Lambda Runtime Interface Emulator (ports,
// Lambda's environment, typed timeouts, held commits, crashes, Lambda
// Managed Instances mode) is the published package
// github.com/lambdaidem/lambdaidem/ddbtest/rie, which users call for
// their own bootstraps; this package builds on it:
//
//   - [Build] compiles one of this repository's packages (an example, a
//     test function under dev/e2e) with rie.Build, in the nested module
//     that holds it: the functions under test are the release binaries;
//     faults are injected from outside (a rie.Hold on the DynamoDB
//     endpoint stalls a commit, the emulator's timeout or
//     rie.Function.KillRuntime ends the process);
//   - [StartDynamoDB] serves the in-process DynamoDB emulator (minidyn,
//     behind ddbtest's fidelity proxy) on a loopback port, with a
//     rie.Hold in front of it that can stall chosen requests;
//   - [StartSQS] serves goaws, an SQS-compatible endpoint speaking the query
//     protocol, and [NewSQSClient] builds an SDK client for it;
//   - [Poller] behaves like Lambda's SQS event source mapping;
//   - [NewStream] and [NewDynamoDBStream] stand in for a Kinesis data stream
//     and a DynamoDB stream (shards, sequence numbers, retention), and a
//     [StreamPoller] behaves like Lambda's event source mapping for them
//     (in order per shard, ReportBatchItemFailures, retries, bisection);
//   - [StartDynoxide] runs Dynoxide, the DynamoDB world with a Streams API
//     (the embedded endpoint has none), and [TailStream] reads a table's
//     real stream through it (DescribeStream, GetShardIterator,
//     GetRecords) into a [Stream], so the poller delivers the
//     implementation's own records (the relay and the DynamoDB Streams
//     source tests in e2e/streamsapi_test.go); [StartKinesalite] runs
//     kinesalite (npm, pinned in dev/emulators) and [TailKinesis] reads a
//     data stream through the Kinesis API the same way (the Kinesis source
//     test in e2e/kinesalite_test.go). Each emulator's departures from
//     AWS's documentation that the suite meets are named by a test.
//
// The LocalStack target reads its endpoints from the CDK stack outputs: see
// [Config] and [ReadOutputs].
//
// Every server listens on 127.0.0.1 only; every process and goroutine the
// harness starts is stopped by the Close or stop function it returns.
package e2estack
