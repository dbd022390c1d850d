package dynamostore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/lambdaidem/lambdaidem/lambdaidem"
	"github.com/lambdaidem/lambdaidem/lambdaidem/powertools"
)

// PowertoolsWindow is a cutover from Powertools for AWS Lambda on the same
// table: until Until, the store treats the record the old function's
// Powertools keeps for an event as the same operation as lambdaidem's, in
// both directions (see docs/powertools.md, "Cutover"):
//
//   - a live Powertools record answers the request: COMPLETED is replayed
//     (its `data` decoded as the old language stored it), or refused with
//     lambdaidem.ErrKeyReused when its validation hash is not the
//     request's; INPROGRESS within its in_progress_expiration is in
//     progress; an expired one is absent;
//   - while lambdaidem holds an operation it keeps a Powertools-shaped
//     INPROGRESS record (the shadow) under the Powertools key, which
//     follows the lease and its renewals, so that an old version still
//     serving answers "in progress" instead of running; the commit turns it
//     into the COMPLETED record Powertools would have written, in the same
//     transaction as the record and the business writes, so that the old
//     version replays the new version's answer.
//
// The store learns an event's Powertools key from the context
// ([PowertoolsHandler] or [Store.WithPowertools]); a request without it,
// or at or after Until, costs nothing more than without a window.
type PowertoolsWindow struct {
	// Config is how the old function's Powertools derived its keys.
	Config powertools.Config
	// Until closes the window; zero: no window.
	Until time.Time
	// Validation says the old function set payload_validation_jmespath:
	// Powertools records carry a validation hash, which a request must
	// match to be replayed, and the shadow carries the request's.
	Validation bool
	// ShadowAttr marks an item as lambdaidem's shadow (it holds the
	// lambdaidem record key). Default "lambdaidem_shadow_of".
	ShadowAttr string
	// ClockSkew is how far an old instance's clock may be behind this
	// one's: a Powertools lease (in_progress_expiration, and expiration)
	// counts as ended only this long after it ends by this clock, as
	// lambdaidem.Options.LeaseMargin does for lambdaidem's own holds (an old
	// instance runs until its Lambda deadline, which is its
	// in_progress_expiration on its host's clock). Default 5 s, the
	// LeaseMargin default; negative: none.
	ClockSkew time.Duration
	// Response converts between what lambdaidem stores and what the old
	// handler returned, where they differ: the HTTP front doors store their
	// own response form (apigw.PowertoolsProxy converts it to and from the
	// API Gateway proxy response a Powertools handler returns). Nil: the
	// same JSON both ways, as for a handler wrapped with
	// lambdaidem.NewWrapper or Do that returns what the old one returned.
	Response PowertoolsResponse
}

// PowertoolsResponse converts a stored value (JSON) between lambdaidem's
// form and the response the old Powertools handler returned. An error is
// a response the other side cannot use: the old record is not replayed
// (the request fails rather than answer something else), the shadow stays
// in progress.
type PowertoolsResponse interface {
	// ToOld turns lambdaidem's stored value into the old handler's response.
	ToOld(stored json.RawMessage) (json.RawMessage, error)
	// FromOld turns the old handler's response into lambdaidem's stored value.
	FromOld(old json.RawMessage) (json.RawMessage, error)
}

// enabled reports whether a window is configured.
func (w *PowertoolsWindow) enabled() bool { return !w.Until.IsZero() }

// validate checks the window against the store's options and fills its
// defaults.
func (w *PowertoolsWindow) validate(o *Options) error {
	if !w.enabled() {
		return nil
	}
	if err := w.Config.Validate(); err != nil {
		return fmt.Errorf("dynamostore: Powertools window: %w", err)
	}
	if o.SortKeyAttr != "" {
		// Powertools' composite layout puts its key in the sort key, the
		// reverse of lambdaidem's: not supported.
		return errors.New("dynamostore: Powertools window: a table with a sort key is not supported")
	}
	if w.ShadowAttr == "" {
		w.ShadowAttr = "lambdaidem_shadow_of"
	}
	switch {
	case w.ClockSkew == 0:
		w.ClockSkew = 5 * time.Second
	case w.ClockSkew < 0:
		w.ClockSkew = 0
	}
	return nil
}

