package outbox

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

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

// maxAttributes is how many message attributes SQS and SNS accept on one
// message; IDAttribute takes one of them.
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
	GroupID    string
	Body       string
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
	EventBus   string
	Source     string
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
		m.ID = ID(a.OperationKey(), m.Position)
		if err := m.stamp(); err != nil {
			return nil, err
		}
		return m, nil
	})
	if err != nil {
		return "", fmt.Errorf("outbox: stage %s message: %w", m.Kind, err)
	}
	return m.ID, nil
}

// ID is the id of the message at position among those an operation
// staged: its operation key, a hyphen and the position. It is at most 64
// characters of [A-Za-z0-9_-], valid as an SQS or SNS deduplication id.
func ID(operationKey string, position int) string {
	return operationKey + "-" + strconv.Itoa(position)
}

// message validates a target and returns it as a Message without its ID.
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
		}
	case Item:
		m = Message{Kind: KindItem, Target: t.Target, Body: t.Body, Attributes: maps.Clone(t.Attributes), Window: t.Window}
	}
	switch {
	case m.Target == "" && m.Kind != KindEventBridge:
		return m, invalid("a %s message needs a target", m.Kind)
	case m.Body == "":
		return m, invalid("a %s message needs a body", m.Kind)
	case !utf8.ValidString(m.Body):
		return m, invalid("the body is not valid UTF-8")
	case (m.Kind == KindSQSFIFO || m.Kind == KindSNSFIFO) && m.GroupID == "":
		return m, invalid("a %s message needs a GroupID", m.Kind)
	case len(m.GroupID) > 128:
		return m, invalid("GroupID has %d characters; at most 128", len(m.GroupID))
	case len(m.Subject) > 100:
		return m, invalid("Subject has %d characters; SNS allows 100", len(m.Subject))
	case m.Window < 0:
		return m, invalid("negative window %s", m.Window)
	case m.Kind != KindItem && len(m.Attributes) > maxAttributes-1:
		return m, invalid("%d message attributes; at most %d (the service allows %d, and %s is one)", len(m.Attributes), maxAttributes-1, maxAttributes, IDAttribute)
	}
	if _, ok := m.Attributes[IDAttribute]; ok {
		return m, invalid("the attribute %s is the relay's", IDAttribute)
	}
	if m.Kind == KindEventBridge {
		var detail map[string]json.RawMessage
		if err := json.Unmarshal([]byte(m.Body), &detail); err != nil || detail == nil {
			return m, invalid("the detail is not a JSON object")
		}
		if _, ok := detail[IDAttribute]; ok {
			return m, invalid("the detail's field %s is the relay's", IDAttribute)
		}
	}
	return m, nil
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
