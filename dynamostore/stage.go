package dynamostore

import (
	"context"
	"fmt"
	"maps"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/lambdaidem/lambdaidem/lambdaidem"
)

// Put stages a business Put to be written in the same TransactWriteItems
// as the idempotency record when the handler's outcome is committed: both
// are written, or neither. A condition on p that fails cancels the commit
// with a [*ConditionFailedError].
//
// Put fails with an error matching lambdaidem.ErrNoAttempt outside a
// wrapped invocation (the write would otherwise be lost), and with one
// matching [ErrInvalidEffect] when p has no table name or no item. The
// maps of p are copied: changing them after Put has no effect.
func Put(ctx context.Context, p types.Put) error {
	p.Item = maps.Clone(p.Item)
	p.ExpressionAttributeNames = maps.Clone(p.ExpressionAttributeNames)
	p.ExpressionAttributeValues = maps.Clone(p.ExpressionAttributeValues)
	return stage(ctx, types.TransactWriteItem{Put: &p})
}

// Update stages a business Update to be written in the same
// TransactWriteItems as the idempotency record; see [Put]. It needs a
// table name, a key and an update expression.
func Update(ctx context.Context, u types.Update) error {
	u.Key = maps.Clone(u.Key)
	u.ExpressionAttributeNames = maps.Clone(u.ExpressionAttributeNames)
	u.ExpressionAttributeValues = maps.Clone(u.ExpressionAttributeValues)
	return stage(ctx, types.TransactWriteItem{Update: &u})
}

// Delete stages a business Delete to be written in the same
// TransactWriteItems as the idempotency record; see [Put]. It needs a
// table name and a key.
func Delete(ctx context.Context, d types.Delete) error {
	d.Key = maps.Clone(d.Key)
	d.ExpressionAttributeNames = maps.Clone(d.ExpressionAttributeNames)
	d.ExpressionAttributeValues = maps.Clone(d.ExpressionAttributeValues)
	return stage(ctx, types.TransactWriteItem{Delete: &d})
}

// ConditionCheck stages a condition on an item that the commit's
// TransactWriteItems must meet, without writing the item; see [Put]. It
// needs a table name, a key and a condition expression.
func ConditionCheck(ctx context.Context, c types.ConditionCheck) error {
	c.Key = maps.Clone(c.Key)
	c.ExpressionAttributeNames = maps.Clone(c.ExpressionAttributeNames)
	c.ExpressionAttributeValues = maps.Clone(c.ExpressionAttributeValues)
	return stage(ctx, types.TransactWriteItem{ConditionCheck: &c})
}

func stage(ctx context.Context, item types.TransactWriteItem) error {
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
