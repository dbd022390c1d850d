package dynamostore

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/lambdaidem/lambdaidem/lambdaidem"
)

// Contention on one record is normal, not an outage. DynamoDB refuses a
// single-item write (PutItem, UpdateItem, DeleteItem) on an item that a
// TransactWriteItems in flight is writing with HTTP 400
// TransactionConflictException, and cancels a transaction that meets
// another write on one of its items with the reason TransactionConflict
// (Developer Guide, "Transaction conflict handling in DynamoDB"). The
// SDK's standard retryer retries neither: its list has
// TransactionInProgressException, not TransactionConflictException. The
// store retries both here, with jittered exponential backoff, and reports
// a conflict that outlasts the retries as lambdaidem.ErrInProgress:
// another attempt is writing the record, try again later.

// conflicted reports whether err is DynamoDB refusing a single-item write
// because a transaction is writing the item.
func conflicted(err error) bool {
	var tce *types.TransactionConflictException
	return errors.As(err, &tce)
}

// conflicts retries what a transaction in flight refused, with the budget
// and backoff of the options: the Store and Records both write through it.
type conflicts struct{ opts *Options }

// single sends one single-item call (call), retrying it after a
// TransactionConflictException at most retries times; see
// [conflicts.retryConflicts].
func (c conflicts) single(ctx context.Context, op string, retries int, call func() error) error {
	return c.retryConflicts(ctx, op, retries, func() (bool, error) {
		err := call()
		return conflicted(err), err
	})
}

// commitRetries is the conflict budget of a commit: as long as ctx allows
// when it has a deadline (the core gives a commit its FinishTimeout, and a
// commit must not give up a claim it still holds because duplicates
// hammer the key), else Options.ConflictRetries.
func (s *Store) commitRetries(ctx context.Context) int {
	if _, ok := ctx.Deadline(); ok {
		return -1
	}
	return s.opts.ConflictRetries
}

// retryConflicts calls send until it reports something other than a
// conflict, waiting with jittered exponential backoff between tries, at
// most retries times (-1: until ctx's deadline). A conflict that outlasts
// them, or whose next retry the deadline would cut off, is an error
// matching lambdaidem.ErrInProgress.
func (c conflicts) retryConflicts(ctx context.Context, op string, retries int, send func() (conflict bool, err error)) error {
	for retry := 0; ; retry++ {
		conflict, err := send()
		if !conflict {
			if err != nil && retry > 0 && ctx.Err() != nil {
				// The deadline cut off a retry: the conflict is what stopped
				// us, not an outage.
				return fmt.Errorf("dynamostore: %s: %w: transaction conflict until the deadline (%v)", op, lambdaidem.ErrInProgress, ctx.Err())
			}
			return err
		}
		if (retries >= 0 && retry >= retries) || !c.sleep(ctx, retry) {
			return fmt.Errorf("dynamostore: %s: %w: transaction conflict after %d tries: %w", op, lambdaidem.ErrInProgress, retry+1, err)
		}
	}
}

// sleep waits before conflict retry number retry+1: exponential backoff
// with full jitter. It reports false, without waiting, when the context
// would end first.
func (c conflicts) sleep(ctx context.Context, retry int) bool {
	limit := c.opts.ConflictMaxBackoff
	if retry < 30 {
		limit = min(limit, c.opts.ConflictBackoff<<retry)
	}
	d := time.Duration(rand.Int64N(int64(limit) + 1))
	if deadline, ok := ctx.Deadline(); ok && time.Until(deadline) < d {
		return false
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}
