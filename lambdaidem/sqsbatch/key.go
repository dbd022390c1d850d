package sqsbatch

import (
	"context"
	"encoding/base64"
	"fmt"

	"github.com/aws/aws-lambda-go/events"

	"github.com/lambdaidem/lambdaidem/internal/jsonkey"
	"github.com/lambdaidem/lambdaidem/lambdaidem"
)

// KeyFunc returns the idempotency key of a message. It reports a message
// without a usable key with an error matching [lambdaidem.ErrMissingKey] or
// [lambdaidem.ErrInvalidKey]; the message is then a batch item failure. Its
// errors must not quote the key or the body: they are logged.
type KeyFunc func(context.Context, events.SQSMessage) (string, error)

// KeyFromMessageID uses the SQS message id. It is stable across the
// redeliveries of one message (a visibility timeout that ran out, a batch
// item failure), but not across a producer's retry: a message sent again,
// has a new id, and so may a message moved back from a dead-letter queue.
func KeyFromMessageID(_ context.Context, m events.SQSMessage) (string, error) {
	if m.MessageId == "" {
		return "", fmt.Errorf("%w: the message has no messageId", lambdaidem.ErrMissingKey)
	}
	return m.MessageId, nil
}

// KeyFromDeduplicationID uses the MessageDeduplicationId system attribute
// of a FIFO queue's message: the producer's own key (or the body's SHA-256
// with content-based deduplication). SQS drops duplicates with this id only
// within five minutes; the record keeps them out for the retry horizon.
// Messages of standard queues have no such attribute and fail.
func KeyFromDeduplicationID(_ context.Context, m events.SQSMessage) (string, error) {
	id := m.Attributes["MessageDeduplicationId"]
	if id == "" {
		return "", fmt.Errorf("%w: the message has no MessageDeduplicationId (not from a FIFO queue?)", lambdaidem.ErrMissingKey)
	}
	return id, nil
}

// KeyFromAttribute uses the message attribute name: its string value, or,
// for a Binary attribute, the standard base64 encoding of its bytes.
func KeyFromAttribute(name string) KeyFunc {
	return func(_ context.Context, m events.SQSMessage) (string, error) {
		a, ok := m.MessageAttributes[name]
		switch {
		case !ok:
			return "", fmt.Errorf("%w: no message attribute %q", lambdaidem.ErrMissingKey, name)
		case a.StringValue != nil && *a.StringValue != "":
			return *a.StringValue, nil
		case len(a.BinaryValue) > 0:
			return base64.StdEncoding.EncodeToString(a.BinaryValue), nil
		}
		return "", fmt.Errorf("%w: message attribute %q is empty", lambdaidem.ErrMissingKey, name)
	}
}

// KeyFromJSONField uses a field of the JSON body. The path names it with
// dots between object members ("order.id"); names containing dots cannot
// be addressed. A string is used as it is, a number as written; anything
// else, an absent field, or a body that is not a JSON object fails Names match as
// encoding/json matches them (case-insensitively, under Unicode simple
// folding); an object naming a step twice that way fails.
func KeyFromJSONField(path string) KeyFunc {
	return func(_ context.Context, m events.SQSMessage) (string, error) {
		return jsonkey.Field([]byte(m.Body), path, "the body")
	}
}