// powertoolsEvent is what the store needs of one event for the window: the
// Powertools key and validation hash the old function derived.
type powertoolsEvent struct {
	key, validation string
	// shadow is set once this invocation sent a shadow write (it may
	// exist): only then do its renewals, marks and release follow it, so
	// that outside the window they cost nothing more.
	shadow *atomic.Bool
}

type powertoolsEventKey struct{}

// WithPowertools returns ctx carrying the Powertools key (and, with
// Validation, the validation hash) of an event whose event_key_jmespath
// selects keySelection (and payload_validation_jmespath
// validationSelection): each a json.RawMessage as the event holds it or a
// Go value (see [powertools.Config.Key]). Without a window it returns ctx.
// An event for which Powertools keeps no record (powertools.ErrNoKey)
// returns ctx too: there is nothing to honour. A selection that cannot be
// encoded is an error, and so is an invocation of a Lambda tenant
// (lambdaidem.Tenant): Powertools' keys name no tenant, so the old record
// under one could be another tenant's, and the window fails closed
// ([ErrPowertoolsTenant]).
func (s *Store) WithPowertools(ctx context.Context, keySelection, validationSelection any) (context.Context, error) {
	w := &s.opts.Powertools
	if !w.enabled() {
		return ctx, nil
	}
	if t := lambdaidem.Tenant(ctx); t != "" {
		return ctx, fmt.Errorf("%w (tenant %q)", ErrPowertoolsTenant, t)
	}
	key, err := w.Config.Key(keySelection)
	if errors.Is(err, powertools.ErrNoKey) {
		return ctx, nil
	}
	if err != nil {
		return ctx, fmt.Errorf("dynamostore: Powertools key: %w", err)
	}
	ev := powertoolsEvent{key: key, shadow: new(atomic.Bool)}
	if w.Validation {
		if ev.validation, err = w.Config.ValidationHash(validationSelection); err != nil {
			return ctx, fmt.Errorf("dynamostore: Powertools validation: %w", err)
		}
	}
	return context.WithValue(ctx, powertoolsEventKey{}, ev), nil
}

// ErrPowertoolsTenant: a Powertools window met an invocation of a Lambda
// tenant (tenant isolation mode). Powertools derives its record keys from
// the function name and the event alone, so honouring them would let one
// tenant's request be answered with another's old record; the request is
// refused instead. Close the window (Until) for a function in tenant
// isolation mode.
var ErrPowertoolsTenant = errors.New("dynamostore: Powertools window: the invocation names a Lambda tenant, and Powertools' record keys name none; refused rather than answered from a record another tenant may have written")

// PowertoolsHandler returns h with each event's Powertools key in its
// context (see [Store.WithPowertools]), for a store with a
// [PowertoolsWindow]: h is the lambdaidem-wrapped handler, key selects
// what the old event_key_jmespath selected, validation (nil without
// Validation) what payload_validation_jmespath selected.
func PowertoolsHandler[E, R any](s *Store, h func(context.Context, E) (R, error), key, validation func(E) (any, error)) func(context.Context, E) (R, error) {
	return func(ctx context.Context, e E) (R, error) {
		var zero R
		if !s.opts.Powertools.enabled() {
			return h(ctx, e)
		}
		ks, err := key(e)
		if err != nil {
			return zero, err
		}
		var vs any
		if validation != nil {
			if vs, err = validation(e); err != nil {
				return zero, err
			}
		}
		ctx, err = s.WithPowertools(ctx, ks, vs)
		if err != nil {
			return zero, err
		}
		return h(ctx, e)
	}
}

// powertoolsFor returns the event's Powertools key when the window is open
// at now. With a zero now (a fence, which carries no time) it only asks
// whether the event has one: a shadow exists only where a claim in the
// window wrote it, and every write to it is fenced on the attempt's token.
func (s *Store) powertoolsFor(ctx context.Context, now time.Time) (powertoolsEvent, bool) {
	w := &s.opts.Powertools
	if !w.enabled() {
		return powertoolsEvent{}, false
	}
	ev, ok := ctx.Value(powertoolsEventKey{}).(powertoolsEvent)
	if !ok || (!now.IsZero() && !now.Before(w.Until)) {
		return powertoolsEvent{}, false
	}
	return ev, true
}

