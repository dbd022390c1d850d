// Package outboxitem is the layout of an outbox table's item, shared by
// dynamostore, which writes it with a commit, and dynamostore/relay, which
// publishes and marks it.
//
// One item holds the messages of one commit, keyed by the record key:
//
//	id            S  the record key (the table's partition key)
//	status        S  PENDING until every message is published, then PUBLISHED
//	published     N  how many messages (in position order) are published
//	messages      L  the messages, each a map (see [Encode])
//	committed_at  N  Unix milliseconds of the commit
//	dispatched_at N  Unix milliseconds of the first dispatch of messages[published], for targets with a window
//	expiration    N  Unix seconds; written only with PUBLISHED: the table's TTL attribute
//	set_aside     S  on an item whose message the relay set aside: the key of the copy
//
// An item without expiration (every unpublished one) never expires.
//
// A message that cannot be published (its target refuses it every time,
// or its window has passed) is set aside so that it never blocks its
// record key: the relay copies the item, from that message on, to the key
// [AsideKey] with status SET_ASIDE and
//
//	record        S  the record key of the commit
//	reason        S  why the message was set aside
//	set_aside_at  N  Unix milliseconds
//
// and marks the original PUBLISHED with set_aside naming the copy, so that
// a later commit under the record key (of this version or of v0.2.0, whose
// condition admits a PUBLISHED item) is not refused. An operator lists the
// copies, and releases one (back to PENDING: the relay publishes it) or
// discards it (PUBLISHED, with a TTL). A copy that fails again is set aside
// in place.
package outboxitem

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/lambdaidem/lambdaidem/lambdaidem/outbox"
)

// The attribute names of an outbox item.
const (
	KeyAttr          = "id"
	StatusAttr       = "status"
	PublishedAttr    = "published"
	MessagesAttr     = "messages"
	CommittedAtAttr  = "committed_at"
	DispatchedAtAttr = "dispatched_at"
	ExpirationAttr   = "expiration"
	SetAsideAttr     = "set_aside"
	RecordAttr       = "record"
	ReasonAttr       = "reason"
	SetAsideAtAttr   = "set_aside_at"
)

// The values of StatusAttr.
const (
	Pending   = "PENDING"
	Published = "PUBLISHED"
	SetAside  = "SET_ASIDE"
)

// AsideKey is the key of the copy of the item under key, committed at
// committedAt, that holds its set-aside messages. It never meets a record
// key: those end in a hash of 43 characters, this in "#aside#" and the
// commit's time.
func AsideKey(key string, committedAt time.Time) string {
	return key + "#aside#" + strconv.FormatInt(committedAt.UnixMilli(), 36)
}

// MaxReason bounds the reason stored on a set-aside item.
const MaxReason = 1000

// MaxItemSize is DynamoDB's limit on one item, 400 KB.
const MaxItemSize = 400 << 10

// Names binds the name placeholders that the expressions use: DynamoDB
// refuses a request that binds one it does not use.
func Names(expressions ...string) map[string]string {
	all := map[string]string{
		"#id": KeyAttr, "#status": StatusAttr, "#published": PublishedAttr,
		"#dispatched": DispatchedAtAttr, "#expiration": ExpirationAttr,
		"#movedTo": SetAsideAttr, "#record": RecordAttr, "#reason": ReasonAttr, "#setAsideAt": SetAsideAtAttr,
		"#messages": MessagesAttr, "#committed": CommittedAtAttr,
	}
	names := make(map[string]string, len(all))
	for p, name := range all {
		for _, x := range expressions {
			if strings.Contains(x, p) {
				names[p] = name
			}
		}
	}
	return names
}

