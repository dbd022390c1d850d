package dynamostore

import (
	"context"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/lambdaidem/lambdaidem/lambdaidem"
)

// Get reads the record key with a strongly consistent GetItem. A record
// whose expiration is before now is reported as absent (the zero Record):
// DynamoDB deletes expired items late.
func (s *Store) Get(ctx context.Context, key string, now time.Time) (lambdaidem.Record, error) {
	rec, err := s.read(ctx, "get", key)
	if err != nil || !rec.Live(now) {
		return lambdaidem.Record{}, err
	}
	return rec, nil
}

// read is a strongly consistent GetItem of the record key, expired or not.
func (s *Store) read(ctx context.Context, op, key string) (lambdaidem.Record, error) {
	in := &dynamodb.GetItemInput{
		TableName:      aws.String(s.table),
		Key:            s.codec.key(key),
		ConsistentRead: aws.Bool(true),
	}
	var out *dynamodb.GetItemOutput
	err := s.single(ctx, op, s.opts.ConflictRetries, func() (err error) {
		out, err = s.client.GetItem(ctx, in)
		return err
	})
	if err != nil {
		return lambdaidem.Record{}, wrapErr(op, err)
	}
	if len(out.Item) == 0 {
		return lambdaidem.Record{}, nil
	}
	rec, err := s.codec.decode(out.Item)
	if err != nil {
		return lambdaidem.Record{}, wrapErr(op, err)
	}
	return rec, nil
}