// The conditions on the Powertools key's item.
const (
	// shadowClaimCondition: Powertools itself could claim the key (its own
	// claim condition, judged no earlier than Powertools judges it), or the
	// item is the shadow of this lambdaidem record, which only the record's
	// owner writes. A live shadow of another record (two lambdaidem
	// operations the old function keyed alike: another caller's scope,
	// Namespace or key function) is, to the old version, that operation's
	// Powertools record, and answers as one: taking it would fail the other
	// owner's commit after its effect.
	shadowClaimCondition = "attribute_not_exists(#id) OR #expiration < :nowSec OR " +
		"(#status = :inProgress AND attribute_exists(#inProgressExpiration) AND #inProgressExpiration < :nowMs) OR " +
		"#shadow = :shadowOf"
	// shadowFenceCondition: the shadow is still the one this attempt wrote.
	shadowFenceCondition = "attribute_exists(#shadow) AND #attempt = :token"
	// shadowRenewUpdate follows the owner's renewed hold.
	shadowRenewUpdate = "SET #inProgressExpiration = :hold, #expiration = :expiration"
	// shadowHoldUpdate keeps the shadow in progress with no lease while the
	// operation may have had an external effect (BeginExternal, UNKNOWN):
	// Powertools answers "in progress" until lambdaidem resolves it.
	shadowHoldUpdate = "SET #expiration = :expiration REMOVE #inProgressExpiration"
)

// shadowNames are the attribute names of the shadow expressions.
func (s *Store) shadowNames(expr ...string) map[string]string {
	o := &s.opts
	all := map[string]string{
		"#id":                   o.KeyAttr,
		"#expiration":           o.ExpirationAttr,
		"#status":               o.StatusAttr,
		"#inProgressExpiration": o.InProgressExpirationAttr,
		"#shadow":               o.Powertools.ShadowAttr,
		"#attempt":              o.AttemptAttr,
	}
	used := map[string]string{}
	for _, e := range expr {
		for _, n := range namePlaceholder.FindAllString(e, -1) {
			used[n] = all[n]
		}
	}
	return used
}

// shadowKey is the Powertools key's item key.
func (s *Store) shadowKey(ev powertoolsEvent) map[string]types.AttributeValue {
	return map[string]types.AttributeValue{s.opts.KeyAttr: str(ev.key)}
}

// shadowItem is the Powertools-shaped item lambdaidem keeps under the
// Powertools key for record key, owned by token.
func (s *Store) shadowItem(ev powertoolsEvent, key, token string, status lambdaidem.Status, expires time.Time) map[string]types.AttributeValue {
	o := &s.opts
	item := s.shadowKey(ev)
	item[o.StatusAttr] = str(string(status))
	item[o.ExpirationAttr] = num(expires.Unix())
	item[o.AttemptAttr] = str(token)
	item[o.Powertools.ShadowAttr] = str(key)
	if o.Powertools.Validation {
		item[o.ValidationAttr] = str(ev.validation)
	}
	return item
}

// shadowClaimValues are the values of shadowClaimCondition at now for
// lambdaidem record key: now less the window's ClockSkew (see
// [Store.powertoolsNow]), in whole seconds and milliseconds rounded down,
// so that the key is free to lambdaidem no earlier than Powertools' claim
// (now in fractional seconds) finds it free.
func (s *Store) shadowClaimValues(now time.Time, key string) map[string]types.AttributeValue {
	now = s.powertoolsNow(now)
	return map[string]types.AttributeValue{
		":inProgress": str(string(lambdaidem.StatusInProgress)),
		":nowSec":     num(now.Unix()),
		":nowMs":      num(now.UnixMilli()),
		":shadowOf":   str(key),
	}
}

