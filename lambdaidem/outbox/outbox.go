package outbox

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/lambdaidem/lambdaidem/internal/jsonname"
	"github.com/lambdaidem/lambdaidem/lambdaidem"
)

// Errors of staging and publishing.
var (
	// ErrInvalidMessage: a staged message lacks what its target needs, or
	// has what it does not allow. Nothing was staged.
	ErrInvalidMessage = errors.New("outbox: invalid message")
	// ErrWindowPassed: the message's deduplication window has passed since
	// its first dispatch, so sending it again could reach a target that no
	// longer remembers its id. The relay refuses; the message stays
	// unpublished for an operator (see [Window]).
	ErrWindowPassed = errors.New("outbox: the target's deduplication window has passed since the first dispatch")
	// ErrUnpublishable: the target refuses the message, and would refuse
	// it every time (invalid content, a target that does not exist, no
	// permission). A Publisher wraps it in such an error; the relay then
	// sets the message aside instead of retrying it (see dynamostore/relay).
	ErrUnpublishable = errors.New("outbox: the target refuses the message every time")
)

// IDAttribute is the name under which a message that its target does not
// deduplicate carries its [Message.ID]: a String message attribute of a
// standard SQS or SNS message, a top-level string field of an EventBridge
// event's detail. A consumer wrapped by lambdaidem keys on it
// (sqsbatch.KeyFromAttribute(outbox.IDAttribute)).
const IDAttribute = "lambdaidem-message-id"

// FIFOWindow is how long SQS FIFO queues and SNS FIFO topics remember a
// deduplication id: five minutes, fixed by AWS
// (https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/using-messagededuplicationid-property.html).
const FIFOWindow = 5 * time.Minute

// maxAttributes is how many message attributes SQS accepts on one
// message (and SNS delivers to an SQS subscription with raw message
// delivery); IDAttribute takes one of them on a standard queue or topic.
const maxAttributes = 10

// Kind names the service a message goes to.
type Kind string

// The kinds of message.
const (
	KindSQS         Kind = "sqs"
	KindSQSFIFO     Kind = "sqs-fifo"
	KindSNS         Kind = "sns"
	KindSNSFIFO     Kind = "sns-fifo"
	KindEventBridge Kind = "eventbridge"
	KindItem        Kind = "item"
)

// Message is a staged message as the store commits it and the relay hands
// it to a [Publisher].
type Message struct {
	// ID is derived from the operation key and Position: the same for every
	// attempt at the operation (see [ID]).
	ID string
	// Position is the message's index among the messages its operation
	// staged, from 0; the relay publishes them in this order.
	Position int
	// Kind names the target service.
	Kind Kind
	// Target is the queue URL (SQS), the topic ARN (SNS), the event bus name
	// or ARN (EventBridge; "" is the default bus), or the generic item's
	// destination.
	Target string
	// Body is the SQS message body, the SNS message, the EventBridge
	// event's detail (with [IDAttribute] added), or the item's payload.
	Body string
	// Subject is the SNS subject.
	Subject string
	// GroupID is the message group of a FIFO target.
	GroupID string
	// Attributes are String message attributes (SQS, SNS) or the item's
	// attributes; for standard SQS and SNS they include [IDAttribute].
	Attributes map[string]string
	// Source and DetailType are the EventBridge event's.
	Source, DetailType string
	// Delay is the SQS delivery delay of a standard queue's message.
	Delay time.Duration
	// Window is how long the target deduplicates the ID; zero when no limit
	// is known. See [Window].
	Window time.Duration
}

// SQS is a message to a standard SQS queue. Standard queues do not
// deduplicate: the message carries its ID as the message attribute
// [IDAttribute], for the consumer.
type SQS struct {
	QueueURL string
	Body     string
	// Attributes are String message attributes, at most 9 (SQS allows 10;
	// IDAttribute is one).
	Attributes map[string]string
	// Delay postpones delivery, at most 15 minutes.
	Delay time.Duration
	// Window is how long the consumer deduplicates the ID (its retry
	// horizon), if it is bounded: the relay never sends the message again
	// once it has passed since the first dispatch. Zero: no bound.
	Window time.Duration
}

