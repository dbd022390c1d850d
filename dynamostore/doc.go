// Package dynamostore is the DynamoDB [lambdaidem.Store]: idempotency
// records in one table, with the handler's business writes committed in
// the same TransactWriteItems as the record.
//
// The two-minute version:
//
//	store, err := dynamostore.New(dynamodb.NewFromConfig(cfg), "idempotency")
//	guard, err := lambdaidem.New(store)
//	orders, err := lambdaidem.NewWrapper(guard, spec)
//	handler := orders.Wrap(func(ctx context.Context, o Order) (Receipt, error) {
//		// Written if, and only if, the outcome is committed.
//		err := dynamostore.Stage(ctx, types.Put{TableName: aws.String("orders"), Item: item(o),
//			ConditionExpression: aws.String("attribute_not_exists(pk)")})
//		return Receipt{OrderID: o.ID}, err
//	})
//
// # Calls
//
// Each Store method is one conditional write (the GetItem fallback aside):
//
//	Claim        UpdateItem   absent, or in progress with a lapsed lease (takeover)
//	             (+ PutItem   only to replace an expired record DynamoDB has not deleted yet)
//	Commit       PutItem      no staged writes; fenced on the attempt token
//	             TransactWriteItems   record Put first, then every staged write
//	Renew        UpdateItem   fenced on the token, in progress, lease not yet ended
//	Release      DeleteItem   fenced on the token, in progress or unknown
//	MarkUnknown  UpdateItem   fenced on the token, in progress
//	Get          GetItem      strongly consistent; an expired record is absent
//
// A refused claim or commit returns the record in the way, taken from the
// ALL_OLD item DynamoDB returns with the failed condition, or, when the
// endpoint returns none, from a strongly consistent GetItem. On the
// idempotency table the store needs exactly dynamodb:GetItem, PutItem,
// UpdateItem and DeleteItem; TransactWriteItems needs those same actions on
// every table it writes.
//
// # The record item
//
// With the default [Options] the item has the attribute names and types of
// the DynamoDB persistence layer of Powertools for AWS Lambda, so a table
// created for Powertools can be reused; each name is an [Options] field:
//
//	id                      S  "<namespace>#<hash>" (+ an optional static sort key)
//	status                  S  INPROGRESS | COMPLETED | UNKNOWN
//	expiration              N  Unix seconds: the TTL attribute
//	in_progress_expiration  N  Unix milliseconds: the lease
//	validation              S  the request fingerprint
//	data                    S  the outcome (JSON); B when stored gzip-compressed or sealed
//	attempt                 S  the owner's attempt token (fencing)
//	attempts                N  claims seen
//	created_at, completed_at N Unix milliseconds
//	external                BOOL an external effect began: never taken over
//	renewed_at              N  Unix milliseconds: the owner's last lease renewal
//
// # Errors
//
// Throttling, 5xx, timeouts and connection failures that outlast the SDK's
// retries match lambdaidem.ErrStoreUnavailable. A commit transaction
// cancelled for want of capacity (reason ThrottlingError or
// ProvisionedThroughputExceeded), which the SDK does not retry, is sent
// again as often as the SDK would retry a throttled write first. Staged writes that
// DynamoDB would refuse are caught before sending and match
// lambdaidem.ErrEffectRejected and [ErrInvalidEffect]; a business condition
// that fails is a [*ConditionFailedError], which matches
// lambdaidem.ErrEffectRejected.
//
// # Contention
//
// DynamoDB refuses a single-item write on an item that a transaction in
// flight is writing with TransactionConflictException (HTTP 400, which the
// SDK does not retry), and cancels a transaction that meets another write
// with the reason TransactionConflict. Every call of the store retries
// both with jittered exponential backoff: a claim, a read and a fenced
// write (release, mark, renew) at most Options.ConflictRetries times and never
// past the context's deadline, then fail with an error matching
// lambdaidem.ErrInProgress (a duplicate is "in progress", never a store
// failure); a commit for as long as its context allows, with the same
// ClientRequestToken, so that duplicates hammering a key cannot make the
// owner give up a claim it holds.
//
// # Operators
//
// [Records] is an operator's view of the same table, with the same record
// format: it reads, lists (parallel scan) and settles or deletes records,
// each write fenced on the record as read ([UnchangedCondition]). The
// lambdaidem command (cmd/lambdaidem) is built on it.
package dynamostore
