package lambdaidemcdk

import (
	"fmt"
	"time"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsdynamodb"
	"github.com/aws/aws-cdk-go/awscdk/v2/awskinesis"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambda"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambdaeventsources"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssqs"
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"
)

// Defaults and limits of [NewStreamSource], from the Lambda event source
// mapping parameters for Kinesis and DynamoDB Streams
// (https://docs.aws.amazon.com/lambda/latest/dg/services-kinesis-parameters.html)
// and the streams' retention
// (https://docs.aws.amazon.com/streams/latest/dev/kinesis-extended-retention.html,
// https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/Streams.html).
const (
	// DefaultStreamRetryAttempts is how many times the mapping retries a
	// failed batch before it sends the records to the on-failure
	// destination and moves on. (Lambda's own default, -1, retries until the
	// records expire: a poison record would block its shard for the whole
	// retention period.)
	DefaultStreamRetryAttempts = 10
	// UnboundedRetryAttempts, as StreamSourceProps.RetryAttempts, retries a
	// failed batch until its records expire or pass MaxRecordAge.
	UnboundedRetryAttempts = -1
	// KinesisDefaultRetention is a Kinesis data stream's retention unless
	// changed; KinesisMaxRetention the most it can be.
	KinesisDefaultRetention = 24 * time.Hour
	KinesisMaxRetention     = 8760 * time.Hour
	// DynamoDBStreamRetention is how long a DynamoDB stream keeps a record.
	DynamoDBStreamRetention = 24 * time.Hour
	// MinMaxRecordAge and MaxMaxRecordAge bound the mapping's maximum record
	// age (60 seconds to 7 days).
	MinMaxRecordAge    = time.Minute
	MaxMaxRecordAge    = 7 * 24 * time.Hour
	maxRetryAttempts   = 10000
	defaultFailureKeep = 14 * 24 * time.Hour
)

// StreamHorizon returns how long after it arrives a stream record may still
// be sent to the function: the stream's retention, or the mapping's maximum
// record age when that is set (positive) and shorter. The idempotency TTL
// must be at least this long, or a retry after the record expires runs the
// operation again.
func StreamHorizon(retention, maxRecordAge time.Duration) time.Duration {
	if maxRecordAge > 0 && (retention == 0 || maxRecordAge < retention) {
		return maxRecordAge
	}
	return retention
}

// StreamSourceProps configures [NewStreamSource]. Function, Table and one of
// Stream and DynamoDBTable are required; every other zero field takes the
// documented default.
type StreamSourceProps struct {
	// Function consumes the stream. Its handler should answer with the
	// partial batch response (the lambdaidem streambatch adapter does).
	Function awslambda.Function
	// Table is the idempotency table; it is bound to the function with
	// [Table.Bind] and the TTL below, so the function must not be bound yet.
	Table *Table

	// Stream is a Kinesis data stream to read.
	Stream awskinesis.IStream
	// StreamRetention is the Kinesis stream's retention period, 24 hours to
	// 8,760 hours: the mapping may send a record again for that long. A
	// stream construct does not expose it, so say it here. Required for a
	// Kinesis stream unless MaxRecordAge is set.
	StreamRetention time.Duration

	// DynamoDBTable is a DynamoDB table with a stream to read (its retention
	// is 24 hours, fixed).
	DynamoDBTable awsdynamodb.ITable

	// StartingPosition is where a new mapping starts reading. Default
	// TRIM_HORIZON: every record the stream still holds.
	StartingPosition awslambda.StartingPosition
	// BatchSize is the largest batch handed to one invocation. Default: the
	// mapping's (100).
	BatchSize int
	// MaxBatchingWindow is how long the mapping may gather a batch. Default:
	// none.
	MaxBatchingWindow time.Duration
	// ParallelizationFactor is how many batches of one shard run at once
	// (1–10; records with the same partition key stay in order). Default 1.
	ParallelizationFactor int
	// RetryAttempts is how many times a failed batch is retried before its
	// records go to the on-failure destination, 1 to 10,000, or
	// [UnboundedRetryAttempts]. Default [DefaultStreamRetryAttempts].
	RetryAttempts int
	// MaxRecordAge discards records older than this, whole seconds from 60
	// seconds to 7 days. Default: none (records are retried until the stream
	// drops them or RetryAttempts runs out).
	MaxRecordAge time.Duration
	// OnFailure receives the description of discarded records. Default: an
	// SQS queue ("FailureQueue") that keeps them 14 days.
	OnFailure awslambda.IEventSourceDlq

	// TTL is the idempotency retry horizon set as the function's
	// IDEMPOTENCY_TTL. Default: the [StreamHorizon]; a shorter value is
	// refused with [ErrTTLShorterThanHorizon].
	TTL time.Duration
}