// SQSFIFO is a message to an SQS FIFO queue (its URL ends in ".fifo"). The
// relay sends its ID as the MessageDeduplicationId; its window is
// [FIFOWindow].
type SQSFIFO struct {
	QueueURL string
	// GroupID is the message group, required; messages of one group are
	// delivered in order.
	GroupID string
	Body    string
	// Attributes are String message attributes, at most 10 (the ID is
	// the deduplication id, not an attribute).
	Attributes map[string]string
}

// SNS is a message to a standard SNS topic. It carries its ID as the
// message attribute [IDAttribute].
type SNS struct {
	TopicARN   string
	Message    string
	Subject    string
	Attributes map[string]string
	// Window: as for [SQS].
	Window time.Duration
}

// SNSFIFO is a message to an SNS FIFO topic (its ARN ends in ".fifo"). The
// relay sends its ID as the MessageDeduplicationId; its window is
// [FIFOWindow].
type SNSFIFO struct {
	TopicARN   string
	GroupID    string
	Message    string
	Subject    string
	Attributes map[string]string
}

// EventBridge is an event for an EventBridge event bus. EventBridge does
// not deduplicate: the ID is added to the detail as the top-level field
// [IDAttribute].
type EventBridge struct {
	// EventBus is the bus's name or ARN; "" is the account's default bus.
	EventBus string
	// Source names the event's origin; it may not start with "aws.".
	Source string
	// DetailType classifies the event, at most 128 characters.
	DetailType string
	// Detail is the event's detail, a JSON object.
	Detail string
	// Window: as for [SQS].
	Window time.Duration
}

// Item is a generic message for a relay of your own: committed like the
// others, handed to the relay's Publisher as a [Message] of kind
// [KindItem].
type Item struct {
	Target     string
	Body       string
	Attributes map[string]string
	Window     time.Duration
}

// Target is a message that [Stage] accepts.
type Target interface {
	SQS | SQSFIFO | SNS | SNSFIFO | EventBridge | Item
}

// Stage stages t to be committed with the idempotency record of the
// wrapped invocation in ctx and the business writes it staged: all of them,
// or none. It returns the message's ID. Nothing is sent now: a relay
// publishes the message once the commit succeeded.
//
// Stage fails with an error matching lambdaidem.ErrNoAttempt outside a
// wrapped invocation, and with one matching [ErrInvalidMessage] when t
// lacks what its target needs (see each type). The maps of t are copied.
// The store must know where outbox messages go (dynamostore's
// Options.OutboxTable), or the commit fails.
func Stage[T Target](ctx context.Context, t T) (string, error) {
	m, err := message(any(t))
	if err != nil {
		return "", fmt.Errorf("outbox: stage %s message: %w", m.Kind, err)
	}
	a, ok := lambdaidem.AttemptFrom(ctx)
	if !ok {
		return "", fmt.Errorf("outbox: stage %s message: %w", m.Kind, lambdaidem.ErrNoAttempt)
	}
	err = a.StageWith(func(staged []any) (any, error) {
		for _, e := range staged {
			if _, ok := e.(Message); ok {
				m.Position++
			}
		}
		m.ID = ID(a.OperationKey(), a.Since(), m.Position)
		if err := m.stamp(); err != nil {
			return nil, err
		}
		if err := m.fits(); err != nil {
			return nil, err
		}
		return m, nil
	})
	if err != nil {
		return "", fmt.Errorf("outbox: stage %s message: %w", m.Kind, err)
	}
	return m.ID, nil
}

// ID is the id of the message at position among those staged by the
// operation with the downstream key operationKey (lambdaidem.Attempt's
// OperationKey) first claimed at since (Attempt.Since): the operation key,
// the claim's time in milliseconds (base 36) and the position, joined by
// hyphens. Every attempt under one record (a takeover keeps its creation
// time) stages the same ids; a new operation under a key reused after its
// record expired gets new ones, so that a consumer that remembers ids
// longer than the record lived never drops it. It is at most 64 characters
// of [A-Za-z0-9_-], valid as an SQS or SNS deduplication id.
func ID(operationKey string, since time.Time, position int) string {
	return operationKey + "-" + strconv.FormatInt(since.UnixMilli(), 36) + "-" + strconv.Itoa(position)
}

