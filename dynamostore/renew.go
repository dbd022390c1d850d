package dynamostore

import (
	"context"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/lambdaidem/lambdaidem/lambdaidem"
)

// renewCondition admits a renewal only while the record is in progress,
// owned by the renewing attempt, and neither its lease nor its TTL has
// ended (":now" is now rounded up to the milliseconds, ":nowSec" to the
// seconds, as in the claim's condition, so that a lease the claim would
// take over is never revived).
const renewCondition = "#attempt = :token AND #status = :inProgress AND #lease >= :now AND #expiration >= :nowSec"

// renewUpdate sets the new lease, the TTL that outlasts it, and the
// renewal time; every other attribute (the external-effect mark
// included) is kept.
const renewUpdate = "SET #lease = :lease, #expiration = :expiration, #renewedAt = :renewedAt"

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
	return fenced("renew", err)
}

// renewInput is the UpdateItem request of a renewal.
func (s *Store) renewInput(r lambdaidem.Renewal) *dynamodb.UpdateItemInput {
	o := &s.opts
	return &dynamodb.UpdateItemInput{
		TableName:           aws.String(s.table),
		Key:                 s.codec.key(r.Key),
		ConditionExpression: aws.String(renewCondition),
		UpdateExpression:    aws.String(renewUpdate),
		ExpressionAttributeNames: map[string]string{
			"#attempt":    o.AttemptAttr,
			"#status":     o.StatusAttr,
			"#lease":      o.InProgressExpirationAttr,
			"#expiration": o.ExpirationAttr,
			"#renewedAt":  o.RenewedAtAttr,
		},
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":token":      str(r.Token),
			":inProgress": str(string(lambdaidem.StatusInProgress)),
			":now":        num(ceilMilli(r.Now)),
			":nowSec":     num(ceilSec(r.Now)),
			":lease":      num(r.LeaseUntil.UnixMilli()),
			":expiration": num(r.ExpiresAt.Unix()),
			":renewedAt":  num(r.Now.UnixMilli()),
		},
	}
}
