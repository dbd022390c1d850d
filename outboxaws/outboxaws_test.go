package outboxaws_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/eventbridge"
	ebtypes "github.com/aws/aws-sdk-go-v2/service/eventbridge/types"
	"github.com/aws/aws-sdk-go-v2/service/sns"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/smithy-go"

	"github.com/lambdaidem/lambdaidem/lambdaidem/outbox"
	"github.com/lambdaidem/lambdaidem/outboxaws"
)

// The SDK clients satisfy the interfaces.
var (
	_ outboxaws.SQS         = (*sqs.Client)(nil)
	_ outboxaws.SNS         = (*sns.Client)(nil)
	_ outboxaws.EventBridge = (*eventbridge.Client)(nil)
)

// clients record the requests the publisher makes. These tests check the
// mapping of a Message onto each SDK input; the relay's behaviour over a
// real SQS endpoint (goaws) is in the end-to-end suite. SNS and
// EventBridge have no in-process endpoint here, so their inputs are
// checked as built.
type clients struct {
	sqs      []*sqs.SendMessageInput
	sns      []*sns.PublishInput
	eb       []*eventbridge.PutEventsInput
	ebFailed bool
}

func (c *clients) SendMessage(_ context.Context, in *sqs.SendMessageInput, _ ...func(*sqs.Options)) (*sqs.SendMessageOutput, error) {
	c.sqs = append(c.sqs, in)
	return &sqs.SendMessageOutput{}, nil
}

func (c *clients) Publish(_ context.Context, in *sns.PublishInput, _ ...func(*sns.Options)) (*sns.PublishOutput, error) {
	c.sns = append(c.sns, in)
	return &sns.PublishOutput{}, nil
}

func (c *clients) PutEvents(_ context.Context, in *eventbridge.PutEventsInput, _ ...func(*eventbridge.Options)) (*eventbridge.PutEventsOutput, error) {
	c.eb = append(c.eb, in)
	if c.ebFailed {
		return &eventbridge.PutEventsOutput{FailedEntryCount: 1, Entries: []ebtypes.PutEventsResultEntry{{ErrorCode: aws.String("InternalFailure"), ErrorMessage: aws.String("try again")}}}, nil
	}
	return &eventbridge.PutEventsOutput{}, nil
}

// TestMapping: FIFO messages carry their id as the deduplication id and
// their group; standard ones carry it as the String attribute staged by
// outbox.Stage and no deduplication id; the SQS delay is in seconds.
func TestMapping(t *testing.T) {
	c := &clients{}
	p, err := outboxaws.New(outboxaws.Options{SQS: c, SNS: c, EventBridge: c})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	std := map[string]string{outbox.IDAttribute: "op-0", "type": "accepted"}
	for _, m := range []outbox.Message{
		{ID: "op-0", Kind: outbox.KindSQS, Target: "q", Body: "b", Attributes: std, Delay: 30 * time.Second},
		{ID: "op-1", Kind: outbox.KindSQSFIFO, Target: "q.fifo", Body: "b", GroupID: "g"},
		{ID: "op-2", Kind: outbox.KindSNS, Target: "arn:t", Body: "b", Subject: "s", Attributes: std},
		{ID: "op-3", Kind: outbox.KindSNSFIFO, Target: "arn:t.fifo", Body: "b", GroupID: "g"},
		{ID: "op-4", Kind: outbox.KindEventBridge, Target: "bus", Body: `{"lambdaidem-message-id":"op-4"}`, Source: "orders", DetailType: "OrderAccepted"},
	} {
		if err := p.Publish(ctx, m); err != nil {
			t.Fatalf("%s: %v", m.Kind, err)
		}
	}
	if in := c.sqs[0]; in.MessageDeduplicationId != nil || in.DelaySeconds != 30 || aws.ToString(in.MessageAttributes[outbox.IDAttribute].StringValue) != "op-0" ||
		aws.ToString(in.MessageAttributes[outbox.IDAttribute].DataType) != "String" {
		t.Errorf("standard SQS input %+v", in)
	}
	if in := c.sqs[1]; aws.ToString(in.MessageDeduplicationId) != "op-1" || aws.ToString(in.MessageGroupId) != "g" || in.DelaySeconds != 0 {
		t.Errorf("FIFO SQS input %+v", in)
	}
	if in := c.sns[0]; in.MessageDeduplicationId != nil || aws.ToString(in.Subject) != "s" || aws.ToString(in.MessageAttributes[outbox.IDAttribute].StringValue) != "op-0" {
		t.Errorf("standard SNS input %+v", in)
	}
	if in := c.sns[1]; aws.ToString(in.MessageDeduplicationId) != "op-3" || aws.ToString(in.MessageGroupId) != "g" {
		t.Errorf("FIFO SNS input %+v", in)
	}
	if e := c.eb[0].Entries[0]; aws.ToString(e.EventBusName) != "bus" || aws.ToString(e.Detail) != `{"lambdaidem-message-id":"op-4"}` || aws.ToString(e.DetailType) != "OrderAccepted" {
		t.Errorf("EventBridge entry %+v", e)
	}
}