// StreamSource is what [NewStreamSource] built.
type StreamSource struct {
	// Construct is the scope holding the failure queue.
	Construct constructs.Construct
	// EventSource is the Kinesis or DynamoDB event source added to the
	// function.
	EventSource awslambda.IEventSource
	// FailureQueue is the default on-failure destination, or nil when
	// props.OnFailure was given.
	FailureQueue awssqs.Queue
	// Horizon is the stream's [StreamHorizon].
	Horizon time.Duration
	// TTL is the retry horizon given to the function (IDEMPOTENCY_TTL).
	TTL time.Duration
}

// NewStreamSource feeds a Kinesis data stream or a DynamoDB stream to
// props.Function through an event source mapping with
// ReportBatchItemFailures (failures are reported by sequence number and
// the shard resumes there), BisectBatchOnFunctionError (a batch whose
// invocation failed is split in two and retried, without counting against
// the retry attempts), bounded retry attempts, the maximum record age if
// set, and an on-failure destination; and it binds props.Table to the
// function with the TTL ([Table.Bind]).
//
// It refuses, by returning an error and creating nothing:
//
//   - a TTL below the [StreamHorizon] (the stream's retention, or the
//     maximum record age if shorter): [ErrTTLShorterThanHorizon];
//   - an id already used in scope, neither or both of Stream and
//     DynamoDBTable, a table without a stream,
//     a Kinesis stream without StreamRetention or MaxRecordAge, and
//     settings out of the mapping's ranges: [ErrInvalidProps];
//   - a function already bound to an idempotency table: [ErrAlreadyBound].
func NewStreamSource(scope constructs.Construct, id string, props StreamSourceProps) (*StreamSource, error) {
	p := props
	if err := p.validate(); err != nil {
		return nil, err
	}
	retention := p.StreamRetention
	if p.DynamoDBTable != nil {
		retention = DynamoDBStreamRetention
	}
	horizon := StreamHorizon(retention, p.MaxRecordAge)
	if p.TTL == 0 {
		p.TTL = horizon
	}
	if p.TTL < horizon {
		return nil, fmt.Errorf("%w: TTL %v is shorter than the stream's retry horizon %v "+
			"(the stream's retention %v, or the maximum record age %v if shorter); "+
			"Lambda may send a record again until then, and a retry after the record expires would run the operation again: "+
			"set TTL to at least %v or set a shorter MaxRecordAge",
			ErrTTLShorterThanHorizon, p.TTL, horizon, retention, p.MaxRecordAge, horizon)
	}
	if _, _, err := p.Table.checkBind(p.Function, p.TTL); err != nil {
		return nil, err
	}
	if err := checkID(scope, id); err != nil {
		return nil, err
	}

	c := constructs.NewConstruct(scope, jsii.String(id))
	src := &StreamSource{Construct: c, Horizon: horizon, TTL: p.TTL}
	onFailure := p.OnFailure
	if onFailure == nil {
		src.FailureQueue = awssqs.NewQueue(c, jsii.String("FailureQueue"), &awssqs.QueueProps{
			RetentionPeriod: seconds(defaultFailureKeep),
			EnforceSSL:      jsii.Bool(true),
		})
		suppressNag(src.FailureQueue, nagDLQRedrive, nagFailureDestinationIsDLQ)
		onFailure = awslambdaeventsources.NewSqsDlq(src.FailureQueue)
	}
	if p.StartingPosition == "" {
		p.StartingPosition = awslambda.StartingPosition_TRIM_HORIZON
	}
	if p.RetryAttempts == 0 {
		p.RetryAttempts = DefaultStreamRetryAttempts
	}
	var batchSize, parallel *float64
	if p.BatchSize != 0 {
		batchSize = jsii.Number(float64(p.BatchSize))
	}
	if p.ParallelizationFactor != 0 {
		parallel = jsii.Number(float64(p.ParallelizationFactor))
	}
	var window, maxAge = optionalSeconds(p.MaxBatchingWindow), optionalSeconds(p.MaxRecordAge)
	if p.Stream != nil {
		src.EventSource = awslambdaeventsources.NewKinesisEventSource(p.Stream, &awslambdaeventsources.KinesisEventSourceProps{
			StartingPosition: p.StartingPosition, BatchSize: batchSize, MaxBatchingWindow: window,
			ParallelizationFactor: parallel, ReportBatchItemFailures: jsii.Bool(true), BisectBatchOnError: jsii.Bool(true),
			RetryAttempts: jsii.Number(float64(p.RetryAttempts)), MaxRecordAge: maxAge, OnFailure: onFailure,
		})
	} else {
		src.EventSource = awslambdaeventsources.NewDynamoEventSource(p.DynamoDBTable, &awslambdaeventsources.DynamoEventSourceProps{
			StartingPosition: p.StartingPosition, BatchSize: batchSize, MaxBatchingWindow: window,
			ParallelizationFactor: parallel, ReportBatchItemFailures: jsii.Bool(true), BisectBatchOnError: jsii.Bool(true),
			RetryAttempts: jsii.Number(float64(p.RetryAttempts)), MaxRecordAge: maxAge, OnFailure: onFailure,
		})
	}
	p.Function.AddEventSource(src.EventSource)
	if _, err := p.Table.Bind(p.Function, p.TTL); err != nil {
		// Unreachable: checkBind above accepted the same arguments.
		return nil, err
	}
	return src, nil
}

