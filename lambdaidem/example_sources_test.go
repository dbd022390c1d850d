package lambdaidem_test

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-lambda-go/lambdacontext"

	"github.com/lambdaidem/lambdaidem/lambdaidem"
	"github.com/lambdaidem/lambdaidem/lambdaidem/memstore"
)

// Asynchronous sources. Lambda queues an asynchronous event and retries a
// failed invocation twice, within the function's maximum event age (60
// seconds to 6 hours, default 6 hours), and may hand the same event over
// more than once even without an error, because its queue is eventually
// consistent (https://docs.aws.amazon.com/lambda/latest/dg/invocation-async-error-handling.html,
// https://docs.aws.amazon.com/lambda/latest/dg/invocation-async-configuring.html).
// Each retry carries the same event: key the operation by the event's own
// id, and keep records at least as long as the same event can come back.

// asyncRetryWindow is Lambda's maximum event age for the examples: the
// longest (and default) setting.
const asyncRetryWindow = 6 * time.Hour

// EventBridge: the event id is the key. EventBridge retries a failed
// delivery to its target for up to 24 hours by default (the target's retry
// policy: https://docs.aws.amazon.com/eventbridge/latest/userguide/eb-rule-retry-policy.html),
// then Lambda retries within its maximum event age: the horizon is both.
func ExampleWrapper_eventBridge() {
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	guard, _ := lambdaidem.New(memstore.New(), func(o *lambdaidem.Options) {
		o.RetryHorizon = 24*time.Hour + asyncRetryWindow
		o.Now = func() time.Time { return now } // a clock the example moves
	})
	accounts, _ := lambdaidem.NewWrapper(guard, lambdaidem.Spec[events.EventBridgeEvent, string]{
		Operation: "ProvisionAccount",
		Key: func(_ context.Context, e events.EventBridgeEvent) (string, error) {
			return e.Source + "/" + e.ID, nil // ids are unique per source
		},
	})
	handler := accounts.Wrap(func(ctx context.Context, e events.EventBridgeEvent) (string, error) {
		var d struct {
			Account string `json:"account"`
		}
		if err := json.Unmarshal(e.Detail, &d); err != nil {
			return "", lambdaidem.Terminal(err)
		}
		fmt.Println("provisioning", d.Account)
		return "provisioned " + d.Account, nil
	})

	ev := events.EventBridgeEvent{
		Version: "0", ID: "7bf73129-1428-4cd3-a780-95db273d1602", DetailType: "AccountRequested",
		Source: "com.example.signup", AccountID: "111122223333", Region: "eu-west-1",
		Time:   time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC),
		Detail: json.RawMessage(`{"account":"acme"}`),
	}
	first, _ := handler(context.Background(), ev)
	now = now.Add(29 * time.Hour) // EventBridge retried for 24 h, then it waited 5 h in Lambda's queue
	late, _ := handler(context.Background(), ev)
	fmt.Println(first)
	fmt.Println(late)
	// Output:
	// provisioning acme
	// provisioned acme
	// provisioned acme
}

// SNS: the message id (unique per topic) is the key; Lambda receives one
// message per invocation. SNS retries a delivery Lambda refused (the
// function throttled or unavailable) for up to 23 days
// (https://docs.aws.amazon.com/sns/latest/dg/sns-message-delivery-retries.html),
// then Lambda retries within its maximum event age.
func ExampleWrapper_sns() {
	guard, _ := lambdaidem.New(memstore.New(), func(o *lambdaidem.Options) {
		o.RetryHorizon = 23*24*time.Hour + asyncRetryWindow
	})
	notices, _ := lambdaidem.NewWrapper(guard, lambdaidem.Spec[events.SNSEvent, struct{}]{
		Operation: "SendInvoice",
		Key: func(_ context.Context, e events.SNSEvent) (string, error) {
			if len(e.Records) != 1 {
				return "", fmt.Errorf("%w: an SNS event holds one message, this one %d", lambdaidem.ErrInvalidKey, len(e.Records))
			}
			m := e.Records[0].SNS
			return m.TopicArn + "/" + m.MessageID, nil
		},
	})
	handler := notices.Wrap(func(ctx context.Context, e events.SNSEvent) (struct{}, error) {
		fmt.Println("invoicing", e.Records[0].SNS.Message)
		return struct{}{}, nil
	})

	ev := events.SNSEvent{Records: []events.SNSEventRecord{{
		EventSource: "aws:sns", EventVersion: "1.0",
		SNS: events.SNSEntity{
			Type: "Notification", MessageID: "95df01b4-ee98-5cb9-9903-4c221d41eb5e",
			TopicArn: "arn:aws:sns:eu-west-1:111122223333:invoices", Message: "order o-77",
			Timestamp: time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC),
		},
	}}}
	for range 3 { // the first delivery, a Lambda retry, an SNS redelivery
		_, _ = handler(context.Background(), ev)
	}
	_, err := handler(context.Background(), events.SNSEvent{})
	fmt.Println(err)
	// Output:
	// invoicing order o-77
	// lambdaidem: invalid idempotency key: an SNS event holds one message, this one 0
}