// powertoolsNow is the time a Powertools lease is judged at: now less the
// window's ClockSkew. Every judgement of a Powertools item (the shadow
// claim's condition, the answer from a refused one) goes through it.
func (s *Store) powertoolsNow(now time.Time) time.Time {
	return now.Add(-s.opts.Powertools.ClockSkew)
}

// claimBeside is Claim inside the window: the claim of lambdaidem's record
// as without a window, then, once it is ours, one conditional PutItem of
// the shadow (INPROGRESS until the claim's hold). A live Powertools record
// in the way refuses the shadow: the claim is given back (fenced) and that
// record answers.
func (s *Store) claimBeside(ctx context.Context, c lambdaidem.Claim, ev powertoolsEvent) (lambdaidem.Record, bool, error) {
	rec, ok, err := s.claim(ctx, c)
	if err != nil || !ok {
		return rec, ok, err
	}
	item := s.shadowItem(ev, c.Key, c.Token, lambdaidem.StatusInProgress, c.ExpiresAt)
	item[s.opts.InProgressExpirationAttr] = num(holdOf(c).UnixMilli())
	in := &dynamodb.PutItemInput{
		TableName:                           aws.String(s.table),
		Item:                                item,
		ConditionExpression:                 aws.String(shadowClaimCondition),
		ExpressionAttributeNames:            s.shadowNames(shadowClaimCondition),
		ExpressionAttributeValues:           s.shadowClaimValues(c.Now, c.Key),
		ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
	}
	ev.shadow.Store(true)
	err = s.single(ctx, "claim", s.opts.ConflictRetries, func() error {
		_, err := s.client.PutItem(ctx, in)
		return err
	})
	if err == nil {
		return rec, true, nil
	}
	var ccf *types.ConditionalCheckFailedException
	if !errors.As(err, &ccf) {
		// The core gives back a claim whose call failed (Release, which
		// removes a shadow that did land).
		return lambdaidem.Record{}, false, wrapErr("claim", err)
	}
	if _, err := s.release(ctx, lambdaidem.Fence{Key: c.Key, Token: c.Token}); err != nil {
		return lambdaidem.Record{}, false, err
	}
	return s.powertoolsAnswer(ctx, "claim", c.Key, c.Fingerprint, ev, ccf.Item, c.Now)
}

// powertoolsAnswer is the lambdaidem record that stands for the
// Powertools item old (read again when DynamoDB returned none) to a
// request with fingerprint fp: COMPLETED with the decoded response, the
// request's fingerprint unless the validation hashes differ or the item is
// the shadow of another lambdaidem record (the core then refuses with
// ErrKeyReused); or in progress until the Powertools
// lease ends, or at now when the item is no longer live (the core claims
// again).
func (s *Store) powertoolsAnswer(ctx context.Context, op, key, fp string, ev powertoolsEvent, old map[string]types.AttributeValue, now time.Time) (lambdaidem.Record, bool, error) {
	if len(old) == 0 {
		out, err := s.client.GetItem(ctx, &dynamodb.GetItemInput{
			TableName: aws.String(s.table), Key: s.shadowKey(ev), ConsistentRead: aws.Bool(true),
		})
		if err != nil {
			return lambdaidem.Record{}, false, wrapErr(op, err)
		}
		old = out.Item
	}
	o := &s.opts
	pr := powertools.Record{
		Status:               attrString(old[o.StatusAttr]),
		Expiration:           attrInt(old[o.ExpirationAttr]),
		InProgressExpiration: attrInt(old[o.InProgressExpirationAttr]),
	}
	rec := lambdaidem.Record{Key: key, Fingerprint: fp, Attempts: 1, Token: "powertools"}
	if pr.Expiration != 0 {
		rec.ExpiresAt = time.Unix(pr.Expiration, 0)
	}
	switch powertools.Judge(pr, s.powertoolsNow(now)) {
	case powertools.Completed:
		if o.Powertools.Validation && attrString(old[o.ValidationAttr]) != ev.validation {
			rec.Fingerprint = "powertools-validation:" + attrString(old[o.ValidationAttr])
		}
		if of := attrString(old[o.Powertools.ShadowAttr]); of != "" && of != key {
			// Another lambdaidem operation's shadow (another caller's scope,
			// Namespace or key function): never its answer to this one.
			rec.Fingerprint = "powertools-shadow-of:" + of
		}
		outcome, err := s.powertoolsOutcome(old[o.DataAttr])
		if err != nil {
			return lambdaidem.Record{}, false, wrapErr(op, err)
		}
		rec.Status, rec.Outcome = lambdaidem.StatusCompleted, outcome
		return rec, false, nil
	case powertools.InProgress:
		until := time.UnixMilli(pr.InProgressExpiration)
		if pr.InProgressExpiration == 0 {
			until = rec.ExpiresAt
		}
		rec.Status, rec.LeaseUntil, rec.HoldUntil = lambdaidem.StatusInProgress, until, until
		return rec, false, nil
	}
	rec.Status, rec.LeaseUntil, rec.HoldUntil = lambdaidem.StatusInProgress, now, now
	return rec, false, nil
}

