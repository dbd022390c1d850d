// Package outboxaws is an outbox.Publisher over the AWS SDK's SQS, SNS and
// EventBridge clients, for the outbox relay (dynamostore/relay).
//
// It is a module of its own so that the library module never requires
// those SDK clients: a service that stages no messages does not download
// them. Each client is a locally defined interface with the SDK's exact
// method signature, which *sqs.Client, *sns.Client and
// *eventbridge.Client satisfy.
//
//	p, err := outboxaws.New(outboxaws.Options{SQS: sqs.NewFromConfig(cfg)})
//	r, err := relay.New(dynamodb.NewFromConfig(cfg), outboxTable, p)
//	lambda.Start(r.Handler())
package outboxaws

import (
	"context"
	"errors"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/eventbridge"
	ebtypes "github.com/aws/aws-sdk-go-v2/service/eventbridge/types"
	"github.com/aws/aws-sdk-go-v2/service/sns"
	snstypes "github.com/aws/aws-sdk-go-v2/service/sns/types"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/aws/smithy-go"

	"github.com/lambdaidem/lambdaidem/lambdaidem/outbox"
)

// ErrNoClient: a message's kind needs a client the Publisher was not
// given. The relay fails the record; it reaches the on-failure destination.
var ErrNoClient = errors.New("outboxaws: no client for the message's kind")

// SQS is the part of the SQS API the publisher calls; *sqs.Client
// satisfies it.
type SQS interface {
	SendMessage(ctx context.Context, in *sqs.SendMessageInput, optFns ...func(*sqs.Options)) (*sqs.SendMessageOutput, error)
}

// SNS is the part of the SNS API the publisher calls; *sns.Client
// satisfies it.
type SNS interface {
	Publish(ctx context.Context, in *sns.PublishInput, optFns ...func(*sns.Options)) (*sns.PublishOutput, error)
}

// EventBridge is the part of the EventBridge API the publisher calls;
// *eventbridge.Client satisfies it.
type EventBridge interface {
	PutEvents(ctx context.Context, in *eventbridge.PutEventsInput, optFns ...func(*eventbridge.Options)) (*eventbridge.PutEventsOutput, error)
}

// Options name the clients of a [Publisher]. At least one is required; a
// message whose kind needs a missing one fails with [ErrNoClient].
type Options struct {
	SQS         SQS
	SNS         SNS
	EventBridge EventBridge
	// Item, if set, publishes generic items (outbox.KindItem). Default: such
	// a message fails with ErrNoClient.
	Item outbox.Publisher
}

// Publisher sends outbox messages with the SDK's clients. Build it with
// [New]; it is safe for concurrent use if its clients are.
type Publisher struct {
	opts Options
}

var _ outbox.Publisher = (*Publisher)(nil)

// New returns a Publisher over the clients in o. It returns an error if o
// names none.
func New(o Options) (*Publisher, error) {
	if o.SQS == nil && o.SNS == nil && o.EventBridge == nil && o.Item == nil {
		return nil, errors.New("outboxaws: no client")
	}
	return &Publisher{opts: o}, nil
}

