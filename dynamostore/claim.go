package dynamostore

import (
	"context"
	"errors"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/lambdaidem/lambdaidem/lambdaidem"
)

// Claim makes c.Token the owner of the record c.Key with one conditional
// UpdateItem. The condition admits an absent record and an in-progress one
// whose lease ended before c.Now (a takeover: the attempt count goes up by
// one and the creation time is kept), unless its owner marked an external
// effect (MarkExternal). The update asks for
// ReturnValuesOnConditionCheckFailure ALL_OLD; when the refusal carries no
// item, Claim reads the record with a strongly consistent GetItem.
//
// A record that has expired but that DynamoDB has not deleted yet is absent
// by contract, and claiming it starts the operation afresh: one attempt,
// created now. An update expression cannot restart the counters only for
// an expired item, so the UpdateItem excludes expired records and a refusal
// by one is followed by a conditional PutItem that replaces it whole (the
// only case in which Claim makes two calls).
func (s *Store) Claim(ctx context.Context, c lambdaidem.Claim) (lambdaidem.Record, bool, error) {
	rec, ok, err := s.claimOrTakeOver(ctx, c)
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
	o := &s.opts
	var e expr
	inProgress := e.v(str(string(lambdaidem.StatusInProgress)))
	cond := "attribute_not_exists(" + e.n(o.KeyAttr) + ") OR (" +
		e.n(o.StatusAttr) + " = " + inProgress + " AND " +
		e.n(o.InProgressExpirationAttr) + " < " + e.v(num(ceilMilli(c.Now))) + " AND " +
		e.n(o.ExpirationAttr) + " >= " + e.v(num(ceilSec(c.Now))) + " AND " +
		"attribute_not_exists(" + e.n(o.ExternalAttr) + "))"
	set := []string{
		e.n(o.StatusAttr) + " = " + inProgress,
		e.n(o.AttemptAttr) + " = " + e.v(str(c.Token)),
		e.n(o.InProgressExpirationAttr) + " = " + e.v(num(c.LeaseUntil.UnixMilli())),
		e.n(o.ExpirationAttr) + " = " + e.v(num(c.ExpiresAt.Unix())),
		e.n(o.CreatedAtAttr) + " = if_not_exists(" + e.n(o.CreatedAtAttr) + ", " + e.v(num(c.Now.UnixMilli())) + ")",
		e.n(o.AttemptsAttr) + " = if_not_exists(" + e.n(o.AttemptsAttr) + ", " + e.v(num(0)) + ") + " + e.v(num(1)),
	}
	remove := []string{e.n(o.DataAttr), e.n(o.CompletedAtAttr)}
	if c.Fingerprint != "" {
		set = append(set, e.n(o.ValidationAttr)+" = "+e.v(str(c.Fingerprint)))
	} else {
		remove = append(remove, e.n(o.ValidationAttr))
	}
	in := &dynamodb.UpdateItemInput{
		TableName:                           aws.String(s.table),
		Key:                                 s.codec.key(c.Key),
		UpdateExpression:                    aws.String("SET " + strings.Join(set, ", ") + " REMOVE " + strings.Join(remove, ", ")),
		ConditionExpression:                 aws.String(cond),
		ExpressionAttributeNames:            e.names,
		ExpressionAttributeValues:           e.values,
		ReturnValues:                        types.ReturnValueAllNew,
		ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
	}
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

// claimExpired replaces an expired record with a fresh claim, with one
// conditional PutItem.
func (s *Store) claimExpired(ctx context.Context, c lambdaidem.Claim) (lambdaidem.Record, bool, error) {
	o := &s.opts
	item := s.codec.key(c.Key)
	item[o.StatusAttr] = str(string(lambdaidem.StatusInProgress))
	item[o.AttemptAttr] = str(c.Token)
	item[o.AttemptsAttr] = num(1)
	item[o.InProgressExpirationAttr] = num(c.LeaseUntil.UnixMilli())
	item[o.ExpirationAttr] = num(c.ExpiresAt.Unix())
	item[o.CreatedAtAttr] = num(c.Now.UnixMilli())
	if c.Fingerprint != "" {
		item[o.ValidationAttr] = str(c.Fingerprint)
	}
	var e expr
	cond := "attribute_not_exists(" + e.n(o.KeyAttr) + ") OR " + e.n(o.ExpirationAttr) + " < " + e.v(num(ceilSec(c.Now)))
	return s.putRecord(ctx, "claim", s.opts.ConflictRetries, c.Key, item, cond, &e)
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
