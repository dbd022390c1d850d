package lambdaidemcdk

import (
	"fmt"
	"time"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awscloudwatch"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsdynamodb"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsevents"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsiam"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambda"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambdaeventsources"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssns"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssqs"
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"
)

// The environment variables [NewOutbox] sets.
const (
	// OutboxTableEnv names the outbox table, on the relay and on every
	// function given to [Outbox.GrantStage] (dynamostore.Options.OutboxTable).
	OutboxTableEnv = "OUTBOX_TABLE"
)

// DefaultOutboxAgeAlarm is the default threshold of the alarm on the age of
// the oldest unpublished message.
const DefaultOutboxAgeAlarm = 5 * time.Minute

// OutboxProps configures [NewOutbox]. Relay is required; every other zero
// field takes its documented default.
type OutboxProps struct {
	// Relay is the relay function (dynamostore/relay's Handler). It is
	// given the outbox table's stream through an event source mapping, the
	// reads and conditional writes the relay makes on the table, and the
	// right to publish to the targets below, nothing more.
	Relay awslambda.Function

	// Queues, Topics and EventBuses are the targets the relay may publish
	// to: sqs:SendMessage, sns:Publish and events:PutEvents on exactly these
	// (and kms:GenerateDataKey/Decrypt on an encrypted queue's or topic's key,
	// as the CDK's grants add).
	Queues     []awssqs.IQueue
	Topics     []awssns.ITopic
	EventBuses []awsevents.IEventBus

	// RetryAttempts is how many times a failed batch is retried before its
	// records go to the on-failure destination. Default
	// [DefaultStreamRetryAttempts].
	RetryAttempts int
	// OnFailure receives the description of records that kept failing (a
	// target refusing a message, a window that has passed). Default: an SQS
	// queue ("FailureQueue") that keeps them 14 days.
	OnFailure awslambda.IEventSourceDlq

	// AgeAlarm is the alarm threshold on the age of the oldest unpublished
	// message the relay is still trying (the mapping's IteratorAge).
	// Default [DefaultOutboxAgeAlarm].
	AgeAlarm time.Duration
	// Actions are added to both alarms.
	Actions []awscloudwatch.IAlarmAction

	// RemovalPolicy of the table. Default RETAIN (an unpublished message is
	// a commitment); DESTROY needs NoDeletionProtection too.
	RemovalPolicy awscdk.RemovalPolicy
	// NoDeletionProtection turns the table's deletion protection off.
	NoDeletionProtection bool
}

// Outbox is what [NewOutbox] built.
type Outbox struct {
	// Construct is the scope of the resources below.
	Construct constructs.Construct
	// Table is the outbox table: partition key "id" (S), TTL "expiration",
	// a NEW_IMAGE stream, point-in-time recovery, deletion protection.
	Table awsdynamodb.Table
	// EventSource feeds the table's stream to the relay.
	EventSource awslambda.IEventSource
	// FailureQueue is the default on-failure destination, or nil when
	// props.OnFailure was given.
	FailureQueue awssqs.Queue
	// AgeAlarm fires when the oldest unpublished message the relay is still
	// trying is older than props.AgeAlarm.
	AgeAlarm awscloudwatch.Alarm
	// PoisonAlarm fires when a record reached the default failure queue:
	// its messages stay unpublished until an operator publishes them
	// (relay.Relay.Publish). Nil when props.OnFailure was given.
	PoisonAlarm awscloudwatch.Alarm
}

