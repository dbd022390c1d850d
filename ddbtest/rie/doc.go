// Package rie runs your own Lambda function — the `bootstrap` you deploy —
// under the AWS Lambda Runtime Interface Emulator (aws-lambda-rie), from a
// Go test, against a DynamoDB endpoint such as a ddbtest kit's:
//
//	func TestOrders(t *testing.T) {
//		kit := ddbtest.NewKit(t)
//		boot := rie.BuildBootstrap(t, ".", "./cmd/orders") // as deployed
//		fn := rie.Run(t, rie.Options{ // skips when aws-lambda-rie is absent
//			Bootstrap:        boot,
//			Timeout:          3 * time.Second,
//			DynamoDBEndpoint: kit.Endpoint.URL,
//			Env:              map[string]string{"IDEMPOTENCY_TABLE": kit.Table},
//		})
//		var r Receipt
//		err := rie.InvokeJSON(t.Context(), fn, Order{ID: "o-1"}, &r)
//		...
//	}
//
// Install the emulator with `go install` of [Module] (or point
// $AWS_LAMBDA_RIE at it). It runs on Linux.
//
// What the package takes care of, each a pitfall of running the emulator
// by hand:
//
//   - Ports. Every emulator claims 127.0.0.1:9001 for the Runtime API its
//     bootstrap polls, besides its invoke address (default :8080): a second
//     instance fails to start. [Start] gives each instance two free loopback
//     ports (--runtime-interface-emulator-address, --runtime-api-address),
//     so [StartPool] runs N instances side by side, as Lambda scales out.
//   - The environment. The emulator does not set
//     AWS_LAMBDA_INITIALIZATION_TYPE, which Lambda sets ("on-demand" on
//     standard Lambda). Without it lambdaidem cannot tell Lambda, which
//     stops a handler at its deadline, from a container, which does not: it
//     renews the lease and a timed-out attempt's record stays in progress
//     for MaxRunTime (30 minutes by default), so every retry is refused as
//     in progress. [Environment] sets it with the rest of what Lambda sets
//     (region, memory size, log group, test credentials, and
//     AWS_ENDPOINT_URL_DYNAMODB from Options.DynamoDBEndpoint), and passes
//     nothing else from the machine running the tests.
//   - Timeouts. The classic emulator answers a timeout with HTTP 200 and a
//     plain-text body ("Task timed out after 1.00 seconds"), not an error
//     document. [Invocation].Err and [InvokeJSON] return it as a
//     [*FunctionError] of type Sandbox.Timedout, as Lambda reports it:
//     errors.Is(err, [ErrTimeout]).
//   - A timeout after the commit. Two cases to test, both by holding the
//     function's commit (TransactWriteItems) until its timeout has passed:
//     a commit that never lands ([Hold], served in front of any endpoint
//     by [HoldEndpoint]: the held request fails once its client is gone),
//     after which a retry takes the record over at the deadline plus
//     LeaseMargin; and a commit that lands late (a ddbtest.Rule with Until
//     on the kit's proxy: the write is applied after it is released),
//     after which a retry replays the committed result.
//   - Crashes. [Function.KillRuntime] kills the bootstrap as an
//     out-of-memory kill would; the emulator reports Runtime.ExitError.
//   - Lambda Managed Instances. Options.MaxConcurrency > 1 runs the
//     emulator in that mode, which reports timeouts but does not enforce
//     them, and looks for its bootstrap only in /var/task and /opt: as
//     root, [Start] runs it in a private mount namespace (unshare -m) with
//     the bootstrap bound on /var/task, so several run side by side
//     ([ManagedInstancesSupported] says whether this machine can).
//
// The emulator runs as a process: it is no dependency of any module.
package rie
