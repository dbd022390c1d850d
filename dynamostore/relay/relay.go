// Package relay publishes the outbox messages that dynamostore committed
// with their records (see lambdaidem/outbox): a Lambda handler for the
// DynamoDB stream of the outbox table.
//
// For each new outbox item the relay reads the item (a strongly consistent
// GetItem), and for each message not yet published, in position order:
// for a target with a deduplication window, records the first dispatch
// (a conditional UpdateItem) and refuses to send it again unless the
// publish can still land inside the window, clock skew and the publish's
// own time counted (outbox.Lands); hands the message to the Publisher; then marks it
// published (an UpdateItem conditioned on the item being unpublished at
// exactly that position). The last mark sets the item PUBLISHED and its
// TTL; an unpublished item has none and never expires.
//
// A crash or an error anywhere leaves the message unmarked: the event
// source mapping sends the record again, and the relay publishes the
// message again with the same id, which a FIFO target deduplicates and a
// consumer wrapped by lambdaidem keys on. Two relays on one item each
// publish and only one mark succeeds; the other reads the item again and
// goes on from where it is.
//
// A message that cannot be published (its target refuses it every time:
// the Publisher's error matches outbox.ErrUnpublishable; or it could no
// longer land inside its window) is set aside with the rest of its item:
// the relay copies the item to a key of its own with status SET_ASIDE and
// the reason, marks the original done (so that it never blocks later
// commits under its record key), writes an OutboxSetAside metric
// (Options.Metrics), and lets the stream record succeed. An operator lists
// such items ([ListSetAside], the lambdaidem command's outbox list), and
// releases ([Release]: the relay publishes it again) or discards
// ([Discard]) each. A record that keeps failing for another reason goes,
// after the mapping's retries, to its on-failure destination; the item
// stays unpublished for an operator, who publishes it with [Relay.Publish]
// once the cause is fixed.
//
// The event source mapping needs ReportBatchItemFailures, a stream view
// type with new images (NEW_IMAGE or NEW_AND_OLD_IMAGES), and an
// on-failure destination; the repository's cdk module builds it.
package relay

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/lambdaidem/lambdaidem/internal/outboxitem"
	"github.com/lambdaidem/lambdaidem/lambdaidem"
	"github.com/lambdaidem/lambdaidem/lambdaidem/emf"
	"github.com/lambdaidem/lambdaidem/lambdaidem/outbox"
	"github.com/lambdaidem/lambdaidem/lambdaidem/streambatch"
)

// Errors of the relay.
var (
	// ErrMalformed: the outbox item, or the stream record naming it, is not
	// what dynamostore writes. The record fails and reaches the on-failure
	// destination.
	ErrMalformed = errors.New("relay: malformed outbox item")
	// ErrSetAside: a message of the item cannot be published (its target
	// refuses it every time: outbox.ErrUnpublishable; or its window has
	// passed: outbox.ErrWindowPassed), so the relay set it aside with the
	// rest of the item, which no longer blocks the record key. The stream
	// record succeeds; an operator lists, releases or discards the item
	// ([ListSetAside], [Release], [Discard]; the lambdaidem command's
	// outbox subcommands).
	ErrSetAside = errors.New("relay: message set aside")
)

// Client is the part of the DynamoDB API the relay calls, with the SDK's
// exact signatures: *dynamodb.Client satisfies it. It needs GetItem and
// UpdateItem on the outbox table.
type Client interface {
	GetItem(ctx context.Context, in *dynamodb.GetItemInput, optFns ...func(*dynamodb.Options)) (*dynamodb.GetItemOutput, error)
	UpdateItem(ctx context.Context, in *dynamodb.UpdateItemInput, optFns ...func(*dynamodb.Options)) (*dynamodb.UpdateItemOutput, error)
}

// Options configure a [Relay]. The zero value of every field means its
// documented default.
type Options struct {
	// Retention is how long a published outbox item is kept before its TTL
	// lets DynamoDB delete it. Default 24 hours.
	Retention time.Duration

	// Now is the clock. Default time.Now.
	Now func() time.Time

	// PublishTimeout bounds each publish, the Publisher's retries
	// included: the publish runs under a context that ends after it. It is
	// also the part of the window margin that covers the publish's own
	// time: a message whose target deduplicates for a window is sent again
	// only while it can still land inside it (lambdaidem.WithinWindow with
	// lambdaidem.WindowMargin(ClockSkew, PublishTimeout)). Default 30
	// seconds.
	PublishTimeout time.Duration

	// ClockSkew is how far the clocks of the relays (which record a
	// message's first dispatch and judge its window later) may be apart:
	// the other part of the window margin. Default 5 seconds, as
	// lambdaidem.Options.LeaseMargin's.
	ClockSkew time.Duration

	// Metrics, if set, receives one OutboxSetAside count (EMF) for every
	// item the relay sets aside, which lambdaidemcdk's set-aside alarm
	// watches. Default: none.
	Metrics *emf.Metrics

	// Logger receives one line per failed record (at level Error) and per
	// published message (at level Debug), with the record key and message
	// id, never a message body. Default: nothing is logged.
	Logger *slog.Logger
}

