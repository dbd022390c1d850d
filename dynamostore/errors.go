package dynamostore

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go"

	"github.com/lambdaidem/lambdaidem/lambdaidem"
)

// Conditions a caller tests with [errors.Is].
var (
	// ErrMalformedRecord: an item in the table is not a record this store
	// can read (a required attribute is missing or has the wrong type).
	ErrMalformedRecord = errors.New("dynamostore: malformed record")
	// ErrInvalidEffect: a staged write is not one DynamoDB would accept in a
	// transaction with the record. At commit it also matches
	// lambdaidem.ErrEffectRejected; nothing was sent.
	ErrInvalidEffect = errors.New("dynamostore: invalid effect")
	// ErrOutboxPending: a commit staged outbox messages, but an earlier
	// operation under the same record key (one whose record expired) still
	// has an unpublished outbox item: the relay is behind or stopped.
	// Nothing was written; it matches lambdaidem.ErrInProgress (a retry
	// later commits), never a business condition. A message the relay
	// cannot publish is set aside and does not block the key.
	ErrOutboxPending = errors.New("dynamostore: an earlier operation's outbox messages under this record key are not published yet")
)

// ConditionFailedError reports that the condition of a staged business
// write failed, so DynamoDB cancelled the whole transaction: neither the
// record nor any staged write was written. It matches
// lambdaidem.ErrConditionFailed (and so lambdaidem.ErrEffectRejected).
type ConditionFailedError struct {
	// Index is the write's position among the staged effects, from 0 in the
	// order they were staged (the transaction item at Index+1).
	Index int
	// Action is "Put", "Update", "Delete" or "ConditionCheck".
	Action string
	// Table is the write's table.
	Table string
	// Key names the failing item: the write's Key, or for a Put its whole
	// Item (the store does not know a business table's key schema).
	Key map[string]types.AttributeValue
	// Item is the item as it was, when the write asked for it with
	// ReturnValuesOnConditionCheckFailure ALL_OLD and DynamoDB returned it.
	Item map[string]types.AttributeValue
	// Message is DynamoDB's message for the cancellation reason.
	Message string
}

// Error names the failing write and its item: the key's values for an
// Update, Delete or ConditionCheck; for a Put, whose Key is its whole item
// (customer data, amounts), only the attribute names, so that logging the
// error leaks no business data. The values stay in Key.
func (e *ConditionFailedError) Error() string {
	item := describeKey(e.Key)
	if e.Action == "Put" {
		item = "item with attributes {" + strings.Join(sortedNames(e.Key), ", ") + "}"
	}
	return fmt.Sprintf("dynamostore: condition of staged %s %d on table %s failed: %s",
		e.Action, e.Index, e.Table, item)
}

// Unwrap makes the error match lambdaidem.ErrConditionFailed and
// lambdaidem.ErrEffectRejected.
func (e *ConditionFailedError) Unwrap() error { return lambdaidem.ErrConditionFailed }

// describeKey renders the string and number attributes of a key, in a
// stable order, for error messages.
func describeKey(key map[string]types.AttributeValue) string {
	parts := make([]string, 0, len(key))
	for _, name := range sortedNames(key) {
		switch v := key[name].(type) {
		case *types.AttributeValueMemberS:
			parts = append(parts, fmt.Sprintf("%s=%q", name, v.Value))
		case *types.AttributeValueMemberN:
			parts = append(parts, fmt.Sprintf("%s=%s", name, v.Value))
		default:
			parts = append(parts, name+"=…")
		}
	}
	return "{" + strings.Join(parts, ", ") + "}"
}

// unavailableCode reports whether a DynamoDB error code means the service
// refused or failed the call, not that the call was wrong.
func unavailableCode(code string) bool {
	switch code {
	case "ProvisionedThroughputExceededException", "ThrottlingException", "Throttling",
		"RequestLimitExceeded", "InternalServerError", "InternalFailure",
		"ServiceUnavailable", "ServiceUnavailableException":
		return true
	}
	return false
}

// wrapErr turns an SDK error into the store's error for op: it matches
// lambdaidem.ErrStoreUnavailable when the store could not be reached or
// refused service (throttling after the SDK's retries, 5xx, timeouts,
// connection failures), and keeps the SDK error for errors.As.
func wrapErr(op string, err error) error {
	if errors.Is(err, lambdaidem.ErrInProgress) {
		return err // a conflict that outlasted the retries, already said
	}
	if unavailable(err) {
		return fmt.Errorf("dynamostore: %s: %w: %w", op, lambdaidem.ErrStoreUnavailable, err)
	}
	return fmt.Errorf("dynamostore: %s: %w", op, err)
}

func unavailable(err error) bool {
	var api smithy.APIError
	if errors.As(err, &api) && unavailableCode(api.ErrorCode()) {
		return true
	}
	var status interface{ HTTPStatusCode() int }
	if errors.As(err, &status) && status.HTTPStatusCode() >= 500 {
		return true
	}
	var conn interface{ ConnectionError() bool }
	if errors.As(err, &conn) && conn.ConnectionError() {
		return true
	}
	var nerr net.Error
	if errors.As(err, &nerr) {
		return true
	}
	return errors.Is(err, context.DeadlineExceeded)
}