// The documented limits of the targets that Stage checks. Each rule is
// one a target applies to every request, so a message that breaks it could
// never be published.
const (
	// MaxSQSSize is the largest SQS message, its body and every message
	// attribute's name, type and value counted: 1 MiB (SendMessage,
	// https://docs.aws.amazon.com/AWSSimpleQueueService/latest/APIReference/API_SendMessage.html;
	// a queue may be configured for less, which Stage cannot know).
	MaxSQSSize = 1 << 20
	// MaxSNSSize is the largest SNS message, attributes included: 256 KB,
	// 262,144 bytes (Publish,
	// https://docs.aws.amazon.com/sns/latest/api/API_Publish.html).
	MaxSNSSize = 256 << 10
	// MaxEventBridgeSize bounds an EventBridge entry as PutEvents counts
	// it (Source, DetailType and Detail in UTF-8 bytes;
	// https://docs.aws.amazon.com/eventbridge/latest/userguide/eb-putevent-size.html):
	// 1 MB since January 2026 (AWS Compute Blog, "More room to build:
	// serverless services now support payloads up to 1 MB", which raised
	// EventBridge event buses with SQS and asynchronous Lambda; the user
	// guide page still says 256 KB). Read as 1,000,000 bytes, the lower of
	// the two readings of "1 MB": Stage must never let through an entry
	// PutEvents refuses.
	MaxEventBridgeSize = 1_000_000
	// maxSubject: an SNS subject is "less than 100 characters long", with
	// no line breaks or control characters (Publish).
	maxSubject = 100
	// maxGroupID: a FIFO MessageGroupId has up to 128 characters, each
	// alphanumeric or punctuation (SendMessage, Publish).
	maxGroupID = 128
	// maxDetailType: an EventBridge DetailType is a "free-form string,
	// with a maximum of 128 characters" (PutEventsRequestEntry,
	// https://docs.aws.amazon.com/eventbridge/latest/APIReference/API_PutEventsRequestEntry.html).
	maxDetailType = 128
	// maxDetailDepth: "PutEvents will only process nested JSON up to
	// 1100 levels deep" (PutEvents). Stage counts the outermost object as
	// a level and refuses only what no reading of that sentence admits
	// (more than 1101), so that it never refuses what EventBridge takes.
	maxDetailDepth = 1101
	// reservedSource: an EventBridge Source starting so is AWS's own; a
	// custom event with it is refused (PutEventsRequestEntry).
	reservedSource = "aws."
	// maxAttributeName: a message attribute's name has up to 256
	// characters (SQS and SNS message attributes).
	maxAttributeName = 256
	// attributeType is the data type the publisher gives every attribute,
	// counted in the message's size.
	attributeType = "String"
)