// NewOutbox creates the outbox of lambdaidem/outbox: the table that
// dynamostore writes staged messages to with each commit, and the relay's
// event source mapping on its stream (ReportBatchItemFailures,
// BisectBatchOnFunctionError, bounded retries, an on-failure destination,
// and a filter that invokes the relay only for unpublished items), the
// relay's grants (GetItem and UpdateItem on the table; publishing to the
// given targets), OUTBOX_TABLE on the relay, and two alarms: the age of the
// oldest unpublished message being tried, and a record given up on.
//
// It refuses, by returning an error wrapping [ErrInvalidProps] and creating
// nothing: no Relay, an id already used in scope, a negative AgeAlarm,
// RetryAttempts out of range, DESTROY without NoDeletionProtection.
func NewOutbox(scope constructs.Construct, id string, props OutboxProps) (*Outbox, error) {
	p := props
	switch {
	case p.Relay == nil:
		return nil, fmt.Errorf("%w: NewOutbox needs the Relay function", ErrInvalidProps)
	case p.AgeAlarm < 0:
		return nil, fmt.Errorf("%w: negative AgeAlarm", ErrInvalidProps)
	case p.RetryAttempts < 0 || p.RetryAttempts > maxRetryAttempts:
		return nil, fmt.Errorf("%w: RetryAttempts %d is outside 1..%d", ErrInvalidProps, p.RetryAttempts, maxRetryAttempts)
	case p.RemovalPolicy == awscdk.RemovalPolicy_DESTROY && !p.NoDeletionProtection:
		return nil, fmt.Errorf("%w: RemovalPolicy DESTROY with deletion protection on: set NoDeletionProtection too", ErrInvalidProps)
	}
	if err := checkID(scope, id); err != nil {
		return nil, err
	}
	if p.AgeAlarm == 0 {
		p.AgeAlarm = DefaultOutboxAgeAlarm
	}
	if p.RetryAttempts == 0 {
		p.RetryAttempts = DefaultStreamRetryAttempts
	}
	if p.RemovalPolicy == "" {
		p.RemovalPolicy = awscdk.RemovalPolicy_RETAIN
	}

	c := constructs.NewConstruct(scope, jsii.String(id))
	o := &Outbox{Construct: c}
	o.Table = awsdynamodb.NewTable(c, jsii.String("Table"), &awsdynamodb.TableProps{
		PartitionKey:        &awsdynamodb.Attribute{Name: jsii.String("id"), Type: awsdynamodb.AttributeType_STRING},
		BillingMode:         awsdynamodb.BillingMode_PAY_PER_REQUEST,
		TimeToLiveAttribute: jsii.String("expiration"),
		Stream:              awsdynamodb.StreamViewType_NEW_IMAGE,
		PointInTimeRecoverySpecification: &awsdynamodb.PointInTimeRecoverySpecification{
			PointInTimeRecoveryEnabled: jsii.Bool(true),
		},
		Encryption:         awsdynamodb.TableEncryption_DEFAULT,
		DeletionProtection: jsii.Bool(!p.NoDeletionProtection),
		RemovalPolicy:      p.RemovalPolicy,
	})

	onFailure := p.OnFailure
	if onFailure == nil {
		o.FailureQueue = awssqs.NewQueue(c, jsii.String("FailureQueue"), &awssqs.QueueProps{
			RetentionPeriod: seconds(defaultFailureKeep),
			EnforceSSL:      jsii.Bool(true),
		})
		suppressNag(o.FailureQueue, nagDLQRedrive, nagFailureDestinationIsDLQ)
		onFailure = awslambdaeventsources.NewSqsDlq(o.FailureQueue)
	}
	// The relay acts on unpublished items only: its own marks' changes and
	// TTL deletions do not invoke it.
	pending := awslambda.FilterCriteria_Filter(&map[string]any{
		"dynamodb": map[string]any{"NewImage": map[string]any{"status": map[string]any{
			"S": awslambda.FilterRule_IsEqual(jsii.String("PENDING")),
		}}},
	})
	o.EventSource = awslambdaeventsources.NewDynamoEventSource(o.Table, &awslambdaeventsources.DynamoEventSourceProps{
		StartingPosition:        awslambda.StartingPosition_TRIM_HORIZON,
		ReportBatchItemFailures: jsii.Bool(true),
		BisectBatchOnError:      jsii.Bool(true),
		RetryAttempts:           jsii.Number(float64(p.RetryAttempts)),
		OnFailure:               onFailure,
		Filters:                 &[]*map[string]any{pending},
	})
	p.Relay.AddEventSource(o.EventSource)
	o.Table.Grant(p.Relay, jsii.String("dynamodb:GetItem"), jsii.String("dynamodb:UpdateItem"))
	p.Relay.AddEnvironment(jsii.String(OutboxTableEnv), o.Table.TableName(), nil)
	for _, q := range p.Queues {
		q.GrantSendMessages(p.Relay)
	}
	for _, t := range p.Topics {
		t.GrantPublish(p.Relay)
	}
	for _, b := range p.EventBuses {
		b.GrantPutEventsTo(p.Relay, nil)
	}

	alarm := func(name, what string, m awscloudwatch.IMetric, threshold float64) awscloudwatch.Alarm {
		a := awscloudwatch.NewAlarm(c, jsii.String(name), &awscloudwatch.AlarmProps{
			Metric:             m,
			Threshold:          jsii.Number(threshold),
			EvaluationPeriods:  jsii.Number(1),
			ComparisonOperator: awscloudwatch.ComparisonOperator_GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
			TreatMissingData:   awscloudwatch.TreatMissingData_NOT_BREACHING,
			AlarmDescription:   jsii.String(what),
		})
		if len(p.Actions) > 0 {
			a.AddAlarmAction(p.Actions...)
		}
		return a
	}
	o.AgeAlarm = alarm("AgeAlarm", fmt.Sprintf("the oldest unpublished outbox message the relay is still trying is older than %v "+
		"(the relay's IteratorAge): a target refuses or the relay fails; see the relay's Error log lines", p.AgeAlarm),
		p.Relay.Metric(jsii.String("IteratorAge"), &awscloudwatch.MetricOptions{Statistic: jsii.String("Maximum"), Period: awscdk.Duration_Minutes(jsii.Number(1))}),
		float64(p.AgeAlarm.Milliseconds()))
	if o.FailureQueue != nil {
		o.PoisonAlarm = alarm("PoisonAlarm", "an outbox record was given up on after the mapping's retries: its messages stay "+
			"unpublished (they never expire) until an operator fixes the cause and publishes them (relay.Relay.Publish)",
			o.FailureQueue.MetricApproximateNumberOfMessagesVisible(&awscloudwatch.MetricOptions{Statistic: jsii.String("Maximum"), Period: awscdk.Duration_Minutes(jsii.Number(1))}), 1)
	}
	return o, nil
}

