package dynamostore

import (
	"context"
	"errors"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go"

	"github.com/lambdaidem/lambdaidem/lambdaidem"
)

// recordRefused reports that the record's own condition (transaction item
// 0) failed; old is the item DynamoDB returned with the failure, if any.
type recordRefused struct {
	old map[string]types.AttributeValue
}

func (recordRefused) Error() string { return "dynamostore: record condition failed" }

// transact sends the commit transaction in, retrying it after a
// TransactionConflict (see [Store.retryConflicts]). It reads the
// cancellation reasons by index: item 0 is the record, item i > 0 is the
// effect actions[i-1].
//
// Every resend after a definite answer that nothing was applied (a
// TransactionCanceledException) carries a new ClientRequestToken
// (renew(n) sets the n-th): what DynamoDB answers a token it cancelled is
// undocumented, and one that remembered the cancellation would replay it
// to every resend. The same token is kept only across the SDK's own
// retries and a TransactionInProgressException, whose outcome is unknown.
// IdempotentParameterMismatchException (the token of an earlier request
// with other parameters) is an unknown outcome too: the transaction is
// sent again under a new token, and its condition (the fence, or the
// claim's) refuses it if the earlier one applied, so that the commit reads
// the record and recognizes its own success.
//
// A transaction cancelled because DynamoDB lacked the capacity for it
// (reason ThrottlingError or ProvisionedThroughputExceeded: "please try
// again shortly") is sent again too, at most throttleRetries times: the
// SDK retries the throttling of a single-item write but not a cancelled
// transaction. One that outlasts them is lambdaidem.ErrStoreUnavailable.
func (s *Store) transact(ctx context.Context, in *dynamodb.TransactWriteItemsInput, actions []action, renew func(n int)) error {
	throttled, sent := 0, 0
	return s.retryConflicts(ctx, "commit", s.commitRetries(ctx), func() (bool, error) {
		for {
			_, err := s.client.TransactWriteItems(ctx, in)
			if err == nil {
				return false, nil
			}
			if nothingApplied(err) {
				sent++
				renew(sent)
			}
			conflict, err := s.cancelled(err, actions)
			var busy throttledError
			if !errors.As(err, &busy) || throttled >= throttleRetries || !s.sleep(ctx, throttled) {
				return conflict, err
			}
			throttled++
		}
	})
}

// nothingApplied reports whether err says, definitely, that this request
// applied nothing and that its token must not be sent again: a cancelled
// transaction, or a token DynamoDB holds for other parameters.
func nothingApplied(err error) bool {
	var tce *types.TransactionCanceledException
	var ipm *types.IdempotentParameterMismatchException
	return errors.As(err, &tce) || errors.As(err, &ipm)
}

// throttleRetries is how often a commit sends again a transaction
// cancelled for want of capacity: as often as the SDK's standard retryer
// retries a throttled DynamoDB call (4 attempts in all).
const throttleRetries = 3

// throttledError is a transaction cancelled for want of capacity; it
// matches lambdaidem.ErrStoreUnavailable.
type throttledError struct{ error }

func (e throttledError) Unwrap() error { return e.error }

// cancelled classifies the error of a commit transaction. It reports a
// conflict worth retrying, or the error the commit ends with.
func (s *Store) cancelled(err error, actions []action) (conflict bool, _ error) {
	var tce *types.TransactionCanceledException
	if !errors.As(err, &tce) {
		var api smithy.APIError
		if errors.As(err, &api) {
			switch api.ErrorCode() {
			case "TransactionInProgressException":
				// The SDK retried a transaction DynamoDB is still running.
				return true, err
			case "IdempotentParameterMismatchException":
				// An earlier request under this token, with other parameters
				// (a serializer that orders a map differently), may have
				// applied: unknown. Sent again under a new token, its condition
				// tells.
				return true, err
			case "ValidationException":
				// The record write is well formed; what DynamoDB refused is the
				// staged writes (two writes on one item, a bad expression).
				return false, fmt.Errorf("dynamostore: commit: %w: %w", lambdaidem.ErrEffectRejected, err)
			}
		}
		return false, wrapErr("commit", err)
	}
	reasons := tce.CancellationReasons
	if len(reasons) > 0 && aws.ToString(reasons[0].Code) == "ConditionalCheckFailed" {
		return false, recordRefused{old: reasons[0].Item}
	}
	var busy bool
	for i, r := range reasons {
		code := aws.ToString(r.Code)
		switch code {
		case "", "None":
			continue
		case "TransactionConflict":
			conflict = true
			continue
		case "ThrottlingError", "ProvisionedThroughputExceeded", "ThrottlingException", "ProvisionedThroughputExceededException":
			busy = true
			continue
		}
		if i == 0 || i > len(actions) {
			return false, wrapErr("commit", err)
		}
		a := actions[i-1]
		if code == "ConditionalCheckFailed" && a.outbox {
			// Not the caller's business condition: an earlier operation
			// under this record key still has messages the relay has not
			// published (it is behind, or stopped). A retry later commits.
			return false, fmt.Errorf("dynamostore: commit: %w: %w", lambdaidem.ErrInProgress, ErrOutboxPending)
		}
		if code == "ConditionalCheckFailed" {
			return false, &ConditionFailedError{Index: a.effect, Action: a.name, Table: a.table, Key: a.key, Item: r.Item, Message: aws.ToString(r.Message)}
		}
		return false, fmt.Errorf("dynamostore: commit: %w: staged %s %d on table %s: %s: %s",
			lambdaidem.ErrEffectRejected, a.name, a.effect, a.table, code, aws.ToString(r.Message))
	}
	switch {
	case busy:
		return false, throttledError{fmt.Errorf("dynamostore: commit: %w: %w", lambdaidem.ErrStoreUnavailable, err)}
	case conflict:
		return true, err
	}
	return false, wrapErr("commit", err)
}