// message validates a target and returns it as a Message without its ID.
// Each refusal names the rule.
func message(t any) (Message, error) {
	var m Message
	invalid := func(format string, args ...any) error {
		return fmt.Errorf("%w: %s", ErrInvalidMessage, fmt.Sprintf(format, args...))
	}
	switch t := t.(type) {
	case SQS:
		m = Message{Kind: KindSQS, Target: t.QueueURL, Body: t.Body, Attributes: maps.Clone(t.Attributes), Delay: t.Delay, Window: t.Window}
		switch {
		case strings.HasSuffix(t.QueueURL, ".fifo"):
			return m, invalid("the queue %s is a FIFO queue: stage an outbox.SQSFIFO", t.QueueURL)
		case t.Delay < 0 || t.Delay > 15*time.Minute:
			return m, invalid("delay %s: SQS allows 0 to 15 minutes", t.Delay)
		}
	case SQSFIFO:
		m = Message{Kind: KindSQSFIFO, Target: t.QueueURL, Body: t.Body, GroupID: t.GroupID, Attributes: maps.Clone(t.Attributes), Window: FIFOWindow}
		if !strings.HasSuffix(t.QueueURL, ".fifo") {
			return m, invalid("the queue %q is not a FIFO queue (its name does not end in .fifo)", t.QueueURL)
		}
	case SNS:
		m = Message{Kind: KindSNS, Target: t.TopicARN, Body: t.Message, Subject: t.Subject, Attributes: maps.Clone(t.Attributes), Window: t.Window}
		if strings.HasSuffix(t.TopicARN, ".fifo") {
			return m, invalid("the topic %s is a FIFO topic: stage an outbox.SNSFIFO", t.TopicARN)
		}
	case SNSFIFO:
		m = Message{Kind: KindSNSFIFO, Target: t.TopicARN, Body: t.Message, Subject: t.Subject, GroupID: t.GroupID, Attributes: maps.Clone(t.Attributes), Window: FIFOWindow}
		if !strings.HasSuffix(t.TopicARN, ".fifo") {
			return m, invalid("the topic %q is not a FIFO topic (its name does not end in .fifo)", t.TopicARN)
		}
	case EventBridge:
		m = Message{Kind: KindEventBridge, Target: t.EventBus, Body: t.Detail, Source: t.Source, DetailType: t.DetailType, Window: t.Window}
		switch {
		case t.Source == "":
			return m, invalid("an EventBridge event needs a Source")
		case t.DetailType == "":
			return m, invalid("an EventBridge event needs a DetailType")
		case utf8.RuneCountInString(t.DetailType) > maxDetailType:
			return m, invalid("DetailType has %d characters; EventBridge allows %d", utf8.RuneCountInString(t.DetailType), maxDetailType)
		case strings.HasPrefix(t.Source, reservedSource):
			return m, invalid("Source %q: the prefix %q is reserved for AWS services' events", t.Source, reservedSource)
		}
	case Item:
		m = Message{Kind: KindItem, Target: t.Target, Body: t.Body, Attributes: maps.Clone(t.Attributes), Window: t.Window}
	}
	sqs := m.Kind == KindSQS || m.Kind == KindSQSFIFO
	fifo := m.Kind == KindSQSFIFO || m.Kind == KindSNSFIFO
	switch {
	case m.Target == "" && m.Kind != KindEventBridge:
		return m, invalid("a %s message needs a target", m.Kind)
	case m.Body == "":
		return m, invalid("a %s message needs a body", m.Kind)
	case !utf8.ValidString(m.Body):
		return m, invalid("the body is not valid UTF-8")
	case sqs && !xmlChars(m.Body):
		return m, invalid("the body holds a character SQS does not allow (%s)", sqsCharset)
	case fifo && m.GroupID == "":
		return m, invalid("a %s message needs a GroupID", m.Kind)
	case fifo && !groupID(m.GroupID):
		return m, invalid("GroupID %q: a FIFO group id has 1 to %d characters, each alphanumeric or ASCII punctuation (no space)", m.GroupID, maxGroupID)
	case utf8.RuneCountInString(m.Subject) >= maxSubject:
		return m, invalid("Subject has %d characters; SNS allows fewer than %d", utf8.RuneCountInString(m.Subject), maxSubject)
	case !utf8.ValidString(m.Subject) || strings.IndexFunc(m.Subject, unicode.IsControl) >= 0:
		return m, invalid("Subject holds a line break or a control character, which SNS does not allow")
	case m.Window < 0:
		return m, invalid("negative window %s", m.Window)
	case fifo && len(m.Attributes) > maxAttributes:
		// The relay sends a FIFO message's ID as its deduplication id,
		// not as an attribute: all of them are the caller's.
		return m, invalid("%d message attributes; the service allows %d", len(m.Attributes), maxAttributes)
	case !fifo && m.Kind != KindItem && len(m.Attributes) > maxAttributes-1:
		return m, invalid("%d message attributes; at most %d (the service allows %d, and %s is one)", len(m.Attributes), maxAttributes-1, maxAttributes, IDAttribute)
	}
	if _, ok := m.Attributes[IDAttribute]; ok {
		return m, invalid("the attribute %s is the relay's", IDAttribute)
	}
	if m.Kind != KindItem {
		for _, name := range slices.Sorted(maps.Keys(m.Attributes)) {
			if err := attribute(name, m.Attributes[name], sqs); err != nil {
				return m, invalid("%v", err)
			}
		}
	}
	if m.Kind == KindEventBridge {
		var detail map[string]json.RawMessage
		if err := json.Unmarshal([]byte(m.Body), &detail); err != nil || detail == nil {
			return m, invalid("the detail is not a JSON object")
		}
		if d := depth(m.Body); d > maxDetailDepth {
			return m, invalid("the detail is nested %d levels deep; EventBridge processes at most %d", d, maxDetailDepth-1)
		}
		for name := range detail {
			// A consumer decoding the detail with encoding/json reads a
			// name that folds to the relay's field as that field.
			if jsonname.Match(name, IDAttribute) {
				return m, invalid("the detail's field %q is the relay's %s (JSON names match regardless of case)", name, IDAttribute)
			}
		}
	}
	return m, nil
}