// GrantStage lets fn commit outbox messages: a Put on the outbox table
// inside its commit's TransactWriteItems (dynamodb:PutItem on the table),
// and sets OUTBOX_TABLE on it for dynamostore.Options.OutboxTable (which
// dynamostore.ReadEnv reads).
//
// fn may be any awslambda.IFunction, as for [Table.Bind]: for an alias or a
// version of a function of this app the environment is set on that
// function; an imported function's environment is not this app's, so
// GrantStage grants (where the import names the role) and returns an
// [*EnvironmentNotSetError] holding the variable to set where it is
// defined. A function that already sets OUTBOX_TABLE to another value is
// refused ([ErrEnvironmentConflict]), and a later change fails synthesis.
func (o *Outbox) GrantStage(fn awslambda.IFunction) (awsiam.Grant, error) {
	b, err := resolveFunction(fn)
	if err != nil {
		return nil, fmt.Errorf("%w: GrantStage needs a function", err)
	}
	env := map[string]*string{OutboxTableEnv: o.Table.TableName()}
	grant := func() awsiam.Grant { return o.Table.Grant(fn, jsii.String("dynamodb:PutItem")) }
	if b.local == nil {
		if fn.Role() == nil {
			return nil, &EnvironmentNotSetError{Function: b.path, Environment: env}
		}
		return grant(), &EnvironmentNotSetError{Function: b.path, Environment: env, Granted: true}
	}
	if err := checkEnvironment(b.local, env); err != nil {
		return nil, err
	}
	setEnvironment(b.local, env, "GrantStage of outbox "+*o.Table.Node().Path())
	return grant(), nil
}
