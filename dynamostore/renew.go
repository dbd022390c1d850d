package dynamostore

import (
	"context"
	"errors"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/lambdaidem/lambdaidem/lambdaidem"
)

// Renew extends the lease of a running attempt with one conditional
// UpdateItem (renewCondition, renewUpdate). It returns false, and no
// error, when the condition fails: the record was taken over, resolved or
// released, or its lease already ended. A transaction conflict is retried
// as for the other fenced writes (Options.ConflictRetries).
func (s *Store) Renew(ctx context.Context, r lambdaidem.Renewal) (bool, error) {
	in := s.renewInput(r)
	err := s.single(ctx, "renew", s.opts.ConflictRetries, func() error {
		_, err := s.client.UpdateItem(ctx, in)
		return err
	})
	ok, err := fenced("renew", err)
	what, expires := shadowRenewed, r.ExpiresAt
	if r.External {
		what, expires = shadowHeld, shadowHeldUntil()
	}
	ferr := s.followShadow(ctx, what, r.Key, r.Token, ok, r.HoldUntil, expires)
	if errors.Is(ferr, errShadowTaken) {
		return false, nil // a Powertools instance holds the key: the lease is lost
	}
	if ferr != nil {
		// The renewal is not done until the shadow follows: the core retries
		// it while the lease lasts, then gives the lease up.
		return ok, ferr
	}
	return ok, err
}

// renewInput is the UpdateItem request of a renewal.
// An external record's renewal (renewExternalUpdate) keeps it without an
// expiration.
func (s *Store) renewInput(r lambdaidem.Renewal) *dynamodb.UpdateItemInput {
	x := s.x.renew
	values := map[string]types.AttributeValue{
		":token":      str(r.Token),
		":inProgress": str(string(lambdaidem.StatusInProgress)),
		":nowMs":      num(ceilMilli(r.Now)),
		":lease":      num(r.LeaseUntil.UnixMilli()),
		":renewedAt":  num(r.Now.UnixMilli()),
		":holdUntil":  num(r.HoldUntil.UnixMilli()),
	}
	if r.External {
		x = s.x.renewExternal
	} else {
		values[":expiration"] = num(r.ExpiresAt.Unix())
	}
	return &dynamodb.UpdateItemInput{
		TableName:                 aws.String(s.table),
		Key:                       s.codec.key(r.Key),
		ConditionExpression:       aws.String(x.cond),
		UpdateExpression:          aws.String(x.update),
		ExpressionAttributeNames:  x.names,
		ExpressionAttributeValues: values,
	}
}