// The outbox's expressions, each said once.
const (
	// PutCondition admits a commit's outbox item: none under the record
	// key, or one whose messages are all published (a record that expired
	// and ran again). An unpublished item is never overwritten.
	PutCondition = "attribute_not_exists(#id) OR #status = :published"

	// atPosition: the item is unpublished, the relay has published exactly
	// :position of its messages, and it is the item of the commit the relay
	// read (:committed): a relay that stalled must not move the item a
	// later operation under the same record key committed (the outbox
	// model's finding O2).
	atPosition = "#status = :pending AND #published = :position AND #committed = :committed"

	// DispatchCondition admits recording the first dispatch of the message
	// at :position.
	DispatchCondition = atPosition + " AND attribute_not_exists(#dispatched)"
	// DispatchUpdate records it.
	DispatchUpdate = "SET #dispatched = :nowMs"

	// MarkCondition admits marking the message at :position published.
	MarkCondition = atPosition
	// MarkUpdate marks a message that is not the last published.
	MarkUpdate = "SET #published = :next REMOVE #dispatched"
	// MarkLastUpdate marks the last message published: the item is done
	// and may now expire.
	MarkLastUpdate = "SET #published = :next, #status = :published, #expiration = :expiration REMOVE #dispatched"

	// AsideCondition admits writing the copy of a set-aside item: none
	// yet (a relay that set it aside before crashed before the mark).
	AsideCondition = "attribute_not_exists(#id)"
	// AsideUpdate writes the copy (an UpdateItem creates it).
	AsideUpdate = "SET #status = :setAsideStatus, #record = :record, #published = :position, #messages = :messages, " +
		"#committed = :committed, #reason = :reason, #setAsideAt = :nowMs"
	// AsideDispatchedUpdate writes the copy of an item whose message was
	// dispatched: its window goes on counting from that first dispatch.
	AsideDispatchedUpdate = AsideUpdate + ", #dispatched = :dispatched"
	// MovedCondition admits marking the original moved: as MarkCondition.
	MovedCondition = atPosition
	// MovedUpdate marks the original done, naming its copy: it may expire,
	// and a later commit under the record key may replace it.
	MovedUpdate = "SET #status = :published, #expiration = :expiration, #movedTo = :asideKey REMOVE #dispatched"
	// SetAsideInPlaceUpdate sets a copy (released, then refused again)
	// aside where it is, under MovedCondition.
	SetAsideInPlaceUpdate = "SET #status = :setAsideStatus, #reason = :reason, #setAsideAt = :nowMs"
	// SetAsideRefusedInPlaceUpdate does it for a message its target
	// refused: it was not delivered, so its dispatch is forgotten.
	SetAsideRefusedInPlaceUpdate = SetAsideInPlaceUpdate + " REMOVE #dispatched"

	// ReleaseCondition admits an operator's release or discard of a
	// set-aside item: it is still set aside, as the operator read it.
	ReleaseCondition = "#status = :setAsideStatus AND #setAsideAt = :setAsideAt"
	// ReleaseUpdate gives it back to the relay, keeping the first dispatch
	// (its window still holds).
	ReleaseUpdate = "SET #status = :pending REMOVE #reason, #setAsideAt"
	// ReleaseResendUpdate gives it back forgetting the first dispatch: the
	// operator accepts that a target whose window has passed may deliver
	// the message twice.
	ReleaseResendUpdate = "SET #status = :pending REMOVE #reason, #setAsideAt, #dispatched"
	// DiscardUpdate gives it up: published without being sent, it expires.
	DiscardUpdate = "SET #status = :published, #expiration = :expiration"
)

// Item is a decoded outbox item.
type Item struct {
	Key          string
	Status       string
	Published    int
	Messages     []outbox.Message
	CommittedAt  time.Time
	DispatchedAt time.Time // zero when absent
	// Record, Reason and SetAsideAt: of a set-aside copy ("" and zero
	// otherwise); SetAside: of an original, its copy's key.
	Record, Reason, SetAside string
	SetAsideAt               time.Time
}

// EncodeMessages renders messages as the item's messages list.
func EncodeMessages(messages []outbox.Message) types.AttributeValue {
	return Encode("", messages, time.Time{})[MessagesAttr]
}

// Encode renders the outbox item of a commit of key at now.
func Encode(key string, messages []outbox.Message, now time.Time) map[string]types.AttributeValue {
	list := make([]types.AttributeValue, len(messages))
	for i, m := range messages {
		mm := map[string]types.AttributeValue{"id": S(m.ID), "kind": S(string(m.Kind)), "body": S(m.Body)}
		set := func(name, v string) {
			if v != "" {
				mm[name] = S(v)
			}
		}
		set("target", m.Target)
		set("subject", m.Subject)
		set("group", m.GroupID)
		set("source", m.Source)
		set("detail_type", m.DetailType)
		if m.Delay > 0 {
			mm["delay_ms"] = N(m.Delay.Milliseconds())
		}
		if m.Window > 0 {
			mm["window_ms"] = N(m.Window.Milliseconds())
		}
		if len(m.Attributes) > 0 {
			attrs := make(map[string]types.AttributeValue, len(m.Attributes))
			for k, v := range m.Attributes {
				attrs[k] = S(v)
			}
			mm["attrs"] = &types.AttributeValueMemberM{Value: attrs}
		}
		list[i] = &types.AttributeValueMemberM{Value: mm}
	}
	return map[string]types.AttributeValue{
		KeyAttr:         S(key),
		StatusAttr:      S(Pending),
		PublishedAttr:   N(0),
		MessagesAttr:    &types.AttributeValueMemberL{Value: list},
		CommittedAtAttr: N(now.UnixMilli()),
	}
}

