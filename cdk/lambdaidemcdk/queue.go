package lambdaidemcdk

import (
	"fmt"
	"time"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambda"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambdaeventsources"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssqs"
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"
)

// Defaults and limits of [NewQueueSource].
const (
	// DefaultMaxReceiveCount is how many times a message is received before SQS
	// moves it to the dead-letter queue.
	DefaultMaxReceiveCount = 3
	// DefaultRetentionPeriod is the source queue's retention (SQS's own default).
	DefaultRetentionPeriod = 4 * 24 * time.Hour
	// DefaultDeadLetterRetention is the dead-letter queue's retention (the SQS
	// maximum), the longest time to inspect and redrive a failed message.
	DefaultDeadLetterRetention = 14 * 24 * time.Hour
	// VisibilityTimeoutFactor is the minimum ratio of the queue's visibility
	// timeout to the function timeout (AWS guidance for SQS event sources).
	VisibilityTimeoutFactor = 6
	// defaultFunctionTimeout is Lambda's timeout when none is configured.
	defaultFunctionTimeout = 3 * time.Second
	maxVisibilityTimeout   = 12 * time.Hour
	minRetentionPeriod     = time.Minute
	maxRetentionPeriod     = 14 * 24 * time.Hour
)

// MinVisibilityTimeout returns the shortest visibility timeout [NewQueueSource]
// accepts for a function with the given timeout and event source batching
// window: VisibilityTimeoutFactor × functionTimeout + batchingWindow. With less, a
// message whose invocation is still running (or waiting in a batch, or being
// retried by the poller after throttling) becomes visible again and a second
// invocation runs it concurrently.
func MinVisibilityTimeout(functionTimeout, batchingWindow time.Duration) time.Duration {
	return VisibilityTimeoutFactor*functionTimeout + batchingWindow
}

// RetryHorizon returns how long after its first delivery a message may still be
// delivered again: the larger of the queue's retention period (a message can wait,
// undeleted, that long) and maxReceiveCount × visibilityTimeout (the time the
// redrive policy lets it be received before it moves to the dead-letter queue).
// The idempotency TTL must be at least this long, or a late redelivery finds the
// record expired and runs the operation again.
//
// A message redriven by hand from the dead-letter queue is outside this horizon:
// redrive within the TTL, or raise the TTL to cover the delay.
func RetryHorizon(retentionPeriod, visibilityTimeout time.Duration, maxReceiveCount int) time.Duration {
	redrive := time.Duration(maxReceiveCount) * visibilityTimeout
	return max(retentionPeriod, redrive)
}

// QueueSourceProps configures [NewQueueSource]. Function and Table are required;
// every other zero field takes the documented default.
type QueueSourceProps struct {
	// Function consumes the queue. Its handler should return
	// events.SQSEventResponse (the lambdaidem sqsbatch adapter does).
	Function awslambda.Function
	// Table is the idempotency table; the function is granted its use with
	// [Table.GrantTo] and the TTL below.
	Table *Table
	// QueueName is the physical name of the source queue; the dead-letter queue
	// gets the same name with "-dlq" appended. Default: generated names.
	QueueName string
	// VisibilityTimeout of the source queue, in whole seconds, at most 12 hours.
	// Default [MinVisibilityTimeout] of the function timeout and batching window;
	// a smaller value is refused with [ErrVisibilityTimeoutTooShort].
	VisibilityTimeout time.Duration
	// RetentionPeriod of the source queue, whole seconds from one minute to 14
	// days. Default [DefaultRetentionPeriod] (4 days).
	RetentionPeriod time.Duration
	// MaxReceiveCount is the number of receives before a message moves to the
	// dead-letter queue, 1 to 1000. Default [DefaultMaxReceiveCount] (3).
	MaxReceiveCount int
	// DeadLetterRetention is the dead-letter queue's retention. Default
	// [DefaultDeadLetterRetention] (14 days).
	DeadLetterRetention time.Duration
	// BatchSize is the largest batch handed to one invocation. Default: the
	// event source's default (10).
	BatchSize int
	// MaxBatchingWindow is how long the poller may gather a batch. Default: none.
	MaxBatchingWindow time.Duration
	// TTL is the idempotency retry horizon set as the function's IDEMPOTENCY_TTL.
	// Default: the queue's [RetryHorizon]; a shorter value is refused with
	// [ErrTTLShorterThanHorizon].
	TTL time.Duration
}

