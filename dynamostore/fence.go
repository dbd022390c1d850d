package dynamostore

import (
	"context"
	"errors"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/lambdaidem/lambdaidem/lambdaidem"
)

// Release deletes the record with one conditional DeleteItem, fenced
// (fenceCondition): only while it is in progress or unknown and owned by
// f.Token. It returns false, and no error, when the condition fails.
//
// Inside a Powertools window the attempt's shadow goes too.
func (s *Store) Release(ctx context.Context, f lambdaidem.Fence) (bool, error) {
	ok, err := s.release(ctx, f)
	_ = s.followShadow(ctx, shadowReleased, f.Key, f.Token, ok, time.Time{}, time.Time{})
	return ok, err
}

// release is Release without a Powertools window.
func (s *Store) release(ctx context.Context, f lambdaidem.Fence) (bool, error) {
	in := s.releaseInput(f)
	err := s.single(ctx, "release", s.opts.ConflictRetries, func() error {
		_, err := s.client.DeleteItem(ctx, in)
		return err
	})
	return fenced("release", err)
}

// releaseInput is the DeleteItem of Release.
func (s *Store) releaseInput(f lambdaidem.Fence) *dynamodb.DeleteItemInput {
	return &dynamodb.DeleteItemInput{
		TableName:                 aws.String(s.table),
		Key:                       s.codec.key(f.Key),
		ConditionExpression:       aws.String(s.x.release.cond),
		ExpressionAttributeNames:  s.x.release.names,
		ExpressionAttributeValues: fenceValues(f.Token),
	}
}

// MarkExternal sets the record's external-effect mark, the first
// dispatch's time (f.Now) and the downstream's window (f.Window), and
// removes its expiration with one conditional UpdateItem
// (markExternalUpdate), fenced on f.Token while the
// record is in progress (runningCondition). It returns false, and no error,
// when the condition fails.
func (s *Store) MarkExternal(ctx context.Context, f lambdaidem.Fence) (bool, error) {
	in := s.markExternalInput(f)
	err := s.single(ctx, "mark external", s.opts.ConflictRetries, func() error {
		_, err := s.client.UpdateItem(ctx, in)
		return err
	})
	ok, err := fenced("mark external", err)
	ferr := s.followShadow(ctx, shadowHeld, f.Key, f.Token, ok, time.Time{}, shadowHeldUntil())
	if errors.Is(ferr, errShadowTaken) {
		return false, nil // a Powertools instance holds the key: BeginExternal is refused
	}
	if ferr != nil {
		// The external call must not start while Powertools could take the
		// key at the shadow's lease; the core gives the claim back.
		return ok, ferr
	}
	return ok, err
}

// MarkUnknown moves the record from in progress to unknown and removes
// its expiration (it is kept until resolved), with one conditional
// UpdateItem (markUnknownUpdate) fenced on f.Token while the record is in
// progress (runningCondition). It returns false, and no error, when the
// condition fails.
func (s *Store) MarkUnknown(ctx context.Context, f lambdaidem.Fence) (bool, error) {
	in := s.markUnknownInput(f)
	err := s.single(ctx, "mark unknown", s.opts.ConflictRetries, func() error {
		_, err := s.client.UpdateItem(ctx, in)
		return err
	})
	ok, err := fenced("mark unknown", err)
	// The external mark held the shadow already; this is a second try.
	_ = s.followShadow(ctx, shadowHeld, f.Key, f.Token, ok, time.Time{}, shadowHeldUntil())
	return ok, err
}

// markExternalInput is the UpdateItem of MarkExternal.
func (s *Store) markExternalInput(f lambdaidem.Fence) *dynamodb.UpdateItemInput {
	return s.markInput(f, s.x.markExternal, map[string]types.AttributeValue{
		":true":           &types.AttributeValueMemberBOOL{Value: true},
		":dispatchedAt":   num(f.Now.UnixMilli()),
		":dispatchWindow": num(f.Window.Milliseconds()),
	})
}

// markUnknownInput is the UpdateItem of MarkUnknown.
func (s *Store) markUnknownInput(f lambdaidem.Fence) *dynamodb.UpdateItemInput {
	return s.markInput(f, s.x.markUnknown, map[string]types.AttributeValue{
		":unknown": str(string(lambdaidem.StatusUnknown)),
	})
}

// markInput is the UpdateItem of a mark: x (runningCondition and the mark's
// update) with the fence's values and the update's own.
func (s *Store) markInput(f lambdaidem.Fence, x expression, values map[string]types.AttributeValue) *dynamodb.UpdateItemInput {
	values[":token"] = str(f.Token)
	values[":inProgress"] = str(string(lambdaidem.StatusInProgress))
	return &dynamodb.UpdateItemInput{
		TableName:                 aws.String(s.table),
		Key:                       s.codec.key(f.Key),
		UpdateExpression:          aws.String(x.update),
		ConditionExpression:       aws.String(x.cond),
		ExpressionAttributeNames:  x.names,
		ExpressionAttributeValues: values,
	}
}

// fenced is the result of a fenced write that returns no record.
func fenced(op string, err error) (bool, error) {
	var ccf *types.ConditionalCheckFailedException
	switch {
	case err == nil:
		return true, nil
	case errors.As(err, &ccf):
		return false, nil
	}
	return false, wrapErr(op, err)
}
