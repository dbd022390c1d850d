// Package chaos is a randomized fault-injection harness for lambdaidem
// stores: many workers, few keys, thousands of operations, faults drawn at
// random from a seed, and a check of the store's table after quiescence.
//
// # What runs
//
// Each worker stands for one Lambda instance: it has its own [lambdaidem.Guard]s
// (one per mode) and its own clock, skewed by up to Config.MaxSkew from a
// shared virtual clock. Each operation picks a key, runs [lambdaidem.Do] on
// it, and its handler writes one business item, "effect#<key>#<run>", where
// run is unique to the handler run. Two committed effects for one key are
// therefore two items: a duplicate is visible in the table itself.
//
// Keys come in three kinds, by index:
//
//   - k%3 == 0, claim-first: the effect is a staged business Put committed in
//     one transaction with the record.
//   - k%3 == 1, optimistic: the same, with no claim (one write per request).
//   - k%3 == 2, external: claim-first, and the effect is a call to a
//     downstream API outside the transaction, deduplicated by
//     [lambdaidem.Attempt.OperationKey] (as a payment provider does with its
//     own idempotency key); a failure after that call leaves the record
//     UNKNOWN and a reconcile function asks the downstream API.
//
// # Faults
//
// Each operation draws at most one fault from its own random source, which
// is derived from the run's seed and the operation's index:
//
//   - CrashAfterClaim: the instance dies at the start of the handler. Every
//     later store call of the attempt is dropped (as if the process had
//     exited), so the record stays INPROGRESS until its lease lapses.
//   - CrashBeforeCommit: the handler finishes, the instance dies before the
//     commit reaches the store.
//   - CrashAfterCommit: the commit is applied, the instance dies before it
//     sees the answer; the caller sees a failure.
//   - LostCommitResponse: the commit is applied and its response is lost;
//     the client sends it again (the SDK's retry). On DynamoDB this happens
//     in an http.RoundTripper under the SDK, so the SDK's own retry and the
//     transaction's ClientRequestToken are what is tested; on memstore the
//     wrapping store sends the commit twice.
//   - LostClaimResponse: the same for the claim.
//   - ThrottleBurst, ServerErrorBurst: the next 1 to 6 store calls, whoever
//     makes them, are refused with throttling or a 5xx, before the store
//     applies them. The SDK retries up to 3 times, so short bursts are
//     absorbed and long ones reach the caller as ErrStoreUnavailable.
//   - LeaseLapse: the handler stalls long enough for the virtual clock to
//     pass every lease issued so far (the shared clock jumps by the
//     operation timeout plus LeaseMargin plus twice MaxSkew), so other
//     workers take the record over while this attempt still runs.
//   - HandlerError: the handler fails after staging its write (a transient
//     error); the claim is released and the staged write discarded.
//   - FailAfterExternal (external keys): the downstream call is made, then
//     the handler fails; the record becomes UNKNOWN.
//   - HeldCommit: the commit stays in flight for 40 ms and two duplicates
//     arrive meanwhile, from other instances. On DynamoDB the test
//     endpoint holds the write itself, so the duplicates' claims meet
//     TransactionConflictException, as on DynamoDB (on memstore the commit
//     only waits).
//   - HeldClaim (not optimistic keys): the claim stays in flight for 40 ms;
//     on DynamoDB a commit of the same key that meets it is cancelled with
//     reason TransactionConflict.
//
// Crashes are simulated by a wrapping [lambdaidem.Store] that reads the
// operation's plan from the context the core passes to every store call
// (the core's finishing writes use context.WithoutCancel, which keeps
// values), so a "dead" attempt's release or mark-unknown never reaches the
// store, exactly as with a process that exited.
//
// # Checks
//
// After the workers stop, a drain phase moves the clock past every lease
// and retries every key until it succeeds (bounded), with no faults. Then
// the table is read back (a Scan through the SDK for DynamoDB) and the run
// fails if:
//
//   - a key has more than one business item (a duplicate effect), or an
//     external key was sent downstream under more than one operation key;
//   - a key has no effect after the drain, or an operation ended with an
//     error a caller could not retry (a lost operation);
//   - two successful responses for one key differ, or differ from the
//     committed effect;
//   - a record is left INPROGRESS or UNKNOWN after the drain (stuck);
//   - a request ended in an error that matches none of the conditions a
//     caller can act on (unclassified: an adapter's HTTP 500);
//   - the history of calls and returns is not linearizable against the
//     sequential model of the contract (see history.go), checked with
//     github.com/anishathalye/porcupine: per key the first commit wins,
//     every answer is that outcome or a refusal, and a refusal has no
//     effect. The control [NewUnfencedMemBackend], a store whose commit is
//     not fenced, must fail this check.
//
// The seed fixes which operation gets which fault, on which key, and each
// worker's skew; the interleaving of the workers is the scheduler's. Run
// with one worker to replay a plan in a fixed order.
package chaos