// S3 event notifications carry no event id and are delivered at least
// once: a notification names the bucket, the object key, its version (on a
// versioned bucket) and a sequencer that orders the events of one key
// (https://docs.aws.amazon.com/AmazonS3/latest/userguide/notification-content-structure.html).
// Together they name one event. S3 invokes Lambda asynchronously, so the
// horizon is the maximum event age.
func ExampleWrapper_s3() {
	guard, _ := lambdaidem.New(memstore.New(), func(o *lambdaidem.Options) {
		o.RetryHorizon = asyncRetryWindow
	})
	thumbnails, _ := lambdaidem.NewWrapper(guard, lambdaidem.Spec[events.S3Event, struct{}]{
		Operation: "MakeThumbnail",
		Key: func(_ context.Context, e events.S3Event) (string, error) {
			if len(e.Records) != 1 {
				return "", fmt.Errorf("%w: expected one S3 record, got %d", lambdaidem.ErrInvalidKey, len(e.Records))
			}
			r := e.Records[0]
			o := r.S3.Object
			if o.Sequencer == "" {
				return "", fmt.Errorf("%w: the S3 record has no sequencer", lambdaidem.ErrMissingKey)
			}
			return r.EventName + " " + r.S3.Bucket.Name + "/" + o.Key + "@" + o.VersionID + "#" + o.Sequencer, nil
		},
	})
	handler := thumbnails.Wrap(func(ctx context.Context, e events.S3Event) (struct{}, error) {
		fmt.Println("thumbnail of", e.Records[0].S3.Object.Key)
		return struct{}{}, nil
	})

	upload := func(sequencer string) events.S3Event {
		r := events.S3EventRecord{EventVersion: "2.1", EventSource: "aws:s3", AWSRegion: "eu-west-1", EventName: "ObjectCreated:Put"}
		r.S3.Bucket.Name = "photos"
		r.S3.Object = events.S3Object{Key: "cats/tom.jpg", Size: 1024, ETag: "0123456789abcdef", Sequencer: sequencer}
		return events.S3Event{Records: []events.S3EventRecord{r}}
	}
	_, _ = handler(context.Background(), upload("0055AED6DCD90281E5"))
	_, _ = handler(context.Background(), upload("0055AED6DCD90281E5")) // the same notification again
	_, _ = handler(context.Background(), upload("0055AED6DCD90281F7")) // the object written again: a new event
	// Output:
	// thumbnail of cats/tom.jpg
	// thumbnail of cats/tom.jpg
}

// A direct asynchronous invocation (Invoke with InvocationType Event):
// Lambda's retries of the event keep its request id, so the request id
// identifies the event; a caller that invokes again makes a new event
// with a new request id, so an id the caller put in the payload protects
// more. The horizon is the function's maximum event age plus its timeout
// (the last attempt may start just before the age runs out).
func ExampleWrapper_asyncInvocation() {
	type Job struct {
		JobID  string `json:"job_id,omitempty"`
		Report string `json:"report"`
	}
	const maxEventAge, timeout = time.Hour, 15 * time.Minute // the function's settings
	guard, _ := lambdaidem.New(memstore.New(), func(o *lambdaidem.Options) {
		o.RetryHorizon = maxEventAge + timeout
	})
	jobs, _ := lambdaidem.NewWrapper(guard, lambdaidem.Spec[Job, string]{
		Operation: "BuildReport",
		Key: func(ctx context.Context, j Job) (string, error) {
			if j.JobID != "" {
				return "job:" + j.JobID, nil // the caller's own id survives the caller's retries
			}
			if lc, ok := lambdacontext.FromContext(ctx); ok && lc.AwsRequestID != "" {
				return "request:" + lc.AwsRequestID, nil // the same on Lambda's retries of this event
			}
			return "", lambdaidem.ErrMissingKey
		},
	})
	handler := jobs.Wrap(func(ctx context.Context, j Job) (string, error) {
		fmt.Println("building", j.Report)
		return j.Report + ".pdf", nil
	})

	invocation := func(requestID string) context.Context {
		return lambdacontext.NewContext(context.Background(), &lambdacontext.LambdaContext{AwsRequestID: requestID})
	}
	job := Job{Report: "q4"}
	_, _ = handler(invocation("c6af9ac6-7b61-11e6-9a41-93e812345678"), job)
	_, _ = handler(invocation("c6af9ac6-7b61-11e6-9a41-93e812345678"), job) // Lambda's retry
	_, _ = handler(invocation("0b1c2d3e-7b61-11e6-9a41-93e812345678"), Job{JobID: "j-9", Report: "q1"})
	_, _ = handler(invocation("4f5e6d7c-7b61-11e6-9a41-93e812345678"), Job{JobID: "j-9", Report: "q1"}) // the caller invoked again
	// Output:
	// building q4
	// building q1
}