// QueueSource is what [NewQueueSource] built.
type QueueSource struct {
	// Construct is the scope holding the two queues.
	Construct constructs.Construct
	// Queue is the source queue.
	Queue awssqs.Queue
	// DeadLetterQueue receives messages that failed MaxReceiveCount times.
	DeadLetterQueue awssqs.Queue
	// EventSource is the SQS event source added to the function, with
	// ReportBatchItemFailures on.
	EventSource awslambdaeventsources.SqsEventSource
	// VisibilityTimeout is the source queue's visibility timeout.
	VisibilityTimeout time.Duration
	// Horizon is the queue's retry horizon ([RetryHorizon]).
	Horizon time.Duration
	// TTL is the retry horizon given to the function (IDEMPOTENCY_TTL).
	TTL time.Duration
}

// NewQueueSource creates, in a construct scope/id, a source queue ("Queue") and
// its dead-letter queue ("DeadLetterQueue"), feeds the queue to props.Function
// through an event source mapping with ReportBatchItemFailures, and grants the
// function props.Table with the TTL. It refuses, by returning an error and
// creating nothing, a setup that breaks at-most-once effects:
//
//   - a VisibilityTimeout below [MinVisibilityTimeout] (six times the function
//     timeout plus the batching window): [ErrVisibilityTimeoutTooShort];
//   - a TTL below the queue's [RetryHorizon] (the larger of the retention period
//     and MaxReceiveCount × VisibilityTimeout): [ErrTTLShorterThanHorizon].
//
// Out-of-range settings and a function timeout that is not known at synthesis
// time (a token) are refused with [ErrInvalidProps].
func NewQueueSource(scope constructs.Construct, id string, props QueueSourceProps) (*QueueSource, error) {
	p := props
	if p.Function == nil || p.Table == nil {
		return nil, fmt.Errorf("%w: NewQueueSource needs a Function and a Table", ErrInvalidProps)
	}
	fnTimeout, err := functionTimeout(p.Function)
	if err != nil {
		return nil, err
	}
	if p.RetentionPeriod == 0 {
		p.RetentionPeriod = DefaultRetentionPeriod
	}
	if p.DeadLetterRetention == 0 {
		p.DeadLetterRetention = DefaultDeadLetterRetention
	}
	if p.MaxReceiveCount == 0 {
		p.MaxReceiveCount = DefaultMaxReceiveCount
	}
	minVisibility := MinVisibilityTimeout(fnTimeout, p.MaxBatchingWindow)
	if p.VisibilityTimeout == 0 {
		// SQS counts whole seconds: round the minimum up.
		p.VisibilityTimeout = (minVisibility + time.Second - 1).Truncate(time.Second)
	}
	if err := checkSeconds("VisibilityTimeout", p.VisibilityTimeout, time.Second, maxVisibilityTimeout); err != nil {
		return nil, err
	}
	if err := checkSeconds("RetentionPeriod", p.RetentionPeriod, minRetentionPeriod, maxRetentionPeriod); err != nil {
		return nil, err
	}
	if err := checkSeconds("DeadLetterRetention", p.DeadLetterRetention, minRetentionPeriod, maxRetentionPeriod); err != nil {
		return nil, err
	}
	if p.MaxReceiveCount < 1 || p.MaxReceiveCount > 1000 {
		return nil, fmt.Errorf("%w: MaxReceiveCount %d is outside 1..1000", ErrInvalidProps, p.MaxReceiveCount)
	}
	if p.VisibilityTimeout < minVisibility {
		return nil, fmt.Errorf("%w: visibility timeout %v is less than %d × function timeout %v + batching window %v = %v; "+
			"a message would become visible again while an invocation still runs it: "+
			"set VisibilityTimeout to at least %v or shorten the function timeout",
			ErrVisibilityTimeoutTooShort, p.VisibilityTimeout, VisibilityTimeoutFactor, fnTimeout,
			p.MaxBatchingWindow, minVisibility, minVisibility)
	}
	horizon := RetryHorizon(p.RetentionPeriod, p.VisibilityTimeout, p.MaxReceiveCount)
	if p.TTL == 0 {
		p.TTL = horizon
	}
	if p.TTL < horizon {
		return nil, fmt.Errorf("%w: TTL %v is shorter than the queue's retry horizon %v "+
			"(the larger of retention period %v and maxReceiveCount %d × visibility timeout %v); "+
			"a redelivery after the record expires would run the operation again: "+
			"set TTL to at least %v or shorten the retention period",
			ErrTTLShorterThanHorizon, p.TTL, horizon, p.RetentionPeriod, p.MaxReceiveCount,
			p.VisibilityTimeout, horizon)
	}

	c := constructs.NewConstruct(scope, jsii.String(id))
	dlqProps := &awssqs.QueueProps{
		RetentionPeriod: seconds(p.DeadLetterRetention),
		EnforceSSL:      jsii.Bool(true),
	}
	queueProps := &awssqs.QueueProps{
		VisibilityTimeout: seconds(p.VisibilityTimeout),
		RetentionPeriod:   seconds(p.RetentionPeriod),
		EnforceSSL:        jsii.Bool(true),
	}
	if p.QueueName != "" {
		queueProps.QueueName = jsii.String(p.QueueName)
		dlqProps.QueueName = jsii.String(p.QueueName + "-dlq")
	}
	dlq := awssqs.NewQueue(c, jsii.String("DeadLetterQueue"), dlqProps)
	queueProps.DeadLetterQueue = &awssqs.DeadLetterQueue{
		Queue:           dlq,
		MaxReceiveCount: jsii.Number(float64(p.MaxReceiveCount)),
	}
	queue := awssqs.NewQueue(c, jsii.String("Queue"), queueProps)

	srcProps := &awslambdaeventsources.SqsEventSourceProps{
		ReportBatchItemFailures: jsii.Bool(true),
	}
	if p.BatchSize != 0 {
		srcProps.BatchSize = jsii.Number(float64(p.BatchSize))
	}
	if p.MaxBatchingWindow != 0 {
		srcProps.MaxBatchingWindow = seconds(p.MaxBatchingWindow)
	}
	src := awslambdaeventsources.NewSqsEventSource(queue, srcProps)
	p.Function.AddEventSource(src)
	if err := p.Table.GrantTo(p.Function, p.TTL); err != nil {
		return nil, err
	}
	return &QueueSource{
		Construct:         c,
		Queue:             queue,
		DeadLetterQueue:   dlq,
		EventSource:       src,
		VisibilityTimeout: p.VisibilityTimeout,
		Horizon:           horizon,
		TTL:               p.TTL,
	}, nil
}

// functionTimeout returns fn's configured timeout, or Lambda's default.
func functionTimeout(fn awslambda.Function) (time.Duration, error) {
	d := fn.Timeout()
	if d == nil {
		return defaultFunctionTimeout, nil
	}
	if *d.IsUnresolved() {
		return 0, fmt.Errorf("%w: the function timeout is a token; the visibility timeout rule needs a concrete value",
			ErrInvalidProps)
	}
	return time.Duration(*d.ToMilliseconds(nil)) * time.Millisecond, nil
}

// checkSeconds refuses d unless it is whole seconds within [lo, hi].
func checkSeconds(name string, d, lo, hi time.Duration) error {
	if d%time.Second != 0 || d < lo || d > hi {
		return fmt.Errorf("%w: %s %v must be whole seconds from %v to %v", ErrInvalidProps, name, d, lo, hi)
	}
	return nil
}

// seconds converts a whole-second duration to a CDK Duration.
func seconds(d time.Duration) awscdk.Duration {
	return awscdk.Duration_Seconds(jsii.Number(d.Seconds()))
}
