// Package e2e is the end-to-end suite: it drives the example functions
// (examples/api-gateway, examples/sqs, examples/stream) from outside, as AWS
// would, and checks what their clients get and what ends up in the tables.
// The stream scenarios (TestStreams) feed the ledger function through an
// in-process poller that behaves like Lambda's Kinesis and DynamoDB Streams
// event source mappings (embedded target only).
//
// The tests carry the build tag e2e, so `go test ./...` skips them. From
// this folder (its own Go module), or with make e2e:
//
//	go test -tags e2e -count=1 .                          # embedded stack (default)
//	E2E_TARGET=localstack go test -tags e2e -count=1 .    # the CDK app on LocalStack
//
// The embedded stack runs each example's Linux bootstrap under the AWS
// Lambda Runtime Interface Emulator (go install
// github.com/aws/aws-lambda-runtime-interface-emulator/cmd/aws-lambda-rie@v0.0.0-20261030222936-bef5c4ba774d),
// against the in-process DynamoDB emulator and an in-process SQS endpoint
// (goaws) polled like Lambda's event source mapping; see dev/e2estack.
// The LocalStack target reads the stack outputs `make localstack-deploy`
// wrote; see localstack/README.md.
package e2e