// validate checks everything NewStreamSource needs before it creates
// anything.
func (p *StreamSourceProps) validate() error {
	switch {
	case p.Function == nil || p.Table == nil:
		return fmt.Errorf("%w: NewStreamSource needs a Function and a Table", ErrInvalidProps)
	case refuseTenantMapping(p.Function, "a stream") != nil:
		return refuseTenantMapping(p.Function, "a stream")
	case (p.Stream == nil) == (p.DynamoDBTable == nil):
		return fmt.Errorf("%w: NewStreamSource needs exactly one of Stream (Kinesis) and DynamoDBTable", ErrInvalidProps)
	case p.DynamoDBTable != nil && p.DynamoDBTable.TableStreamArn() == nil:
		return fmt.Errorf("%w: the DynamoDB table has no stream: set its Stream (StreamViewType) property", ErrInvalidProps)
	case p.DynamoDBTable != nil && p.StreamRetention != 0 && p.StreamRetention != DynamoDBStreamRetention:
		return fmt.Errorf("%w: a DynamoDB stream keeps records %v; StreamRetention %v cannot change that",
			ErrInvalidProps, DynamoDBStreamRetention, p.StreamRetention)
	case p.Stream != nil && p.StreamRetention == 0 && p.MaxRecordAge == 0:
		return fmt.Errorf("%w: say the Kinesis stream's retention period (StreamRetention, 24h to 8760h) or set MaxRecordAge: "+
			"the idempotency TTL must cover the time Lambda may send a record again", ErrInvalidProps)
	case p.RetryAttempts != UnboundedRetryAttempts && (p.RetryAttempts < 0 || p.RetryAttempts > maxRetryAttempts):
		return fmt.Errorf("%w: RetryAttempts %d is outside 1..%d (or UnboundedRetryAttempts)", ErrInvalidProps, p.RetryAttempts, maxRetryAttempts)
	case p.ParallelizationFactor < 0 || p.ParallelizationFactor > 10:
		return fmt.Errorf("%w: ParallelizationFactor %d is outside 1..10", ErrInvalidProps, p.ParallelizationFactor)
	case p.BatchSize < 0 || p.BatchSize > 10000:
		return fmt.Errorf("%w: BatchSize %d is outside 1..10000", ErrInvalidProps, p.BatchSize)
	}
	if p.Stream != nil && p.StreamRetention != 0 {
		if err := checkSeconds("StreamRetention", p.StreamRetention, KinesisDefaultRetention, KinesisMaxRetention); err != nil {
			return err
		}
	}
	if p.MaxRecordAge != 0 {
		if err := checkSeconds("MaxRecordAge", p.MaxRecordAge, MinMaxRecordAge, MaxMaxRecordAge); err != nil {
			return err
		}
	}
	if p.MaxBatchingWindow != 0 {
		if err := checkSeconds("MaxBatchingWindow", p.MaxBatchingWindow, time.Second, 5*time.Minute); err != nil {
			return err
		}
	}
	return nil
}

// optionalSeconds converts a whole-second duration to a CDK Duration, or
// nil for zero.
func optionalSeconds(d time.Duration) awscdk.Duration {
	if d == 0 {
		return nil
	}
	return seconds(d)
}
