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

// Release deletes the record with one conditional DeleteItem, fenced: only
// while it is in progress or unknown and owned by f.Token. It returns
// false, and no error, when the condition fails.
func (s *Store) Release(ctx context.Context, f lambdaidem.Fence) (bool, error) {
	o := &s.opts
	var e expr
	cond := e.n(o.AttemptAttr) + " = " + e.v(str(f.Token)) + " AND " + e.n(o.StatusAttr) + " IN (" +
		e.v(str(string(lambdaidem.StatusInProgress))) + ", " + e.v(str(string(lambdaidem.StatusUnknown))) + ")"
	in := &dynamodb.DeleteItemInput{
		TableName:                 aws.String(s.table),
		Key:                       s.codec.key(f.Key),
		ConditionExpression:       aws.String(cond),
		ExpressionAttributeNames:  e.names,
		ExpressionAttributeValues: e.values,
	}
	err := s.single(ctx, "release", s.opts.ConflictRetries, func() error {
		_, err := s.client.DeleteItem(ctx, in)
		return err
	})
	return fenced("release", err)
}

// MarkExternal sets the record's external-effect mark with one
// conditional UpdateItem, fenced on f.Token while the record is in
// progress. It returns false, and no error, when the condition fails.
func (s *Store) MarkExternal(ctx context.Context, f lambdaidem.Fence) (bool, error) {
	o := &s.opts
	var e expr
	cond := e.n(o.AttemptAttr) + " = " + e.v(str(f.Token)) + " AND " +
		e.n(o.StatusAttr) + " = " + e.v(str(string(lambdaidem.StatusInProgress)))
	update := "SET " + e.n(o.ExternalAttr) + " = " + e.v(&types.AttributeValueMemberBOOL{Value: true})
	in := &dynamodb.UpdateItemInput{
		TableName:                 aws.String(s.table),
		Key:                       s.codec.key(f.Key),
		UpdateExpression:          aws.String(update),
		ConditionExpression:       aws.String(cond),
		ExpressionAttributeNames:  e.names,
		ExpressionAttributeValues: e.values,
	}
	err := s.single(ctx, "mark external", s.opts.ConflictRetries, func() error {
		_, err := s.client.UpdateItem(ctx, in)
		return err
	})
	return fenced("mark external", err)
}

// MarkUnknown moves the record from in progress to unknown and sets its
// expiration to expiresAt, with one conditional UpdateItem fenced on
// f.Token. It returns false, and no error, when the condition fails.
func (s *Store) MarkUnknown(ctx context.Context, f lambdaidem.Fence, expiresAt time.Time) (bool, error) {
	o := &s.opts
	var e expr
	cond := e.n(o.AttemptAttr) + " = " + e.v(str(f.Token)) + " AND " +
		e.n(o.StatusAttr) + " = " + e.v(str(string(lambdaidem.StatusInProgress)))
	update := "SET " + e.n(o.StatusAttr) + " = " + e.v(str(string(lambdaidem.StatusUnknown))) + ", " +
		e.n(o.ExpirationAttr) + " = " + e.v(num(expiresAt.Unix()))
	in := &dynamodb.UpdateItemInput{
		TableName:                 aws.String(s.table),
		Key:                       s.codec.key(f.Key),
		UpdateExpression:          aws.String(update),
		ConditionExpression:       aws.String(cond),
		ExpressionAttributeNames:  e.names,
		ExpressionAttributeValues: e.values,
	}
	err := s.single(ctx, "mark unknown", s.opts.ConflictRetries, func() error {
		_, err := s.client.UpdateItem(ctx, in)
		return err
	})
	return fenced("mark unknown", err)
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