// depth is how deeply the valid JSON text s nests objects and arrays, the
// outermost counted as 1.
func depth(s string) int {
	d, most, inString := 0, 0, false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case inString && c == '\\':
			i++ // the escaped character
		case c == '"':
			inString = !inString
		case inString:
		case c == '{' || c == '[':
			d++
			most = max(most, d)
		case c == '}' || c == ']':
			d--
		}
	}
	return most
}

// sqsCharset is the characters SQS allows in a message body and a String
// attribute value (SendMessage): XML 1.0's Char production.
const sqsCharset = "#x9 | #xA | #xD | #x20 to #xD7FF | #xE000 to #xFFFD | #x10000 to #x10FFFF"

// xmlChars reports whether every rune of s is in [sqsCharset].
func xmlChars(s string) bool {
	for _, r := range s {
		switch {
		case r == 0x9, r == 0xA, r == 0xD:
		case r >= 0x20 && r <= 0xD7FF, r >= 0xE000 && r <= 0xFFFD, r >= 0x10000 && r <= 0x10FFFF:
		default:
			return false
		}
	}
	return true
}

// groupID reports whether s is a valid FIFO MessageGroupId (and
// MessageDeduplicationId): 1 to 128 characters, each alphanumeric or
// punctuation, which is ASCII's printable range without the space.
func groupID(s string) bool {
	if s == "" || len(s) > maxGroupID {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < 0x21 || s[i] > 0x7E {
			return false
		}
	}
	return true
}

// attribute checks one String message attribute of SQS or SNS: the name
// has 1 to 256 characters of A-Za-z0-9, _, - and ., starts with neither
// "AWS." nor "Amazon." in any case, neither starts nor ends with a period
// and has no two in a row; the value is not empty and is valid UTF-8, and
// for SQS holds only the body's characters.
func attribute(name, value string, sqs bool) error {
	switch {
	case name == "" || len(name) > maxAttributeName:
		return fmt.Errorf("attribute name %q: 1 to %d characters", name, maxAttributeName)
	case strings.IndexFunc(name, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-' || r == '.')
	}) >= 0:
		return fmt.Errorf("attribute name %q: only A-Z, a-z, 0-9, the underscore, the hyphen and the period", name)
	case strings.HasPrefix(strings.ToLower(name), "aws.") || strings.HasPrefix(strings.ToLower(name), "amazon."):
		return fmt.Errorf("attribute name %q: the prefixes AWS. and Amazon. are reserved", name)
	case strings.HasPrefix(name, ".") || strings.HasSuffix(name, ".") || strings.Contains(name, ".."):
		return fmt.Errorf("attribute name %q: no period first, last or twice in a row", name)
	case value == "":
		return fmt.Errorf("attribute %s: an empty value is refused", name)
	case !utf8.ValidString(value):
		return fmt.Errorf("attribute %s: the value is not valid UTF-8", name)
	case sqs && !xmlChars(value):
		return fmt.Errorf("attribute %s: the value holds a character SQS does not allow (%s)", name, sqsCharset)
	}
	return nil
}