// Relay publishes committed outbox messages. Build it with [New]; it is
// safe for concurrent use.
type Relay struct {
	client    Client
	table     string
	publisher outbox.Publisher
	opts      Options
}

// New returns a Relay over the outbox table named table, publishing
// through p. It returns an error if client or p is nil, table is empty, or
// Retention, PublishTimeout or ClockSkew is negative.
func New(client Client, table string, p outbox.Publisher, optFns ...func(*Options)) (*Relay, error) {
	switch {
	case client == nil:
		return nil, errors.New("relay: nil client")
	case table == "":
		return nil, errors.New("relay: empty table name")
	case p == nil:
		return nil, errors.New("relay: nil Publisher")
	}
	var o Options
	for _, fn := range optFns {
		fn(&o)
	}
	switch {
	case o.Retention < 0:
		return nil, errors.New("relay: negative Retention")
	case o.Retention == 0:
		o.Retention = 24 * time.Hour
	}
	switch {
	case o.PublishTimeout < 0:
		return nil, errors.New("relay: negative PublishTimeout")
	case o.PublishTimeout == 0:
		o.PublishTimeout = 30 * time.Second
	}
	switch {
	case o.ClockSkew < 0:
		return nil, errors.New("relay: negative ClockSkew")
	case o.ClockSkew == 0:
		o.ClockSkew = 5 * time.Second
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	return &Relay{client: client, table: table, publisher: p, opts: o}, nil
}

// Handler returns the Lambda handler for the outbox table's DynamoDB
// stream, run through streambatch (shard order; each shard's first failed
// record reported in the response, ReportBatchItemFailures): for every
// record whose new image is an unpublished outbox item, it publishes the
// item's unpublished messages ([Relay.Publish]). Other records (the marks'
// own changes, deletions by TTL) pass. The result has the signature
// lambda.Start accepts.
func (r *Relay) Handler() func(context.Context, events.DynamoDBEvent) (events.DynamoDBEventResponse, error) {
	a := streambatch.Unguarded(func(o *streambatch.Options) { o.Logger = r.opts.Logger })
	return a.DynamoDB(r.record)
}

// record handles one stream record.
func (r *Relay) record(ctx context.Context, rec events.DynamoDBEventRecord) error {
	image := rec.Change.NewImage
	if image == nil && rec.EventName != "REMOVE" {
		// A KEYS_ONLY or OLD_IMAGE stream: passing would skip every message.
		return fmt.Errorf("%w: the %s record has no new image: the outbox table's stream view type must be NEW_IMAGE or NEW_AND_OLD_IMAGES",
			ErrMalformed, rec.EventName)
	}
	status, ok := image[outboxitem.StatusAttr]
	if !ok || status.DataType() != events.DataTypeString || status.String() != outboxitem.Pending {
		return nil
	}
	key, ok := image[outboxitem.KeyAttr]
	if !ok || key.DataType() != events.DataTypeString || key.String() == "" {
		return fmt.Errorf("%w: the stream record's new image has no %s", ErrMalformed, outboxitem.KeyAttr)
	}
	err := r.Publish(ctx, key.String())
	if errors.Is(err, ErrSetAside) {
		r.opts.Logger.LogAttrs(ctx, slog.LevelError, "relay: outbox message set aside; an operator releases or discards it (lambdaidem outbox list)",
			slog.String("key", key.String()), slog.String("event_id", rec.EventID), slog.Any("error", err))
		return nil
	}
	if err != nil {
		r.opts.Logger.LogAttrs(ctx, slog.LevelError, "relay: outbox item not published; the event source mapping will retry it",
			slog.String("key", key.String()), slog.String("event_id", rec.EventID), slog.Any("error", err))
		return err
	}
	return nil
}

// Publish publishes, in position order, the messages of the outbox item
// under key (a record key, or a set-aside copy's key once released) that
// are not yet published, marking each after its publish; an item that is
// published, set aside or absent is left alone. It is what the handler
// runs for each record, and what an operator calls to publish an item
// whose record reached the on-failure destination. A message that cannot
// be published sets the item aside: the error matches [ErrSetAside] and
// its cause ([outbox.ErrUnpublishable] or [outbox.ErrWindowPassed]). Any
// other error (the Publisher's, [ErrMalformed], a DynamoDB error) leaves
// the message unmarked.
func (r *Relay) Publish(ctx context.Context, key string) error {
	it, ok, err := r.read(ctx, key)
	for ok && err == nil && it.Status == outboxitem.Pending {
		if err = ctx.Err(); err != nil {
			break
		}
		var advanced bool
		advanced, err = r.step(ctx, &it)
		if err == nil && !advanced {
			it, ok, err = r.read(ctx, key) // another relay moved the item
		}
	}
	return err
}

// step dispatches, publishes and marks it.Messages[it.Published] and
// advances it. It reports false, with no error, when a condition showed
// that the item moved under it.
func (r *Relay) step(ctx context.Context, it *outboxitem.Item) (bool, error) {
	i := it.Published
	m := it.Messages[i]
	// An earlier try dispatched the message (its first dispatch is on the
	// item): it may have reached its target even if this try is refused.
	earlier := !it.DispatchedAt.IsZero()
	if m.Window > 0 {
		margin := lambdaidem.WindowMargin(r.opts.ClockSkew, r.opts.PublishTimeout)
		now := r.opts.Now()
		if err := outbox.Lands(m, it.DispatchedAt, now, margin); err != nil {
			return r.setAside(ctx, it, err, true)
		}
		if it.DispatchedAt.IsZero() {
			ok, err := r.update(ctx, it, outboxitem.DispatchUpdate, outboxitem.DispatchCondition, map[string]types.AttributeValue{
				":nowMs": outboxitem.N(now.UnixMilli()),
			}, i)
			if !ok || err != nil {
				return false, err
			}
			it.DispatchedAt = time.UnixMilli(now.UnixMilli())
			// The answer may have come late, and another relay may have
			// published on the recorded dispatch meanwhile: judged again
			// now, so that this publish still lands inside the window (the
			// outbox model's finding O1).
			if err := outbox.Lands(m, it.DispatchedAt, r.opts.Now(), margin); err != nil {
				return r.setAside(ctx, it, err, true)
			}
		}
	}
	pctx, cancel := context.WithTimeout(ctx, r.opts.PublishTimeout)
	err := r.publisher.Publish(pctx, m)
	cancel()
	if errors.Is(err, outbox.ErrUnpublishable) {
		return r.setAside(ctx, it, fmt.Errorf("publish message %s (%s): %w", m.ID, m.Kind, err), earlier)
	}
	if err != nil {
		return false, fmt.Errorf("relay: publish message %s (%s): %w", m.ID, m.Kind, err)
	}
	update, values := outboxitem.MarkUpdate, map[string]types.AttributeValue{":next": outboxitem.N(int64(i + 1))}
	last := i+1 == len(it.Messages)
	if last {
		update = outboxitem.MarkLastUpdate
		values[":expiration"] = outboxitem.N(r.opts.Now().Add(r.opts.Retention).Unix())
	}
	ok, err := r.update(ctx, it, update, outboxitem.MarkCondition, values, i)
	if !ok || err != nil {
		return false, err
	}
	r.opts.Logger.LogAttrs(ctx, slog.LevelDebug, "relay: message published", slog.String("key", it.Key), slog.String("message_id", m.ID))
	it.Published, it.DispatchedAt = i+1, time.Time{}
	if last {
		it.Status = outboxitem.Published
	}
	return true, nil
}

// setAside sets it aside from its first unpublished message on, for
// cause: an item under a record key is copied to its aside key
// (AsideCondition, AsideUpdate) and marked published, naming the copy
// (MovedUpdate); a copy is set aside in place (SetAsideInPlaceUpdate). A
// crash between the copy and the mark leaves the item pending: the next
// try finds the copy written and marks. dispatched says whether the
// message may have reached its target (its window passed, or an earlier
// try dispatched it and its answer was lost): the copy keeps its first
// dispatch, so that a release still judges the window; a message its
// target refused on its only dispatch was not delivered, and that
// dispatch is dropped. It reports false with an error
// matching [ErrSetAside] once the item is aside, or false and nil when a
// condition showed that the item moved under it.
func (r *Relay) setAside(ctx context.Context, it *outboxitem.Item, cause error, dispatched bool) (bool, error) {
	now := r.opts.Now()
	reason := cause.Error()
	if len(reason) > outboxitem.MaxReason {
		reason = reason[:outboxitem.MaxReason]
	}
	values := map[string]types.AttributeValue{
		":setAsideStatus": outboxitem.S(outboxitem.SetAside),
		":reason":         outboxitem.S(reason),
		":nowMs":          outboxitem.N(now.UnixMilli()),
	}
	aside := it.Key
	if it.Record == "" {
		aside = outboxitem.AsideKey(it.Key, it.CommittedAt)
		copyValues := map[string]types.AttributeValue{
			":record":    outboxitem.S(it.Key),
			":position":  outboxitem.N(int64(it.Published)),
			":messages":  outboxitem.EncodeMessages(it.Messages),
			":committed": outboxitem.N(it.CommittedAt.UnixMilli()),
		}
		maps.Copy(copyValues, values)
		update := outboxitem.AsideUpdate
		if dispatched && !it.DispatchedAt.IsZero() {
			update = outboxitem.AsideDispatchedUpdate
			copyValues[":dispatched"] = outboxitem.N(it.DispatchedAt.UnixMilli())
		}
		_, err := r.client.UpdateItem(ctx, &dynamodb.UpdateItemInput{
			TableName:                 aws.String(r.table),
			Key:                       map[string]types.AttributeValue{outboxitem.KeyAttr: outboxitem.S(aside)},
			UpdateExpression:          aws.String(update),
			ConditionExpression:       aws.String(outboxitem.AsideCondition),
			ExpressionAttributeNames:  outboxitem.Names(update, outboxitem.AsideCondition),
			ExpressionAttributeValues: copyValues,
		})
		var failed *types.ConditionalCheckFailedException
		if err != nil && !errors.As(err, &failed) {
			return false, fmt.Errorf("relay: set aside outbox item: %w", err)
		}
		ok, err := r.update(ctx, it, outboxitem.MovedUpdate, outboxitem.MovedCondition, map[string]types.AttributeValue{
			":expiration": outboxitem.N(now.Add(r.opts.Retention).Unix()),
			":asideKey":   outboxitem.S(aside),
		}, it.Published)
		if !ok || err != nil {
			return false, err
		}
	} else {
		update := outboxitem.SetAsideInPlaceUpdate
		if !dispatched {
			update = outboxitem.SetAsideRefusedInPlaceUpdate
		}
		ok, err := r.update(ctx, it, update, outboxitem.MovedCondition, values, it.Published)
		if !ok || err != nil {
			return false, err
		}
	}
	if r.opts.Metrics != nil {
		r.opts.Metrics.WriteSetAside(string(it.Messages[it.Published].Kind))
	}
	it.Status = outboxitem.SetAside
	return false, fmt.Errorf("%w: outbox item %s (message %d of %d) is now %s: %w", ErrSetAside, it.Key, it.Published, len(it.Messages), aside, cause)
}

// update sends one conditional UpdateItem on the item under key, at
// position. A failed condition is false, not an error.
func (r *Relay) update(ctx context.Context, it *outboxitem.Item, update, condition string, values map[string]types.AttributeValue, position int) (bool, error) {
	key := it.Key
	values[":pending"] = outboxitem.S(outboxitem.Pending)
	values[":position"] = outboxitem.N(int64(position))
	values[":committed"] = outboxitem.N(it.CommittedAt.UnixMilli())
	if update == outboxitem.MarkLastUpdate || update == outboxitem.MovedUpdate {
		values[":published"] = outboxitem.S(outboxitem.Published)
	}
	_, err := r.client.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName:                 aws.String(r.table),
		Key:                       map[string]types.AttributeValue{outboxitem.KeyAttr: outboxitem.S(key)},
		UpdateExpression:          aws.String(update),
		ConditionExpression:       aws.String(condition),
		ExpressionAttributeNames:  outboxitem.Names(update, condition),
		ExpressionAttributeValues: values,
	})
	var failed *types.ConditionalCheckFailedException
	switch {
	case errors.As(err, &failed):
		return false, nil
	case err != nil:
		return false, fmt.Errorf("relay: update outbox item: %w", err)
	}
	return true, nil
}

// read is a strongly consistent GetItem of the item under key.
func (r *Relay) read(ctx context.Context, key string) (outboxitem.Item, bool, error) {
	out, err := r.client.GetItem(ctx, &dynamodb.GetItemInput{
		TableName:      aws.String(r.table),
		Key:            map[string]types.AttributeValue{outboxitem.KeyAttr: outboxitem.S(key)},
		ConsistentRead: aws.Bool(true),
	})
	if err != nil {
		return outboxitem.Item{}, false, fmt.Errorf("relay: read outbox item: %w", err)
	}
	if len(out.Item) == 0 {
		return outboxitem.Item{}, false, nil
	}
	it, err := outboxitem.Decode(out.Item)
	if err != nil {
		return outboxitem.Item{}, false, fmt.Errorf("%w: %w", ErrMalformed, err)
	}
	if it.Status == outboxitem.Pending && it.Published == len(it.Messages) {
		return outboxitem.Item{}, false, fmt.Errorf("%w: unpublished with all %d messages marked", ErrMalformed, it.Published)
	}
	return it, true, nil
}