// TestRefusals: a failed EventBridge entry is an error (PutEvents answers
// 200 with FailedEntryCount); a kind without its client fails with
// ErrNoClient; New needs a client.
func TestRefusals(t *testing.T) {
	c := &clients{ebFailed: true}
	p, _ := outboxaws.New(outboxaws.Options{EventBridge: c})
	if err := p.Publish(context.Background(), outbox.Message{ID: "x", Kind: outbox.KindEventBridge, Body: "{}", Source: "s", DetailType: "d"}); err == nil {
		t.Error("a failed entry published without error")
	}
	for _, k := range []outbox.Kind{outbox.KindSQS, outbox.KindSNSFIFO, outbox.KindItem, "carrier-pigeon"} {
		if err := p.Publish(context.Background(), outbox.Message{ID: "x", Kind: k}); !errors.Is(err, outboxaws.ErrNoClient) {
			t.Errorf("%s without its client = %v", k, err)
		}
	}
	if _, err := outboxaws.New(outboxaws.Options{}); err == nil {
		t.Error("New accepted no client")
	}
}

// refusing is an SQS, SNS and EventBridge client whose every call fails
// with err, or whose EventBridge entry fails with code.
type refusing struct {
	err  error
	code string
}

func (r refusing) SendMessage(context.Context, *sqs.SendMessageInput, ...func(*sqs.Options)) (*sqs.SendMessageOutput, error) {
	return nil, r.err
}

func (r refusing) Publish(context.Context, *sns.PublishInput, ...func(*sns.Options)) (*sns.PublishOutput, error) {
	return nil, r.err
}

func (r refusing) PutEvents(context.Context, *eventbridge.PutEventsInput, ...func(*eventbridge.Options)) (*eventbridge.PutEventsOutput, error) {
	if r.err != nil {
		return nil, r.err
	}
	return &eventbridge.PutEventsOutput{FailedEntryCount: 1, Entries: []ebtypes.PutEventsResultEntry{{ErrorCode: aws.String(r.code), ErrorMessage: aws.String("refused")}}}, nil
}

