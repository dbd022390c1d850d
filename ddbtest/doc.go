// Package ddbtest is the DynamoDB test endpoint of this repository: the
// in-process minidyn emulator (github.com/truora/minidyn/server) served over
// loopback HTTP, behind a [Proxy] that makes it behave like DynamoDB where
// the emulator departs from it, counts calls, adds latency and injects
// faults. Tests, benchmarks and end-to-end suites reach it with the real
// AWS SDK through [NewClient].
//
// The two-minute version:
//
//	ep := ddbtest.Start(t)                  // emulator + proxy, or $AWS_ENDPOINT_URL_DYNAMODB
//	client := ep.Client()                   // *dynamodb.Client with explicit options
//	table := ddbtest.TableName(t, "idem")   // unique per test
//	p := ep.RequireProxy(t)                 // skips the test on an external endpoint
//	p.Inject(ddbtest.Rule{Op: "TransactWriteItems", Fault: ddbtest.LostResponse, Times: 1})
//	... run the code under test ...
//	t.Log(p.Calls())                        // calls by operation, SDK retries included
//
// # Testing a handler
//
// A test of a handler that stages DynamoDB writes needs the endpoint, a
// client, an idempotency table and a store; [NewKit] gives all four:
//
//	kit := ddbtest.NewKit(t)                    // closed when t ends
//	orders := kit.NewTable(t, "orders", "pk")   // the handler's own table
//	guard, _ := lambdaidem.New(kit.Store)
//
// [OpenKit] does the same outside a test (an Example, a local server).
//
// # Fidelity
//
// minidyn v0.8.2 departs from DynamoDB in ways that matter to an
// idempotency store. Unless told otherwise (see [Departures]) the proxy
// corrects each of them:
//
//   - ReturnValuesOnConditionCheckFailure=ALL_OLD: the emulator returns no
//     old item for a failed PutItem or DeleteItem, nor in the cancellation
//     reason of a transaction's Put or Delete. The proxy reads the item
//     before applying the request and attaches it, as DynamoDB does.
//
//   - ClientRequestToken: the emulator ignores it, so a TransactWriteItems
//     replayed after a lost response is cancelled instead of succeeding. The
//     proxy remembers successful tokens for 10 minutes and answers an
//     identical replay with success, and a different request with the same
//     token with IdempotentParameterMismatchException.
//
//   - PutItem returns the new item as Attributes; DynamoDB returns nothing
//     (or the old item for ReturnValues=ALL_OLD). The proxy fixes it.
//
//   - UpdateTimeToLive and DescribeTimeToLive are not implemented; the proxy
//     records the setting and answers them. (Expired items are never
//     deleted, by the emulator or the proxy: DynamoDB too deletes them late.)
//
//   - ReturnConsumedCapacity: the emulator returns no ConsumedCapacity. The
//     proxy computes capacity by DynamoDB's documented rules (item sizes,
//     1 KB write and 4 KB read units, the larger of the item before and
//     after, failed conditions, transactions at twice the rate, replays) and
//     answers TOTAL and INDEXES; [Proxy.Consumed] sums what every request
//     cost, also those that failed (see capacity.go and consumed.go).
//
//   - Transaction conflicts: the emulator serializes every request, so it
//     never reports one. The proxy models writes in flight as DynamoDB
//     documents them (Developer Guide, "Transaction conflict handling in
//     DynamoDB"): a single-item write on an item of an ongoing
//     TransactWriteItems gets HTTP 400 TransactionConflictException (which
//     the SDK's standard retryer does not retry), a transaction meeting
//     another write on one of its items is cancelled with reason
//     TransactionConflict, and a transaction resent with the
//     ClientRequestToken of one still running gets
//     TransactionInProgressException. A [Rule] with a Hold keeps a write in
//     flight for a set duration, or with an Until channel until the test
//     closes it; requests on other items are not blocked, and reads see the
//     last committed state.
//
//   - What DynamoDB refuses or answers otherwise where the library relies
//     on it (limits.go and the files beside it): items over 400 KB as
//     DynamoDB counts them (names included) in a Put, a BatchWriteItem, a
//     transaction or the result of an Update; transactions of more than 100
//     actions, over 4 MB or with two actions on one item; undefined or unused
//     placeholders; numbers beyond 38 digits or 1E-130..<1E+126, and numbers
//     returned normalized (00042 as 42); empty or duplicate sets, empty key
//     strings, NULL false; Scan and Query pages of at most 1 MB, with
//     ScannedCount, and Select COUNT; a reason, with its ALL_OLD item, for
//     every cancelled action; ListTables. A differential test replays the
//     request streams the suites send ([EnvRecord] records them) and one
//     case per rule to both worlds. Not corrected (TestKnownDepartures):
//     minidyn loses the type of an empty List or Map, and refuses a
//     condition comparing values of different types where DynamoDB fails
//     the comparison.
//
// The proxy serializes the execution of requests: the old-item read and
// the request it belongs to must not interleave with another write. A held
// write waits outside the serialization, in flight on its items.
//
// # Two worlds
//
// The proxy fronts either of two backends, and tests run on either:
// LAMBDAIDEM_WORLD=embedded (the default) is minidyn in process;
// LAMBDAIDEM_WORLD=dynoxide is a fresh Dynoxide process per endpoint
// (npm @dynoxide/linux-x64, an independent implementation over SQLite; the
// binary is $DYNOXIDE, else dynoxide on PATH; [LaunchDynoxide]), reached
// through [Forward]. [Start], [Open], [NewKit] and [OpenKit] read the
// variable, so a user's handler tests run on Dynoxide with
//
//	LAMBDAIDEM_WORLD=dynoxide DYNOXIDE=/path/to/dynoxide go test ./...
//
// Faults, call counts, latency, transaction conflicts and the proxy's
// token memory work alike in both worlds. Each correction is applied only
// where the backend departs ([Backend].Departs; TestBackendDepartures
// probes every one on both): minidyn needs all of them, those above and
// the limits and validations of [Departures] (the 400 KB item, 100 actions
// and 4 MB per transaction, placeholders, numbers, empty and invalid
// values, the 1 MB page, ScannedCount and COUNT, every cancellation
// reason, ListTables); Dynoxide needs the transaction conflicts (it
// executes one request at a time) and the capacity computation (it charges
// a GetItem with a projection for what it returns, not for the whole
// item). Not corrected in the embedded world, and pinned by
// TestKnownDepartures: an empty List or Map comes back as an untyped {},
// and a condition comparing values of different types is a
// ValidationException where DynamoDB evaluates the condition (the
// comparison is simply false); minidyn has no Streams API either.
//
// # External endpoints
//
// When AWS_ENDPOINT_URL_DYNAMODB is set, [Start] uses that endpoint
// (LocalStack, DynamoDB Local, real AWS) with no proxy in front: tests that
// need the proxy (faults, call counts, departures) call
// [Endpoint.RequireProxy], which skips them with a message saying why.
package ddbtest
