package e2estack

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"time"

	"github.com/Admiral-Piett/goaws/app"
	"github.com/Admiral-Piett/goaws/app/gosqs"
	"github.com/Admiral-Piett/goaws/app/router"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/ratelimit"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/schemas"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/aws/smithy-go/transport/http/protocol/awsquery"
	"github.com/sirupsen/logrus"
)

// SQS is the in-process SQS-compatible endpoint: goaws v0.4.5's router,
// served on a loopback port, with its periodic task (which makes messages
// visible again after their visibility timeout and moves them to a
// dead-letter queue) running on a short tick.
//
// goaws keeps its queues in package-level variables: run one SQS per
// process, and create every queue before messages flow (goaws reads its
// queue map without a lock on the receive path).
//
// goaws departs from SQS in ways the harness corrects or the suite names:
//
//   - a redrive policy with maxReceiveCount N moves a message after N+1
//     receives (SQS: after N); [SQS.CreateQueue] configures N-1 so the queue
//     behaves like SQS;
//   - ApproximateReceiveCount is always "1"; the [Poller] counts receives
//     itself and sets the attribute;
//   - only the query protocol is spoken: [NewSQSClient] selects it;
//   - visibility timeouts and redrive run on a periodic tick (here 100ms),
//     so a message may reappear up to a tick late.
type SQS struct {
	// URL is the endpoint's base URL.
	URL string
	// Client is an SDK client for it.
	Client *sqs.Client

	srv  *http.Server
	quit chan struct{}
	done chan struct{}
}

// StartSQS serves goaws on 127.0.0.1. Stop it with Close.
func StartSQS(ctx context.Context) (*SQS, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("e2estack: listen for SQS: %w", err)
	}
	port := strconv.Itoa(l.Addr().(*net.TCPAddr).Port)
	// goaws builds queue URLs from these; an empty region keeps the host
	// plain (with a region it prefixes the host, which does not resolve).
	app.CurrentEnvironment.Host = "127.0.0.1"
	app.CurrentEnvironment.Port = port
	app.CurrentEnvironment.AccountID = "000000000000"
	app.CurrentEnvironment.Region = ""
	app.CurrentEnvironment.QueueAttributeDefaults.VisibilityTimeout = 30
	app.CurrentEnvironment.QueueAttributeDefaults.MaximumMessageSize = 262144
	logrus.SetOutput(io.Discard) // goaws logs every call through logrus's standard logger

	s := &SQS{
		URL:  "http://127.0.0.1:" + port,
		srv:  &http.Server{Handler: router.New(), ReadHeaderTimeout: 5 * time.Second},
		quit: make(chan struct{}),
		done: make(chan struct{}),
	}
	s.Client = NewSQSClient(s.URL, true)
	go func() { _ = s.srv.Serve(l) }()
	go func() {
		defer close(s.done)
		gosqs.PeriodicTasks(100*time.Millisecond, s.quit)
	}()
	return s, nil
}

// Close stops the server and its periodic task.
func (s *SQS) Close() {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	_ = s.srv.Shutdown(ctx)
	_ = s.srv.Close()
	close(s.quit)
	<-s.done
}

// QueueSpec describes a queue to create.
type QueueSpec struct {
	// Name is the queue's name.
	Name string
	// VisibilityTimeout, in whole seconds (at least 1).
	VisibilityTimeout time.Duration
	// DeadLetter, if set, is the name of an existing queue that receives a
	// message after MaxReceiveCount receives.
	DeadLetter      string
	MaxReceiveCount int
}

// CreateQueue creates a queue and returns its URL. For a redrive policy it
// configures goaws with MaxReceiveCount-1, so that, like SQS, a message is
// received MaxReceiveCount times before it moves.
func (s *SQS) CreateQueue(ctx context.Context, q QueueSpec) (string, error) {
	secs := int(q.VisibilityTimeout.Round(time.Second) / time.Second)
	if secs < 1 {
		secs = 1
	}
	attrs := map[string]string{"VisibilityTimeout": strconv.Itoa(secs)}
	if q.DeadLetter != "" {
		if q.MaxReceiveCount < 2 {
			return "", errors.New("e2estack: goaws cannot model maxReceiveCount below 2")
		}
		policy, _ := json.Marshal(map[string]any{
			"deadLetterTargetArn": "arn:aws:sqs::" + app.CurrentEnvironment.AccountID + ":" + q.DeadLetter,
			"maxReceiveCount":     q.MaxReceiveCount - 1, // goaws moves after N+1 receives
		})
		attrs["RedrivePolicy"] = string(policy)
	}
	out, err := s.Client.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String(q.Name), Attributes: attrs})
	if err != nil {
		return "", fmt.Errorf("e2estack: create queue %s: %w", q.Name, err)
	}
	return aws.ToString(out.QueueUrl), nil
}

// NewSQSClient returns an SQS client for the endpoint at url, built from
// explicit options only (static "test" credentials, us-east-1). query
// selects the SQS query protocol (goaws speaks nothing else); otherwise
// the SDK's default JSON protocol is used (LocalStack, AWS).
func NewSQSClient(url string, query bool) *sqs.Client {
	return sqs.New(sqs.Options{
		BaseEndpoint: aws.String(url),
		Region:       "us-east-1",
		Credentials:  credentials.NewStaticCredentialsProvider("test", "test", ""),
		Retryer: retry.NewStandard(func(o *retry.StandardOptions) {
			o.MaxAttempts = 3
			o.MaxBackoff = 100 * time.Millisecond
			o.RateLimiter = ratelimit.None
		}),
	}, func(o *sqs.Options) {
		if query {
			o.Protocol = awsquery.New(schemas.AmazonSQS)
		}
	})
}

// Depth returns the queue's ApproximateNumberOfMessages and
// ApproximateNumberOfMessagesNotVisible. (goaws counts in-flight messages in
// both; the queue is empty when both are 0, on goaws and SQS alike.)
func Depth(ctx context.Context, c *sqs.Client, queueURL string) (visible, inFlight int, err error) {
	out, err := c.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{
		QueueUrl: aws.String(queueURL),
		AttributeNames: []types.QueueAttributeName{
			types.QueueAttributeNameApproximateNumberOfMessages,
			types.QueueAttributeNameApproximateNumberOfMessagesNotVisible,
		},
	})
	if err != nil {
		return 0, 0, err
	}
	visible, _ = strconv.Atoi(out.Attributes[string(types.QueueAttributeNameApproximateNumberOfMessages)])
	inFlight, _ = strconv.Atoi(out.Attributes[string(types.QueueAttributeNameApproximateNumberOfMessagesNotVisible)])
	return visible, inFlight, nil
}
