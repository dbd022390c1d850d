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

// Claim makes c.Token the owner of the record c.Key with one conditional
// UpdateItem. The condition (claimCondition) admits an absent record and
// an in-progress one that lambdaidem.Judge says a claim takes over: its
// lease lapsed, its owner cannot be running any more (its hold ended) and
// it marked no external effect (MarkExternal); the attempt count goes up by
// one and the creation time is kept. The update asks for
// ReturnValuesOnConditionCheckFailure ALL_OLD; when the refusal carries no
// item, Claim reads the record with a strongly consistent GetItem.
//
// A record that has expired (lambdaidem.VerdictExpired: past its
// expiration and not held) but that DynamoDB has not deleted yet is absent
// by contract, and claiming it starts the operation afresh: one attempt,
// created now. An update expression cannot restart the counters only for
// an expired item, so the UpdateItem excludes expired records and a refusal
// by one is followed by a conditional PutItem that replaces it whole (the
// only case in which Claim makes two calls).
//
// Inside a Powertools window (Options.Powertools) the claim also keeps the
// event's Powertools key (see [Store.claimBeside]).
func (s *Store) Claim(ctx context.Context, c lambdaidem.Claim) (lambdaidem.Record, bool, error) {
	if ev, ok := s.powertoolsFor(ctx, c.Now); ok {
		return s.claimBeside(ctx, c, ev)
	}
	return s.claim(ctx, c)
}

// claim is Claim without a Powertools window.
func (s *Store) claim(ctx context.Context, c lambdaidem.Claim) (lambdaidem.Record, bool, error) {
	rec, ok, err := s.claimOrTakeOver(ctx, c)
	// Past its expiration but perhaps held: replaceCondition decides.
	if err != nil || ok || !rec.Exists() || rec.Live(c.Now) {
		return rec, ok, err
	}
	return s.claimExpired(ctx, c)
}

// claimOrTakeOver is the claim of an absent record, or the takeover of a
// live one whose lease lapsed. It is an UpdateItem rather than a PutItem
// because a takeover must keep created_at and increment attempts, which a
// PutItem (it replaces the item) could only do by reading the old item
// first; SET with if_not_exists does it in the same single conditional
// write.
func (s *Store) claimOrTakeOver(ctx context.Context, c lambdaidem.Claim) (lambdaidem.Record, bool, error) {
	in := s.claimInput(c)
	var out *dynamodb.UpdateItemOutput
	err := s.single(ctx, "claim", s.opts.ConflictRetries, func() (err error) {
		out, err = s.client.UpdateItem(ctx, in)
		return err
	})
	if err != nil {
		return s.refused(ctx, "claim", c.Key, err)
	}
	rec, err := s.codec.decode(out.Attributes)
	if err != nil {
		return lambdaidem.Record{}, false, wrapErr("claim", err)
	}
	return rec, true, nil
}

// claimInput is the UpdateItem of a claim or takeover (claimCondition,
// claimUpdate or, without a fingerprint, claimUpdateUnvalidated).
func (s *Store) claimInput(c lambdaidem.Claim) *dynamodb.UpdateItemInput {
	x := s.x.claim
	values := map[string]types.AttributeValue{
		":inProgress": str(string(lambdaidem.StatusInProgress)),
		":nowMs":      num(ceilMilli(c.Now)),
		":nowSec":     num(ceilSec(c.Now)),
		":sinceMs":    num(ceilMilli(c.Now.Add(-c.Window))),
		":token":      str(c.Token),
		":lease":      num(c.LeaseUntil.UnixMilli()),
		":expiration": num(c.ExpiresAt.Unix()),
		":renews":     &types.AttributeValueMemberBOOL{Value: c.Renews},
		":holdUntil":  num(holdOf(c).UnixMilli()),
		":createdAt":  num(c.Now.UnixMilli()),
		":zero":       num(0),
		":one":        num(1),
	}
	if c.Fingerprint != "" {
		values[":fingerprint"] = str(c.Fingerprint)
	} else {
		x = s.x.claimUnvalidated
	}
	return &dynamodb.UpdateItemInput{
		TableName:                           aws.String(s.table),
		Key:                                 s.codec.key(c.Key),
		UpdateExpression:                    aws.String(x.update),
		ConditionExpression:                 aws.String(x.cond),
		ExpressionAttributeNames:            x.names,
		ExpressionAttributeValues:           values,
		ReturnValues:                        types.ReturnValueAllNew,
		ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
	}
}