// TestRefusalsThatRepeatAreUnpublishable: an API error whose code says the
// target refuses the message every time (invalid content, no such queue,
// access denied, a malformed EventBridge detail) matches
// outbox.ErrUnpublishable, so that the relay sets the message aside;
// throttling, a service fault and a network error do not (the relay
// retries them).
func TestRefusalsThatRepeatAreUnpublishable(t *testing.T) {
	for _, c := range []struct {
		name string
		kind outbox.Kind
		r    refusing
		want bool
	}{
		{"SQS invalid contents", outbox.KindSQS, refusing{err: &smithy.GenericAPIError{Code: "InvalidMessageContents", Fault: smithy.FaultClient}}, true},
		{"SQS no such queue", outbox.KindSQSFIFO, refusing{err: &smithy.GenericAPIError{Code: "AWS.SimpleQueueService.NonExistentQueue", Fault: smithy.FaultClient}}, true},
		{"SQS throttled", outbox.KindSQS, refusing{err: &smithy.GenericAPIError{Code: "RequestThrottled", Fault: smithy.FaultClient}}, false},
		{"SNS invalid parameter", outbox.KindSNS, refusing{err: &smithy.GenericAPIError{Code: "InvalidParameter", Fault: smithy.FaultClient}}, true},
		{"SQS KMS key disabled", outbox.KindSQS, refusing{err: &smithy.GenericAPIError{Code: "KmsDisabled", Fault: smithy.FaultClient}}, true},
		{"SQS KMS key disabled, query-compatible code", outbox.KindSQS, refusing{err: &smithy.GenericAPIError{Code: "KMS.DisabledException", Fault: smithy.FaultClient}}, true},
		{"SQS KMS throttled, query-compatible code", outbox.KindSQS, refusing{err: &smithy.GenericAPIError{Code: "KMS.ThrottlingException", Fault: smithy.FaultClient}}, false},
		{"SQS KMS throttled", outbox.KindSQS, refusing{err: &smithy.GenericAPIError{Code: "KmsThrottled", Fault: smithy.FaultClient}}, false},
		{"SNS invalid parameter value", outbox.KindSNS, refusing{err: &smithy.GenericAPIError{Code: "ParameterValueInvalid", Fault: smithy.FaultClient}}, true},
		{"SNS KMS key not found", outbox.KindSNS, refusing{err: &smithy.GenericAPIError{Code: "KMSNotFound", Fault: smithy.FaultClient}}, true},
		{"SNS KMS throttled", outbox.KindSNS, refusing{err: &smithy.GenericAPIError{Code: "KMSThrottling", Fault: smithy.FaultClient}}, false},
		{"SNS internal error", outbox.KindSNS, refusing{err: &smithy.GenericAPIError{Code: "InternalError", Fault: smithy.FaultServer}}, false},
		{"network", outbox.KindSQS, refusing{err: errors.New("connection reset")}, false},
		{"EventBridge malformed detail", outbox.KindEventBridge, refusing{code: "MalformedDetail"}, true},
		{"EventBridge throttled entry", outbox.KindEventBridge, refusing{code: "ThrottlingException"}, false},
		{"EventBridge internal failure entry", outbox.KindEventBridge, refusing{code: "InternalFailure"}, false},
		// PutEventsResultEntry's non-retryable codes (EventBridge API
		// Reference): each is refused again on every try.
		{"EventBridge entry denied", outbox.KindEventBridge, refusing{code: "AccessDeniedException"}, true},
		{"EventBridge entry not authorized for source", outbox.KindEventBridge, refusing{code: "NotAuthorizedForSourceException"}, true},
		{"EventBridge entry not authorized for detail type", outbox.KindEventBridge, refusing{code: "NotAuthorizedForDetailTypeException"}, true},
		{"EventBridge entry invalid account", outbox.KindEventBridge, refusing{code: "InvalidAccountIdException"}, true},
		{"EventBridge entry redaction failure", outbox.KindEventBridge, refusing{code: "RedactionFailure"}, true},
		{"EventBridge entry invalid argument", outbox.KindEventBridge, refusing{code: "InvalidArgument"}, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			p, err := outboxaws.New(outboxaws.Options{SQS: c.r, SNS: c.r, EventBridge: c.r})
			if err != nil {
				t.Fatal(err)
			}
			err = p.Publish(context.Background(), outbox.Message{ID: "id", Kind: c.kind, Target: "t", Body: "{}", GroupID: "g", Source: "s", DetailType: "d"})
			if err == nil || errors.Is(err, outbox.ErrUnpublishable) != c.want {
				t.Errorf("Publish = %v; unpublishable %v", err, c.want)
			}
		})
	}
}