var errMalformed = errors.New("outboxitem: malformed outbox item")

// Decode reads an outbox item.
func Decode(item map[string]types.AttributeValue) (Item, error) {
	bad := func(format string, args ...any) (Item, error) {
		return Item{}, fmt.Errorf("%w: %s", errMalformed, fmt.Sprintf(format, args...))
	}
	var it Item
	var ok bool
	if it.Key, ok = str(item[KeyAttr]); !ok {
		return bad("no %s", KeyAttr)
	}
	if it.Status, ok = str(item[StatusAttr]); !ok || it.Status != Pending && it.Status != Published && it.Status != SetAside {
		return bad("status %q", it.Status)
	}
	n, ok := number(item[PublishedAttr])
	if !ok || n < 0 {
		return bad("no %s", PublishedAttr)
	}
	it.Published = int(n)
	ms, ok := number(item[CommittedAtAttr])
	if !ok {
		return bad("no %s", CommittedAtAttr)
	}
	it.CommittedAt = time.UnixMilli(ms)
	if ms, ok := number(item[DispatchedAtAttr]); ok {
		it.DispatchedAt = time.UnixMilli(ms)
	}
	it.Record, _ = str(item[RecordAttr])
	it.Reason, _ = str(item[ReasonAttr])
	it.SetAside, _ = str(item[SetAsideAttr])
	if ms, ok := number(item[SetAsideAtAttr]); ok {
		it.SetAsideAt = time.UnixMilli(ms)
	}
	list, ok := item[MessagesAttr].(*types.AttributeValueMemberL)
	if !ok {
		return bad("no %s", MessagesAttr)
	}
	for i, v := range list.Value {
		mm, ok := v.(*types.AttributeValueMemberM)
		if !ok {
			return bad("message %d is not a map", i)
		}
		m := outbox.Message{Position: i}
		get := func(name string) string { s, _ := str(mm.Value[name]); return s }
		m.ID, m.Kind, m.Body = get("id"), outbox.Kind(get("kind")), get("body")
		m.Target, m.Subject, m.GroupID = get("target"), get("subject"), get("group")
		m.Source, m.DetailType = get("source"), get("detail_type")
		if ms, ok := number(mm.Value["delay_ms"]); ok {
			m.Delay = time.Duration(ms) * time.Millisecond
		}
		if ms, ok := number(mm.Value["window_ms"]); ok {
			m.Window = time.Duration(ms) * time.Millisecond
		}
		if attrs, ok := mm.Value["attrs"].(*types.AttributeValueMemberM); ok {
			m.Attributes = make(map[string]string, len(attrs.Value))
			for k, v := range attrs.Value {
				m.Attributes[k], _ = str(v)
			}
		}
		if m.ID == "" || m.Kind == "" {
			return bad("message %d has no id or kind", i)
		}
		it.Messages = append(it.Messages, m)
	}
	if it.Published > len(it.Messages) {
		return bad("%d published of %d messages", it.Published, len(it.Messages))
	}
	return it, nil
}

// S is a String attribute value.
func S(s string) types.AttributeValue { return &types.AttributeValueMemberS{Value: s} }

// N is a Number attribute value.
func N(n int64) types.AttributeValue {
	return &types.AttributeValueMemberN{Value: strconv.FormatInt(n, 10)}
}

func str(v types.AttributeValue) (string, bool) {
	s, ok := v.(*types.AttributeValueMemberS)
	if !ok {
		return "", false
	}
	return s.Value, true
}

func number(v types.AttributeValue) (int64, bool) {
	n, ok := v.(*types.AttributeValueMemberN)
	if !ok {
		return 0, false
	}
	i, err := strconv.ParseInt(n.Value, 10, 64)
	return i, err == nil
}
