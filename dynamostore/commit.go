package dynamostore

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"strconv"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/lambdaidem/lambdaidem/lambdaidem"
)

// Commit writes the completed record. Without staged effects it is one
// conditional PutItem; with effects it is one TransactWriteItems whose
// first item is the record's Put and whose other items are the effects in
// the order they were staged, so the record and the business writes are
// written together or not at all.
//
// The record's condition is the fence (the record is in progress or
// unknown and owned by c.Token) or, when c.Claim is set (optimistic mode),
// the claim condition: absent, expired, or in progress with a lapsed lease.
// A failed record condition returns the current record and false: from the
// ALL_OLD item DynamoDB returns with the failure, or else from a strongly
// consistent GetItem. A commit whose response was lost and whose retry
// fails its condition therefore reports the record completed with c.Token,
// which the core recognizes as its own success; within DynamoDB's 10-minute
// window the transaction's ClientRequestToken makes the SDK's own retry of
// a request whose outcome it does not know succeed outright. Nothing
// depends on what DynamoDB does with a token it cancelled (AWS documents
// only the token of a success): a resend after a cancellation uses a new
// token, and is safe by its condition alone (the fence, or the claim's
// condition, refuses a second apply).
//
// The effects are checked before anything is sent (at most [MaxEffects],
// none on the record's own item, at most [MaxTransactionSize] bytes, each a
// types.TransactWriteItem as [Put], [Update], [Delete] and
// [ConditionCheck] stage them); a violation is an error matching
// lambdaidem.ErrEffectRejected and [ErrInvalidEffect]. A failed business
// condition is a [*ConditionFailedError]. A write that meets a
// transaction conflict (TransactionConflictException, or a transaction
// cancelled for a TransactionConflict) is sent again, the transaction with
// a new ClientRequestToken, with jittered backoff for as long as ctx
// allows (without a deadline, Options.ConflictRetries times), then fails
// with an error matching lambdaidem.ErrInProgress.
//
// Inside a Powertools window the transaction also writes the event's
// Powertools record (see [Store.commitBeside]).
func (s *Store) Commit(ctx context.Context, c lambdaidem.Commit) (lambdaidem.Record, bool, error) {
	if ev, ok := s.powertoolsFor(ctx, c.Now); ok {
		return s.commitBeside(ctx, c, ev)
	}
	return s.commit(ctx, c)
}

// commit is Commit without a Powertools window.
func (s *Store) commit(ctx context.Context, c lambdaidem.Commit) (lambdaidem.Record, bool, error) {
	put := s.commitInput(c)
	if len(c.Effects) == 0 {
		return s.putRecord(ctx, "commit", s.commitRetries(ctx), c.Key, put)
	}
	item := put.Item
	effects, actions, err := s.effectItems(c.Key, c.Now, c.Effects, mapSize(item))
	if err != nil {
		return lambdaidem.Record{}, false, err
	}
	record := types.TransactWriteItem{Put: &types.Put{
		TableName:                           put.TableName,
		Item:                                item,
		ConditionExpression:                 put.ConditionExpression,
		ExpressionAttributeNames:            put.ExpressionAttributeNames,
		ExpressionAttributeValues:           put.ExpressionAttributeValues,
		ReturnValuesOnConditionCheckFailure: put.ReturnValuesOnConditionCheckFailure,
	}}
	in := &dynamodb.TransactWriteItemsInput{
		TransactItems:      append([]types.TransactWriteItem{record}, effects...),
		ClientRequestToken: aws.String(s.requestToken(c, 0)),
	}
	renew := func(n int) { in.ClientRequestToken = aws.String(s.requestToken(c, n)) }
	if err := s.transact(ctx, in, actions, renew); err != nil {
		if rf, ok := err.(recordRefused); ok {
			rec, err := s.current(ctx, "commit", c.Key, rf.old)
			return rec, false, err
		}
		return lambdaidem.Record{}, false, err
	}
	return s.written("commit", item)
}

// commitInput is the record's PutItem of commit c, fenced (fenceCondition)
// or, in optimistic mode, claiming (optimisticCommitCondition). Commit
// sends it alone or as the first item of the transaction.
func (s *Store) commitInput(c lambdaidem.Commit) *dynamodb.PutItemInput {
	item := s.codec.completed(c)
	if c.Claim {
		return s.putInput(item, s.x.optimisticCommit, claimableValues(c.Now, c.Window))
	}
	return s.putInput(item, s.x.commit, fenceValues(c.Token))
}

// fenceValues are the values of fenceCondition for the attempt token.
func fenceValues(token string) map[string]types.AttributeValue {
	return map[string]types.AttributeValue{
		":token":      str(token),
		":inProgress": str(string(lambdaidem.StatusInProgress)),
		":unknown":    str(string(lambdaidem.StatusUnknown)),
	}
}

// requestToken is the ClientRequestToken (at most 36 characters) of the
// n-th transaction commit c sends: a hash of the table, the record key, the
// attempt token, the commit time and n. The SDK's retries of one request
// (a timeout, a 5xx, a lost connection: the outcome is unknown) send the
// same token, so DynamoDB answers a retry of a transaction that succeeded
// with success and writes nothing; after a definite answer that nothing
// was applied (a cancellation) the commit sends the next token (see
// [Store.transact]); a later commit by the same attempt (a new time) gets
// new tokens.
func (s *Store) requestToken(c lambdaidem.Commit, n int) string {
	h := sha256.New()
	for _, part := range []string{s.table, c.Key, s.opts.SortKeyValue, c.Token, strconv.FormatInt(c.Now.UnixNano(), 10), strconv.Itoa(n)} {
		h.Write([]byte(part))
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil))[:36]
}

// putInput is a conditional PutItem of a whole record item that asks for
// the old item on a failed condition.
func (s *Store) putInput(item map[string]types.AttributeValue, x expression, values map[string]types.AttributeValue) *dynamodb.PutItemInput {
	return &dynamodb.PutItemInput{
		TableName:                           aws.String(s.table),
		Item:                                item,
		ConditionExpression:                 aws.String(x.cond),
		ExpressionAttributeNames:            x.names,
		ExpressionAttributeValues:           values,
		ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
	}
}

// putRecord sends in, a [Store.putInput], retrying a transaction conflict
// at most retries times (see [Store.retryConflicts]). A failed condition
// returns the current record and false; see [Store.refused].
func (s *Store) putRecord(ctx context.Context, op string, retries int, key string, in *dynamodb.PutItemInput) (lambdaidem.Record, bool, error) {
	err := s.single(ctx, op, retries, func() error {
		_, err := s.client.PutItem(ctx, in)
		return err
	})
	if err != nil {
		return s.refused(ctx, op, key, err)
	}
	return s.written(op, in.Item)
}

// written is the record a successful write of item left.
func (s *Store) written(op string, item map[string]types.AttributeValue) (lambdaidem.Record, bool, error) {
	rec, err := s.codec.decode(item)
	if err != nil {
		return lambdaidem.Record{}, false, wrapErr(op, err)
	}
	return rec, true, nil
}