// fits checks the size of a message with its ID in place, as its target
// counts it, and the ID as a FIFO deduplication id.
func (m *Message) fits() error {
	invalid := func(format string, args ...any) error {
		return fmt.Errorf("%w: %s", ErrInvalidMessage, fmt.Sprintf(format, args...))
	}
	size := len(m.Body)
	for name, value := range m.Attributes {
		size += len(name) + len(attributeType) + len(value)
	}
	switch m.Kind {
	case KindSQS, KindSQSFIFO:
		if size > MaxSQSSize {
			return invalid("%d bytes with the attributes; SQS allows %d", size, MaxSQSSize)
		}
	case KindSNS, KindSNSFIFO:
		if size > MaxSNSSize {
			return invalid("%d bytes with the attributes; SNS allows %d", size, MaxSNSSize)
		}
	case KindEventBridge:
		if n := len(m.Source) + len(m.DetailType) + len(m.Body); n >= MaxEventBridgeSize {
			return invalid("the entry has %d bytes (source, detail type and detail with %s); EventBridge allows less than %d", n, IDAttribute, MaxEventBridgeSize)
		}
	}
	if !groupID(m.ID) {
		return invalid("message id %q is not a valid deduplication id", m.ID)
	}
	return nil
}

// stamp puts the message's ID where a target that does not deduplicate
// carries it.
func (m *Message) stamp() error {
	switch m.Kind {
	case KindSQS, KindSNS:
		if m.Attributes == nil {
			m.Attributes = map[string]string{}
		}
		m.Attributes[IDAttribute] = m.ID
	case KindEventBridge:
		body := strings.TrimLeft(m.Body, " \t\r\n")
		id, err := json.Marshal(m.ID)
		if err != nil {
			return err
		}
		rest := strings.TrimLeft(body[1:], " \t\r\n")
		sep := ","
		if strings.HasPrefix(rest, "}") {
			sep = ""
		}
		m.Body = `{"` + IDAttribute + `":` + string(id) + sep + rest
	}
	return nil
}

// Publisher sends committed messages to their targets. Publish sends m
// once, with its ID as the deduplication id of a FIFO target; it must be
// safe for concurrent use. An error means the message may or may not have
// been sent: the relay sends it again later, with the same ID.
type Publisher interface {
	Publish(ctx context.Context, m Message) error
}

// PublisherFunc adapts a function to a [Publisher].
type PublisherFunc func(ctx context.Context, m Message) error

// Publish calls f.
func (f PublisherFunc) Publish(ctx context.Context, m Message) error { return f(ctx, m) }

// Window reports whether m may be dispatched at now, given the time of
// its first dispatch (zero if it has never been dispatched): [Lands] with
// no margin, for a dispatch that takes no time on a clock that does not
// drift.
func Window(m Message, firstDispatch, now time.Time) error {
	return Lands(m, firstDispatch, now, 0)
}

// Lands reports whether a dispatch of m begun at now, which may take
// margin to land (lambdaidem.WindowMargin: the clock skew plus the
// publish's timeout with its retries), still lands inside the target's
// deduplication window: always for the first dispatch (firstDispatch is
// zero) and for a target without a window; a redispatch only while now +
// margin is before firstDispatch + [Message.Window]. Otherwise it fails
// with [ErrWindowPassed]. The relay asks it before every publish; the rule
// is the gate's, lambdaidem.WithinWindow, which the core asks when a
// reconcile function answers "not done".
func Lands(m Message, firstDispatch, now time.Time, margin time.Duration) error {
	if lambdaidem.WithinWindow(firstDispatch, m.Window, now, margin) {
		return nil
	}
	return fmt.Errorf("%w: message %s first dispatched at %s, its target deduplicates for %s, and a publish at %s may take %s to land",
		ErrWindowPassed, m.ID, firstDispatch.UTC().Format(time.RFC3339), m.Window, now.UTC().Format(time.RFC3339), margin)
}
