package relay

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/lambdaidem/lambdaidem/internal/outboxitem"
	"github.com/lambdaidem/lambdaidem/lambdaidem/outbox"
)

// ErrNotSetAside: the item is not (or no longer) set aside as it was read:
// released, discarded or set aside again by someone else meanwhile.
var ErrNotSetAside = errors.New("relay: the outbox item is not set aside as read")

// ScanClient is the part of the DynamoDB API [ListSetAside] calls, with
// the SDK's exact signature.
type ScanClient interface {
	Scan(ctx context.Context, in *dynamodb.ScanInput, optFns ...func(*dynamodb.Options)) (*dynamodb.ScanOutput, error)
}

// Aside is an outbox item set aside by the relay: the messages of one
// commit from the first that could not be published on.
type Aside struct {
	// Key is the item's key (the record key, "#aside#" and the commit's
	// time); Record the record key of the commit.
	Key, Record string
	// Reason says why the message at Position was set aside.
	Reason string
	// Position is the first unpublished message; Messages are all the
	// commit's messages, the published ones included.
	Position int
	Messages []outbox.Message
	// CommittedAt is the commit's time, SetAsideAt when the relay set the
	// item aside, and DispatchedAt the first dispatch of the message at
	// Position (zero if it was never dispatched).
	CommittedAt, SetAsideAt, DispatchedAt time.Time
}

func asideOf(it outboxitem.Item) Aside {
	return Aside{Key: it.Key, Record: it.Record, Reason: it.Reason, Position: it.Published, Messages: it.Messages,
		CommittedAt: it.CommittedAt, SetAsideAt: it.SetAsideAt, DispatchedAt: it.DispatchedAt}
}

// setAsideFilter selects set-aside items in a Scan.
const setAsideFilter = "#status = :setAsideStatus"

// ListSetAside returns every set-aside item of the outbox table, with
// Scans (every page; the whole table is read). An item it cannot read does
// not hide the others: it returns every item it read, and an error
// matching [ErrMalformed] that names each item it could not.
func ListSetAside(ctx context.Context, client ScanClient, table string) ([]Aside, error) {
	var out []Aside
	var malformed []error
	var start map[string]types.AttributeValue
	for {
		page, err := client.Scan(ctx, &dynamodb.ScanInput{
			TableName:                 aws.String(table),
			FilterExpression:          aws.String(setAsideFilter),
			ExpressionAttributeNames:  outboxitem.Names(setAsideFilter),
			ExpressionAttributeValues: map[string]types.AttributeValue{":setAsideStatus": outboxitem.S(outboxitem.SetAside)},
			ExclusiveStartKey:         start,
			ConsistentRead:            aws.Bool(true),
		})
		if err != nil {
			return nil, fmt.Errorf("relay: scan the outbox table: %w", err)
		}
		for _, item := range page.Items {
			it, err := outboxitem.Decode(item)
			if err != nil {
				key, _ := item[outboxitem.KeyAttr].(*types.AttributeValueMemberS)
				name := "(no key)"
				if key != nil {
					name = key.Value
				}
				malformed = append(malformed, fmt.Errorf("%w: %s: %w", ErrMalformed, name, err))
				continue
			}
			out = append(out, asideOf(it))
		}
		if len(page.LastEvaluatedKey) == 0 {
			return out, errors.Join(malformed...)
		}
		start = page.LastEvaluatedKey
	}
}

// ReadSetAside reads the set-aside item under key (a strongly consistent
// GetItem); it fails with [ErrNotSetAside] if there is none.
func ReadSetAside(ctx context.Context, client Client, table, key string) (Aside, error) {
	out, err := client.GetItem(ctx, &dynamodb.GetItemInput{
		TableName:      aws.String(table),
		Key:            map[string]types.AttributeValue{outboxitem.KeyAttr: outboxitem.S(key)},
		ConsistentRead: aws.Bool(true),
	})
	if err != nil {
		return Aside{}, fmt.Errorf("relay: read outbox item: %w", err)
	}
	if len(out.Item) == 0 {
		return Aside{}, fmt.Errorf("%w: no item %s", ErrNotSetAside, key)
	}
	it, err := outboxitem.Decode(out.Item)
	if err != nil {
		return Aside{}, fmt.Errorf("%w: %w", ErrMalformed, err)
	}
	if it.Status != outboxitem.SetAside {
		return Aside{}, fmt.Errorf("%w: %s is %s", ErrNotSetAside, key, it.Status)
	}
	return asideOf(it), nil
}

// Release gives a, as read, back to the relay: the item is PENDING again
// and the relay publishes it from a.Position on (the stream's record of
// the change starts it). With resend, the first dispatch is forgotten: a
// message whose window has passed is sent again, and its target may
// deliver it twice; without it, such a message is set aside again. One
// conditional UpdateItem: it fails with [ErrNotSetAside] if the item
// changed since it was read.
func Release(ctx context.Context, client Client, table string, a Aside, resend bool) error {
	update := outboxitem.ReleaseUpdate
	if resend {
		update = outboxitem.ReleaseResendUpdate
	}
	return settle(ctx, client, table, a, update, map[string]types.AttributeValue{":pending": outboxitem.S(outboxitem.Pending)})
}

// Discard gives a, as read, up: its unpublished messages are never sent;
// the item is PUBLISHED and expires after retention from now. One
// conditional UpdateItem, as [Release].
func Discard(ctx context.Context, client Client, table string, a Aside, now time.Time, retention time.Duration) error {
	return settle(ctx, client, table, a, outboxitem.DiscardUpdate, map[string]types.AttributeValue{
		":published":  outboxitem.S(outboxitem.Published),
		":expiration": outboxitem.N(now.Add(retention).Unix()),
	})
}

// settle is an operator's conditional UpdateItem on a set-aside item
// (ReleaseCondition).
func settle(ctx context.Context, client Client, table string, a Aside, update string, values map[string]types.AttributeValue) error {
	values[":setAsideStatus"] = outboxitem.S(outboxitem.SetAside)
	values[":setAsideAt"] = outboxitem.N(a.SetAsideAt.UnixMilli())
	_, err := client.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName:                 aws.String(table),
		Key:                       map[string]types.AttributeValue{outboxitem.KeyAttr: outboxitem.S(a.Key)},
		UpdateExpression:          aws.String(update),
		ConditionExpression:       aws.String(outboxitem.ReleaseCondition),
		ExpressionAttributeNames:  outboxitem.Names(update, outboxitem.ReleaseCondition),
		ExpressionAttributeValues: values,
	})
	var failed *types.ConditionalCheckFailedException
	switch {
	case errors.As(err, &failed):
		return fmt.Errorf("%w: %s", ErrNotSetAside, a.Key)
	case err != nil:
		return fmt.Errorf("relay: update outbox item: %w", err)
	}
	return nil
}