// Publish sends m once: SQS SendMessage, SNS Publish, or EventBridge
// PutEvents (one entry; a failed entry is an error). An error whose code
// says the target refuses the message every time (invalid content, no such
// queue, topic or bus, access denied) matches outbox.ErrUnpublishable: the
// relay sets the message aside. A FIFO message's ID
// is its MessageDeduplicationId; a standard SQS or SNS message carries it
// as the String message attribute outbox.IDAttribute (staged there by
// outbox.Stage), an EventBridge event in its detail.
func (p *Publisher) Publish(ctx context.Context, m outbox.Message) error {
	switch m.Kind {
	case outbox.KindSQS, outbox.KindSQSFIFO:
		if p.opts.SQS == nil {
			return fmt.Errorf("%w: %s", ErrNoClient, m.Kind)
		}
		in := &sqs.SendMessageInput{QueueUrl: aws.String(m.Target), MessageBody: aws.String(m.Body)}
		if len(m.Attributes) > 0 {
			in.MessageAttributes = make(map[string]sqstypes.MessageAttributeValue, len(m.Attributes))
			for k, v := range m.Attributes {
				in.MessageAttributes[k] = sqstypes.MessageAttributeValue{DataType: aws.String("String"), StringValue: aws.String(v)}
			}
		}
		if m.Kind == outbox.KindSQSFIFO {
			in.MessageGroupId, in.MessageDeduplicationId = aws.String(m.GroupID), aws.String(m.ID)
		} else if m.Delay > 0 {
			in.DelaySeconds = int32(m.Delay.Seconds())
		}
		_, err := p.opts.SQS.SendMessage(ctx, in)
		return refused(err)
	case outbox.KindSNS, outbox.KindSNSFIFO:
		if p.opts.SNS == nil {
			return fmt.Errorf("%w: %s", ErrNoClient, m.Kind)
		}
		in := &sns.PublishInput{TopicArn: aws.String(m.Target), Message: aws.String(m.Body)}
		if m.Subject != "" {
			in.Subject = aws.String(m.Subject)
		}
		if len(m.Attributes) > 0 {
			in.MessageAttributes = make(map[string]snstypes.MessageAttributeValue, len(m.Attributes))
			for k, v := range m.Attributes {
				in.MessageAttributes[k] = snstypes.MessageAttributeValue{DataType: aws.String("String"), StringValue: aws.String(v)}
			}
		}
		if m.Kind == outbox.KindSNSFIFO {
			in.MessageGroupId, in.MessageDeduplicationId = aws.String(m.GroupID), aws.String(m.ID)
		}
		_, err := p.opts.SNS.Publish(ctx, in)
		return refused(err)
	case outbox.KindEventBridge:
		if p.opts.EventBridge == nil {
			return fmt.Errorf("%w: %s", ErrNoClient, m.Kind)
		}
		entry := ebtypes.PutEventsRequestEntry{Source: aws.String(m.Source), DetailType: aws.String(m.DetailType), Detail: aws.String(m.Body)}
		if m.Target != "" {
			entry.EventBusName = aws.String(m.Target)
		}
		out, err := p.opts.EventBridge.PutEvents(ctx, &eventbridge.PutEventsInput{Entries: []ebtypes.PutEventsRequestEntry{entry}})
		if err != nil {
			return refused(err)
		}
		if out.FailedEntryCount > 0 {
			code, msg := "unknown", ""
			if len(out.Entries) > 0 {
				code, msg = aws.ToString(out.Entries[0].ErrorCode), aws.ToString(out.Entries[0].ErrorMessage)
			}
			err := fmt.Errorf("outboxaws: EventBridge refused event %s: %s: %s", m.ID, code, msg)
			if permanent[code] {
				err = fmt.Errorf("%w: %w", outbox.ErrUnpublishable, err)
			}
			return err
		}
		return nil
	case outbox.KindItem:
		if p.opts.Item == nil {
			return fmt.Errorf("%w: %s", ErrNoClient, m.Kind)
		}
		return p.opts.Item.Publish(ctx, m)
	}
	return fmt.Errorf("%w: unknown kind %q", ErrNoClient, m.Kind)
}

// permanent are the error codes with which SQS, SNS and EventBridge refuse
// a request that will be refused the same way every time: its content,
// its target or its caller's permission is wrong. Throttling, service
// faults and anything else are retried by the relay.
var permanent = map[string]bool{
	// SQS (SendMessage's errors; a KMS key of an encrypted queue that
	// is disabled, missing or denied refuses every message until an
	// operator fixes it, as AccessDenied does; the KMS.* and
	// AWS.SimpleQueueService.* spellings are the query-compatible codes
	// the SDK reports, its schema's AWSQueryError traits)
	"InvalidMessageContents": true, "InvalidParameterValue": true, "InvalidAttributeName": true,
	"InvalidAttributeValue": true, "MessageTooLong": true, "QueueDoesNotExist": true,
	"AWS.SimpleQueueService.NonExistentQueue": true, "AccessDenied": true,
	"InvalidAddress": true, "InvalidSecurity": true, "UnsupportedOperation": true,
	"AWS.SimpleQueueService.UnsupportedOperation": true,
	"KmsAccessDenied": true, "KmsDisabled": true, "KmsInvalidKeyUsage": true, "KmsInvalidState": true,
	"KmsNotFound": true, "KmsOptInRequired": true,
	"KMS.AccessDeniedException": true, "KMS.DisabledException": true, "KMS.InvalidKeyUsageException": true,
	"KMS.InvalidStateException": true, "KMS.NotFoundException": true, "KMS.OptInRequired": true,
	// SNS (Publish's errors, as the SDK reports them: InvalidParameterValue
	// is ParameterValueInvalid)
	"InvalidParameter": true, "NotFound": true, "AuthorizationError": true, "ParameterValueInvalid": true,
	"KMSAccessDenied": true, "KMSDisabled": true, "KMSInvalidState": true, "KMSNotFound": true, "KMSOptInRequired": true,
	// EventBridge: the call's, and an entry's non-retryable codes
	// (PutEventsResultEntry's ErrorCode)
	"ValidationException": true, "ResourceNotFoundException": true, "AccessDeniedException": true,
	"InvalidArgument": true, "MalformedDetail": true, "InvalidAccountIdException": true, "RedactionFailure": true,
	"NotAuthorizedForSourceException": true, "NotAuthorizedForDetailTypeException": true,
}

// refused marks an error whose API code says the target refuses the
// message every time with outbox.ErrUnpublishable, so that the relay sets
// the message aside instead of retrying it.
func refused(err error) error {
	var api smithy.APIError
	if err != nil && errors.As(err, &api) && permanent[api.ErrorCode()] {
		return fmt.Errorf("%w: %w", outbox.ErrUnpublishable, err)
	}
	return err
}