// claimExpired replaces an expired record with a fresh claim, with one
// conditional PutItem (replaceCondition).
func (s *Store) claimExpired(ctx context.Context, c lambdaidem.Claim) (lambdaidem.Record, bool, error) {
	return s.putRecord(ctx, "claim", s.opts.ConflictRetries, c.Key, s.claimExpiredInput(c))
}

// claimExpiredInput is the PutItem of claimExpired.
func (s *Store) claimExpiredInput(c lambdaidem.Claim) *dynamodb.PutItemInput {
	o := &s.opts
	item := s.codec.key(c.Key)
	item[o.StatusAttr] = str(string(lambdaidem.StatusInProgress))
	item[o.AttemptAttr] = str(c.Token)
	item[o.AttemptsAttr] = num(1)
	item[o.InProgressExpirationAttr] = num(c.LeaseUntil.UnixMilli())
	item[o.ExpirationAttr] = num(c.ExpiresAt.Unix())
	item[o.CreatedAtAttr] = num(c.Now.UnixMilli())
	item[o.RenewsAttr] = &types.AttributeValueMemberBOOL{Value: c.Renews}
	item[o.HoldUntilAttr] = num(holdOf(c).UnixMilli())
	if c.Fingerprint != "" {
		item[o.ValidationAttr] = str(c.Fingerprint)
	}
	return s.putInput(item, s.x.replace, claimableValues(c.Now, c.Window))
}

// claimableValues are the values of the claimable conditions
// (replaceCondition, optimisticCommitCondition) at now with the
// claimant's window.
func claimableValues(now time.Time, window time.Duration) map[string]types.AttributeValue {
	return map[string]types.AttributeValue{
		":inProgress": str(string(lambdaidem.StatusInProgress)),
		":completed":  str(string(lambdaidem.StatusCompleted)),
		":nowMs":      num(ceilMilli(now)),
		":nowSec":     num(ceilSec(now)),
		":sinceMs":    num(ceilMilli(now.Add(-window))),
	}
}

// refused turns the error of a conditional write into the Store result: a
// failed condition is (current record, false, nil), the record taken from
// the exception's ALL_OLD item or, when DynamoDB (or an emulator) sent
// none, from a strongly consistent GetItem. Any other error is returned.
func (s *Store) refused(ctx context.Context, op, key string, err error) (lambdaidem.Record, bool, error) {
	var ccf *types.ConditionalCheckFailedException
	if !errors.As(err, &ccf) {
		return lambdaidem.Record{}, false, wrapErr(op, err)
	}
	rec, err := s.current(ctx, op, key, ccf.Item)
	return rec, false, err
}

// current decodes the old item DynamoDB returned with a failed condition,
// or reads the record when there is none. An absent record is the zero
// Record.
func (s *Store) current(ctx context.Context, op, key string, old map[string]types.AttributeValue) (lambdaidem.Record, error) {
	if len(old) == 0 {
		return s.read(ctx, op, key)
	}
	rec, err := s.codec.decode(old)
	if err != nil {
		return lambdaidem.Record{}, wrapErr(op, err)
	}
	return rec, nil
}

// holdOf is the hold claim c writes: c.HoldUntil, never before its lease
// ends (lambdaidem.HoldUntil reads it so).
func holdOf(c lambdaidem.Claim) time.Time {
	if c.HoldUntil.Before(c.LeaseUntil) {
		return c.LeaseUntil
	}
	return c.HoldUntil
}
