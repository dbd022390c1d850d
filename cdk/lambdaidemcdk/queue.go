package lambdaidemcdk

import (
	"fmt"
	"strings"
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
	// moves it to the dead-letter queue. AWS recommends at least 5 for a queue
	// that feeds Lambda ("Set the maxReceiveCount on the source queue's redrive
	// policy to at least 5. This improves the chances of messages being
	// processed before reaching the DLQ": AWS Lambda operator guide,
	// "Understanding SQS retries"): throttling alone returns messages to the
	// queue and counts receives, so a lower count can dead-letter messages that
	// never ran.
	DefaultMaxReceiveCount = 5
	// DefaultRetentionPeriod is the source queue's retention (SQS's own default).
	DefaultRetentionPeriod = 4 * 24 * time.Hour
	// DefaultDeadLetterRetention is the dead-letter queue's retention (the SQS
	// maximum), the longest time to inspect and redrive a failed message.
	DefaultDeadLetterRetention = 14 * 24 * time.Hour
	// VisibilityTimeoutFactor is the minimum ratio of the queue's visibility
	// timeout to the function timeout (AWS guidance for SQS event sources).
	VisibilityTimeoutFactor = 6
	// defaultFunctionTimeout is Lambda's timeout when none is configured.
	// MaxBatchingWindow is the longest batching window of an SQS event source
	// (Lambda's MaximumBatchingWindowInSeconds, 300 s).
	MaxBatchingWindow = 5 * time.Minute
	// MaxBatchSizeWithoutWindow is the largest batch size of an SQS event
	// source without a batching window, and of a FIFO queue.
	MaxBatchSizeWithoutWindow = 10
	// MaxBatchSize is the largest batch size of a standard queue's event
	// source with a batching window.
	MaxBatchSize = 10000

	defaultFunctionTimeout = 3 * time.Second
	maxVisibilityTimeout   = 12 * time.Hour
	minRetentionPeriod     = time.Minute
	maxRetentionPeriod     = 14 * 24 * time.Hour
	maxQueueNameLength     = 80
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
	// Table is the idempotency table; it is bound to the function with
	// [Table.Bind] and the TTL below, so the function must not be bound yet.
	Table *Table
	// QueueName is the physical name of the source queue; the dead-letter queue
	// gets the same name with "-dlq" appended (before ".fifo" for a FIFO
	// queue, whose names end in ".fifo", added if missing). Letters, digits,
	// '-' and '_', and the names at most 80 characters. Default: generated
	// names.
	QueueName string
	// FIFO makes both queues FIFO queues. The event source then takes batches
	// of at most 10 and no batching window (Lambda's limits for FIFO
	// sources), and the function's handler must keep a message group's order
	// (the lambdaidem sqsbatch adapter does). Senders give each message a
	// MessageDeduplicationId. Default: standard queues.
	FIFO bool
	// VisibilityTimeout of the source queue, in whole seconds, at most 12 hours.
	// Default [MinVisibilityTimeout] of the function timeout and batching window;
	// a smaller value is refused with [ErrVisibilityTimeoutTooShort].
	VisibilityTimeout time.Duration
	// RetentionPeriod of the source queue, whole seconds from one minute to 14
	// days. Default [DefaultRetentionPeriod] (4 days).
	RetentionPeriod time.Duration
	// MaxReceiveCount is the number of receives before a message moves to the
	// dead-letter queue, 1 to 1000. Default [DefaultMaxReceiveCount] (5, AWS's
	// guidance for Lambda; a lower value is accepted when set explicitly).
	MaxReceiveCount int
	// DeadLetterRetention is the dead-letter queue's retention. Default
	// [DefaultDeadLetterRetention] (14 days).
	DeadLetterRetention time.Duration
	// BatchSize is the largest batch handed to one invocation: 1 to 10
	// without a batching window or on a FIFO queue, 1 to 10000 with a window.
	// Default: the event source's default (10).
	BatchSize int
	// MaxBatchingWindow is how long the poller may gather a batch, whole
	// seconds up to 5 minutes; not on a FIFO queue. Default: none.
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
// through an event source mapping with ReportBatchItemFailures, and binds
// props.Table to the function with the TTL ([Table.Bind]). It refuses, by
// returning an error and creating nothing, a setup that breaks at-most-once
// effects:
//
//   - a VisibilityTimeout below [MinVisibilityTimeout] (six times the function
//     timeout plus the batching window): [ErrVisibilityTimeoutTooShort];
//   - a TTL below the queue's [RetryHorizon] (the larger of the retention period
//     and MaxReceiveCount × VisibilityTimeout): [ErrTTLShorterThanHorizon];
//   - a function already bound to an idempotency table: [ErrAlreadyBound].
//
// Out-of-range settings (batch size, batching window, a FIFO queue with a
// window or batches over 10, retention, maxReceiveCount, queue names), an id
// already used in scope, and a
// function timeout that is not known at synthesis time (a token) are refused
// with [ErrInvalidProps]. Every check runs before anything is created.
func NewQueueSource(scope constructs.Construct, id string, props QueueSourceProps) (*QueueSource, error) {
	p := props
	if err := checkID(scope, id); err != nil {
		return nil, err
	}
	if p.Function == nil || p.Table == nil {
		return nil, fmt.Errorf("%w: NewQueueSource needs a Function and a Table", ErrInvalidProps)
	}
	if err := refuseTenantMapping(p.Function, "an SQS queue"); err != nil {
		return nil, err
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
	if err := p.checkBatching(); err != nil {
		return nil, err
	}
	queueName, dlqName, err := p.queueNames()
	if err != nil {
		return nil, err
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
	if _, _, err := p.Table.checkBind(p.Function, p.TTL); err != nil {
		return nil, err
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
	if p.FIFO {
		queueProps.Fifo, dlqProps.Fifo = jsii.Bool(true), jsii.Bool(true)
	}
	if queueName != "" {
		queueProps.QueueName, dlqProps.QueueName = jsii.String(queueName), jsii.String(dlqName)
	}
	dlq := awssqs.NewQueue(c, jsii.String("DeadLetterQueue"), dlqProps)
	suppressNag(dlq, nagDLQRedrive)
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
	suppressNag(addEventSource(p.Function, src), nagSQSNoDestination)
	if _, err := p.Table.Bind(p.Function, p.TTL); err != nil {
		// Unreachable: checkBind above accepted the same arguments.
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

// addEventSource adds src to fn and returns the event source mapping that
// creates (a new child of fn), or nil if there is none.
func addEventSource(fn awslambda.Function, src awslambda.IEventSource) constructs.IConstruct {
	before := map[string]bool{}
	for _, c := range *fn.Node().Children() {
		before[*c.Node().Id()] = true
	}
	fn.AddEventSource(src)
	for _, c := range *fn.Node().Children() {
		if !before[*c.Node().Id()] {
			return c
		}
	}
	return nil
}

// checkBatching refuses a batch size or batching window Lambda (and CDK's
// SqsEventSource, which would throw) refuses: see [MaxBatchSize],
// [MaxBatchSizeWithoutWindow], [MaxBatchingWindow].
func (p QueueSourceProps) checkBatching() error {
	if p.MaxBatchingWindow != 0 {
		if p.FIFO {
			return fmt.Errorf("%w: MaxBatchingWindow %v: a FIFO queue's event source has no batching window",
				ErrInvalidProps, p.MaxBatchingWindow)
		}
		if err := checkSeconds("MaxBatchingWindow", p.MaxBatchingWindow, time.Second, MaxBatchingWindow); err != nil {
			return err
		}
	}
	if p.BatchSize == 0 {
		return nil
	}
	limit, why := MaxBatchSize, "with a batching window"
	switch {
	case p.FIFO:
		limit, why = MaxBatchSizeWithoutWindow, "on a FIFO queue"
	case p.MaxBatchingWindow == 0:
		limit, why = MaxBatchSizeWithoutWindow, "without a batching window (set MaxBatchingWindow for larger batches)"
	}
	if p.BatchSize < 1 || p.BatchSize > limit {
		return fmt.Errorf("%w: BatchSize %d must be from 1 to %d %s", ErrInvalidProps, p.BatchSize, limit, why)
	}
	return nil
}

// queueNames returns the physical names of the source and dead-letter queues
// ("" for generated names), refusing names SQS would refuse.
func (p QueueSourceProps) queueNames() (queue, dlq string, err error) {
	if p.QueueName == "" {
		return "", "", nil
	}
	base, suffix := strings.TrimSuffix(p.QueueName, ".fifo"), ""
	if p.FIFO {
		suffix = ".fifo"
	} else if base != p.QueueName {
		return "", "", fmt.Errorf("%w: QueueName %q ends in .fifo but FIFO is not set", ErrInvalidProps, p.QueueName)
	}
	for _, r := range base {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_') {
			return "", "", fmt.Errorf("%w: QueueName %q may hold only letters, digits, '-' and '_'", ErrInvalidProps, p.QueueName)
		}
	}
	queue, dlq = base+suffix, base+"-dlq"+suffix
	if len(dlq) > maxQueueNameLength {
		return "", "", fmt.Errorf("%w: QueueName %q is too long: the dead-letter queue's name %q must be at most %d characters",
			ErrInvalidProps, p.QueueName, dlq, maxQueueNameLength)
	}
	return queue, dlq, nil
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
