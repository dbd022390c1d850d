package e2estack

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/lambdaidem/lambdaidem/ddbtest/rie"
)

// PollerOptions configure a [Poller].
type PollerOptions struct {
	// Client is the SQS client. Required.
	Client *sqs.Client
	// QueueURL is the queue to poll. Required.
	QueueURL string
	// QueueARN is the events' eventSourceARN. Default derived from the URL's
	// last path segment.
	QueueARN string
	// Function runs the batches. Required.
	Function rie.Invoker
	// BatchSize is the most messages per invocation (1–10). Default 10.
	BatchSize int
	// WaitTime is the long-poll wait of one ReceiveMessage, whole seconds.
	// Default 1s.
	WaitTime time.Duration
	// OnBatch, if set, is called after each batch with what happened.
	OnBatch func(Batch)
}

// Batch is what one invocation of the poller did.
type Batch struct {
	// MessageIDs are the messages received, in order.
	MessageIDs []string
	// Bodies are their bodies, in the same order.
	Bodies []string
	// ReceiveCounts are how many times the poller has received each
	// message, this time included.
	ReceiveCounts []int
	// Invocation is what the function returned.
	Invocation rie.Invocation
	// InvokeErr is set when the function could not be invoked.
	InvokeErr error
	// Failed lists the message ids left on the queue for redelivery: the
	// reported batch item failures, or every message when the invocation
	// failed as a whole.
	Failed []string
	// Deleted lists the message ids deleted as processed.
	Deleted []string
}

// Poller behaves like Lambda's SQS event source mapping with
// ReportBatchItemFailures: it receives a batch, invokes the function with an
// events.SQSEvent, deletes the messages that succeeded and leaves the
// failures on the queue, where they reappear after the visibility timeout
// (and move to the dead-letter queue after the redrive policy's
// maxReceiveCount, which the queue itself applies). A function error, a
// timeout or a crash fails the whole batch, as does a response naming a
// message that is not in the batch.
type Poller struct {
	o PollerOptions

	mu       sync.Mutex
	received map[string]int // message id → receives seen by this poller
	batches  []Batch
}

// NewPoller returns a poller; start it with Run.
func NewPoller(o PollerOptions) (*Poller, error) {
	if o.Client == nil || o.QueueURL == "" || o.Function == nil {
		return nil, errors.New("e2estack: a Poller needs Client, QueueURL and Function")
	}
	if o.BatchSize < 1 || o.BatchSize > 10 {
		o.BatchSize = 10
	}
	if o.WaitTime <= 0 {
		o.WaitTime = time.Second
	}
	if o.QueueARN == "" {
		o.QueueARN = "arn:aws:sqs:us-east-1:000000000000:" + lastSegment(o.QueueURL)
	}
	return &Poller{o: o, received: map[string]int{}}, nil
}

// Start runs the poller in a goroutine until the returned stop function is
// called; stop waits for the batch in progress.
func (p *Poller) Start(ctx context.Context) (stop func()) {
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		p.Run(ctx)
	}()
	return func() {
		cancel()
		<-done
	}
}

// Run polls until ctx ends.
func (p *Poller) Run(ctx context.Context) {
	for ctx.Err() == nil {
		n, err := p.Poll(ctx)
		if err != nil && ctx.Err() == nil {
			// The endpoint hiccuped: back off briefly, as the mapping does.
			sleep(ctx, 200*time.Millisecond)
		}
		_ = n
	}
}

// Poll receives one batch and processes it; it returns how many messages it
// received.
func (p *Poller) Poll(ctx context.Context) (int, error) {
	out, err := p.o.Client.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{
		QueueUrl:                    aws.String(p.o.QueueURL),
		MaxNumberOfMessages:         int32(p.o.BatchSize),
		WaitTimeSeconds:             int32(p.o.WaitTime / time.Second),
		MessageSystemAttributeNames: []types.MessageSystemAttributeName{types.MessageSystemAttributeNameAll},
		MessageAttributeNames:       []string{"All"},
	})
	if err != nil {
		return 0, err
	}
	if len(out.Messages) == 0 {
		return 0, nil
	}
	b := p.process(ctx, out.Messages)
	p.mu.Lock()
	p.batches = append(p.batches, b)
	p.mu.Unlock()
	if p.o.OnBatch != nil {
		p.o.OnBatch(b)
	}
	return len(out.Messages), nil
}