// powertoolsOutcome is the stored outcome (lambdaidem's form) of the
// response in a Powertools `data` attribute; a record without one (a
// TypeScript function that returned undefined) replays null.
func (s *Store) powertoolsOutcome(data types.AttributeValue) ([]byte, error) {
	value := json.RawMessage("null")
	if data != nil {
		wire, err := attributeJSON(data)
		if err != nil {
			return nil, err
		}
		if value, err = s.opts.Powertools.Config.DecodeData(wire); err != nil {
			return nil, err
		}
	}
	if conv := s.opts.Powertools.Response; conv != nil {
		var err error
		if value, err = conv.FromOld(value); err != nil {
			return nil, err
		}
	}
	return lambdaidem.EncodeStoredOutcome(lambdaidem.StoredOutcome{Value: value})
}

// commitBeside is Commit inside the window: the shadow's Put joins the
// commit's transaction after the staged writes, fenced on the attempt's
// token (an optimistic commit: on shadowClaimCondition). It holds the
// response as the old language stores it; an outcome that language could
// not have stored (a terminal error, a Codec's bytes, a sealed outcome, a
// number TypeScript refuses) leaves the shadow in progress, without a
// lease, until the commit's expiration: an old version answers "in
// progress" and never runs the operation again. A shadow that is no longer
// this attempt's (Powertools took the key once the shadow's lease lapsed)
// fails the commit, none of its writes applied; the claim is given back
// and the Powertools record answers.
func (s *Store) commitBeside(ctx context.Context, c lambdaidem.Commit, ev powertoolsEvent) (lambdaidem.Record, bool, error) {
	o := &s.opts
	item := s.shadowItem(ev, c.Key, c.Token, lambdaidem.StatusCompleted, c.ExpiresAt)
	if data, ok := s.shadowData(c.Outcome); ok {
		item[o.DataAttr] = data
	} else {
		item[o.StatusAttr] = str(string(lambdaidem.StatusInProgress))
	}
	cond, values := shadowFenceCondition, map[string]types.AttributeValue{":token": str(c.Token)}
	if c.Claim {
		cond, values = shadowClaimCondition, s.shadowClaimValues(c.Now, c.Key)
	}
	index := len(c.Effects)
	c.Effects = append(append(make([]any, 0, index+1), c.Effects...), types.TransactWriteItem{Put: &types.Put{
		TableName:                           aws.String(s.table),
		Item:                                item,
		ConditionExpression:                 aws.String(cond),
		ExpressionAttributeNames:            s.shadowNames(cond),
		ExpressionAttributeValues:           values,
		ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
	}})
	ev.shadow.Store(true)
	rec, ok, err := s.commit(ctx, c)
	var cfe *ConditionFailedError
	if !errors.As(err, &cfe) || cfe.Index != index {
		return rec, ok, err
	}
	if !c.Claim {
		if _, err := s.release(ctx, lambdaidem.Fence{Key: c.Key, Token: c.Token}); err != nil {
			return lambdaidem.Record{}, false, err
		}
	}
	return s.powertoolsAnswer(ctx, "commit", c.Key, c.Fingerprint, ev, cfe.Item, c.Now)
}

