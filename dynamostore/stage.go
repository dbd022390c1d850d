package dynamostore

import (
	"context"
	"fmt"
	"maps"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/lambdaidem/lambdaidem/lambdaidem"
)

// Write is a business write that can join the commit's TransactWriteItems:
// a Put, an Update, a Delete, or a ConditionCheck (a condition on an item
// that the transaction must meet, writing nothing).
type Write interface {
	types.Put | types.Update | types.Delete | types.ConditionCheck
}

// Stage stages w to be written in the same TransactWriteItems as the
// idempotency record when the handler's outcome is committed: both are
// written, or neither. Nothing is sent now. A condition of w that fails
// cancels the commit with a [*ConditionFailedError] (which matches
// lambdaidem.ErrConditionFailed).
//
// Stage fails with an error matching lambdaidem.ErrNoAttempt outside a
// wrapped invocation (the write would otherwise be lost), and with one
// matching [ErrInvalidEffect] when w lacks what DynamoDB needs: a table
// name; a Put's item; the key of an Update, Delete or ConditionCheck; an
// Update's update expression; a ConditionCheck's condition expression. The
// maps of w are copied: changing them after Stage has no effect.
//
// memstore.Stage is the same verb for the in-memory store's writes.
func Stage[W Write](ctx context.Context, w W) error {
	var item types.TransactWriteItem
	switch w := any(w).(type) {
	case types.Put:
		cloneMaps(&w.Item, &w.ExpressionAttributeNames, &w.ExpressionAttributeValues)
		item.Put = &w
	case types.Update:
		cloneMaps(&w.Key, &w.ExpressionAttributeNames, &w.ExpressionAttributeValues)
		item.Update = &w
	case types.Delete:
		cloneMaps(&w.Key, &w.ExpressionAttributeNames, &w.ExpressionAttributeValues)
		item.Delete = &w
	case types.ConditionCheck:
		cloneMaps(&w.Key, &w.ExpressionAttributeNames, &w.ExpressionAttributeValues)
		item.ConditionCheck = &w
	}
	a, ok := lambdaidem.AttemptFrom(ctx)
	if !ok {
		return fmt.Errorf("dynamostore: stage %s: %w", actionName(item), lambdaidem.ErrNoAttempt)
	}
	if _, err := describe(item); err != nil {
		return fmt.Errorf("dynamostore: stage %s: %w", actionName(item), err)
	}
	if err := a.Stage(item); err != nil {
		return fmt.Errorf("dynamostore: stage %s: %w", actionName(item), err)
	}
	return nil
}

// cloneMaps replaces a staged write's maps with copies, so that the caller
// may reuse its own.
func cloneMaps(item *map[string]types.AttributeValue, names *map[string]string, values *map[string]types.AttributeValue) {
	*item = maps.Clone(*item)
	*names = maps.Clone(*names)
	*values = maps.Clone(*values)
}