func (p *Poller) process(ctx context.Context, msgs []types.Message) Batch {
	var b Batch
	ev := events.SQSEvent{Records: make([]events.SQSMessage, 0, len(msgs))}
	handles := map[string]string{}
	p.mu.Lock()
	for _, m := range msgs {
		id := aws.ToString(m.MessageId)
		p.received[id]++
		count := p.received[id]
		b.MessageIDs = append(b.MessageIDs, id)
		b.Bodies = append(b.Bodies, aws.ToString(m.Body))
		b.ReceiveCounts = append(b.ReceiveCounts, count)
		handles[id] = aws.ToString(m.ReceiptHandle)
		ev.Records = append(ev.Records, p.record(m, count))
	}
	p.mu.Unlock()

	payload, err := json.Marshal(ev)
	if err != nil {
		b.InvokeErr = err
		b.Failed = b.MessageIDs
		return b
	}
	b.Invocation, b.InvokeErr = p.o.Function.Invoke(ctx, payload)
	failed, whole := batchFailures(b, handles)
	if whole {
		b.Failed = b.MessageIDs
		return b
	}
	for _, id := range b.MessageIDs {
		if failed[id] {
			b.Failed = append(b.Failed, id)
			continue
		}
		if _, err := p.o.Client.DeleteMessage(ctx, &sqs.DeleteMessageInput{QueueUrl: aws.String(p.o.QueueURL), ReceiptHandle: aws.String(handles[id])}); err == nil {
			b.Deleted = append(b.Deleted, id)
		}
	}
	return b
}

// batchFailures reads the function's ReportBatchItemFailures answer. whole
// is true when the batch failed as a whole: the invoke failed, the function
// failed, or the answer is malformed or names a message not in the batch.
func batchFailures(b Batch, handles map[string]string) (failed map[string]bool, whole bool) {
	if b.InvokeErr != nil || b.Invocation.FunctionError != "" || b.Invocation.Status >= 300 {
		return nil, true
	}
	var resp events.SQSEventResponse
	if len(b.Invocation.Payload) > 0 && string(b.Invocation.Payload) != "null" {
		if err := json.Unmarshal(b.Invocation.Payload, &resp); err != nil {
			return nil, true
		}
	}
	failed = map[string]bool{}
	for _, f := range resp.BatchItemFailures {
		if _, ok := handles[f.ItemIdentifier]; !ok {
			return nil, true
		}
		failed[f.ItemIdentifier] = true
	}
	return failed, false
}

func (p *Poller) record(m types.Message, count int) events.SQSMessage {
	attrs := map[string]string{}
	for k, v := range m.Attributes {
		attrs[k] = v
	}
	// goaws always says 1; Lambda passes SQS's count through.
	attrs["ApproximateReceiveCount"] = strconv.Itoa(count)
	mattrs := map[string]events.SQSMessageAttribute{}
	for k, v := range m.MessageAttributes {
		mattrs[k] = events.SQSMessageAttribute{
			StringValue: v.StringValue,
			BinaryValue: v.BinaryValue,
			DataType:    aws.ToString(v.DataType),
		}
	}
	return events.SQSMessage{
		MessageId:              aws.ToString(m.MessageId),
		ReceiptHandle:          aws.ToString(m.ReceiptHandle),
		Body:                   aws.ToString(m.Body),
		Md5OfBody:              aws.ToString(m.MD5OfBody),
		Md5OfMessageAttributes: aws.ToString(m.MD5OfMessageAttributes),
		Attributes:             attrs,
		MessageAttributes:      mattrs,
		EventSource:            "aws:sqs",
		EventSourceARN:         p.o.QueueARN,
		AWSRegion:              "us-east-1",
	}
}

// Received returns how many times the poller received the message.
func (p *Poller) Received(messageID string) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.received[messageID]
}

// Batches returns a copy of every batch processed so far.
func (p *Poller) Batches() []Batch {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]Batch(nil), p.batches...)
}

// String summarizes a batch for logs.
func (b Batch) String() string {
	status := "ok"
	switch {
	case b.InvokeErr != nil:
		status = "invoke error: " + b.InvokeErr.Error()
	case b.Invocation.FunctionError != "":
		status = "function error " + b.Invocation.FunctionError
	}
	return fmt.Sprintf("%d message(s), %s, deleted %d, left %d", len(b.MessageIDs), status, len(b.Deleted), len(b.Failed))
}

func lastSegment(u string) string {
	for i := len(u) - 1; i >= 0; i-- {
		if u[i] == '/' {
			return u[i+1:]
		}
	}
	return u
}

func sleep(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}