// shadowData is the `data` attribute the old language stores for a stored
// outcome, if it could have stored it.
func (s *Store) shadowData(outcome []byte) (types.AttributeValue, bool) {
	stored, err := lambdaidem.DecodeStoredOutcome(outcome)
	if err != nil || stored.Value == nil {
		return nil, false
	}
	value := stored.Value
	if conv := s.opts.Powertools.Response; conv != nil {
		if value, err = conv.ToOld(value); err != nil {
			return nil, false
		}
	}
	wire, err := s.opts.Powertools.Config.EncodeData(value)
	if err != nil {
		return nil, false
	}
	av, err := attributeValue(wire)
	if err != nil {
		return nil, false
	}
	return av, true
}

// shadowHeldUntil is the expiration of a shadow held for an operation
// that may have had an external effect: far enough that Powertools never
// finds it expired (lambdaidem's UNKNOWN record has no expiration; a
// Powertools reader needs one).
func shadowHeldUntil() time.Time { return time.Date(2100, 1, 1, 0, 0, 0, 0, time.UTC) }

// shadowFollows is what becomes of the shadow after a fenced write of the
// attempt's record.
type shadowFollows int

const (
	shadowRenewed  shadowFollows = iota // a renewal: the shadow's lease follows
	shadowReleased                      // a release: the shadow goes
	shadowHeld                          // BeginExternal, UNKNOWN: in progress without a lease
)

// followShadow makes the shadow follow a fenced write that succeeded
// (applied): one more conditional write on the shadow, fenced on the
// attempt's token, when the event has a Powertools key. A shadow that is
// not this attempt's (none was written: the claim came after the window
// closed) is left alone. A follow refused because the shadow no longer
// names the attempt is errShadowTaken (the write must answer as refused).
// Any other failure is returned, for the write that
// must not look done without it: a renewal whose shadow kept its old lease
// (Powertools may claim the key at that lease while the owner, renewed,
// runs on), or an external mark whose shadow is still leased (Powertools
// may run the operation again while the external call is in flight). A
// release ignores it: the shadow then keeps its last lease, which
// Powertools honours until it lapses.
func (s *Store) followShadow(ctx context.Context, what shadowFollows, key, token string, applied bool, hold, expires time.Time) error {
	ev, ok := s.powertoolsFor(ctx, time.Time{})
	if !ok || !applied || !ev.shadow.Load() {
		return nil
	}
	values := map[string]types.AttributeValue{":token": str(token)}
	var call func() error
	switch what {
	case shadowReleased:
		in := &dynamodb.DeleteItemInput{
			TableName: aws.String(s.table), Key: s.shadowKey(ev),
			ConditionExpression:       aws.String(shadowFenceCondition),
			ExpressionAttributeNames:  s.shadowNames(shadowFenceCondition),
			ExpressionAttributeValues: values,
		}
		call = func() error { _, err := s.client.DeleteItem(ctx, in); return err }
	case shadowRenewed, shadowHeld:
		update := shadowRenewUpdate
		values[":expiration"] = num(expires.Unix())
		if what == shadowHeld {
			update = shadowHoldUpdate
		} else {
			values[":hold"] = num(hold.UnixMilli())
		}
		in := &dynamodb.UpdateItemInput{
			TableName: aws.String(s.table), Key: s.shadowKey(ev),
			ConditionExpression:       aws.String(shadowFenceCondition),
			UpdateExpression:          aws.String(update),
			ExpressionAttributeNames:  s.shadowNames(shadowFenceCondition, update),
			ExpressionAttributeValues: values,
		}
		call = func() error { _, err := s.client.UpdateItem(ctx, in); return err }
	}
	followed, err := fenced("shadow", s.single(ctx, "shadow", s.opts.ConflictRetries, call))
	if err == nil && !followed && what != shadowReleased {
		return errShadowTaken
	}
	return err
}

// errShadowTaken: the shadow this attempt wrote no longer names it (a
// Powertools instance claimed the key once the shadow's lease had lapsed,
// before the follow landed: the cutover model's finding C2). The owner
// must not run on: Renew and MarkExternal answer as for a lost lease.
var errShadowTaken = errors.New("dynamostore: the Powertools key no longer names this attempt")
