package lambdaidemcdk_test

import (
	"testing"
	"time"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsdynamodb"
	"github.com/aws/aws-cdk-go/awscdk/v2/awskinesis"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambda"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambdaeventsources"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssns"
	"github.com/aws/jsii-runtime-go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lambdaidem/lambdaidem/cdk/internal/cdktest"
	"github.com/lambdaidem/lambdaidem/cdk/lambdaidemcdk"
)

func TestStreamHorizonIsTheRetentionOrTheMaximumRecordAge(t *testing.T) {
	h := time.Hour
	tests := []struct{ retention, maxAge, want time.Duration }{
		{24 * h, 0, 24 * h},       // Kinesis default, no maximum age
		{8760 * h, 0, 8760 * h},   // Kinesis maximum retention
		{168 * h, 6 * h, 6 * h},   // the maximum age cuts it short
		{24 * h, 168 * h, 24 * h}, // the stream drops records first
		{0, 2 * h, 2 * h},         // retention unknown: the maximum age bounds it
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, lambdaidemcdk.StreamHorizon(tt.retention, tt.maxAge), "retention %v, max age %v", tt.retention, tt.maxAge)
	}
}

func newKinesisStream(stack awscdk.Stack) awskinesis.Stream {
	return awskinesis.NewStream(stack, jsii.String("Transfers"), &awskinesis.StreamProps{
		RetentionPeriod: awscdk.Duration_Hours(jsii.Number(168)),
	})
}

func newStreamTable(stack awscdk.Stack, stream bool) awsdynamodb.Table {
	props := &awsdynamodb.TableProps{
		PartitionKey: &awsdynamodb.Attribute{Name: jsii.String("id"), Type: awsdynamodb.AttributeType_STRING},
		BillingMode:  awsdynamodb.BillingMode_PAY_PER_REQUEST,
	}
	if stream {
		props.Stream = awsdynamodb.StreamViewType_NEW_AND_OLD_IMAGES
	}
	return awsdynamodb.NewTable(stack, jsii.String("Orders"), props)
}

// The mapping is what the streambatch adapter needs
// (https://docs.aws.amazon.com/lambda/latest/dg/services-kinesis-parameters.html):
// ReportBatchItemFailures, BisectBatchOnFunctionError, bounded retries, the
// maximum record age, an on-failure destination; and the TTL covers the
// stream's horizon.
func TestNewStreamSourceWiresTheMapping(t *testing.T) {
	tests := []struct {
		name        string
		dynamo      bool
		props       lambdaidemcdk.StreamSourceProps
		retries     float64
		maxAge      any // seconds, or nil when not set
		parallel    any
		horizon     time.Duration
		ttlEnv      string
		ownFailures bool
	}{
		{
			name:    "Kinesis, 7-day retention: TTL 168h, 10 retries, failure queue",
			props:   lambdaidemcdk.StreamSourceProps{StreamRetention: 168 * time.Hour},
			retries: 10, horizon: 168 * time.Hour, ttlEnv: "168h0m0s",
		},
		{
			name: "Kinesis with a maximum record age: the age is the horizon",
			props: lambdaidemcdk.StreamSourceProps{
				StreamRetention: 168 * time.Hour, MaxRecordAge: 6 * time.Hour, RetryAttempts: 3, ParallelizationFactor: 2,
			},
			retries: 3, maxAge: float64(6 * 3600), parallel: float64(2), horizon: 6 * time.Hour, ttlEnv: "6h0m0s",
		},
		{
			name:    "DynamoDB stream: 24 hours, a longer TTL accepted",
			dynamo:  true,
			props:   lambdaidemcdk.StreamSourceProps{TTL: 48 * time.Hour, RetryAttempts: lambdaidemcdk.UnboundedRetryAttempts},
			retries: -1, horizon: 24 * time.Hour, ttlEnv: "48h0m0s",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			stack := newStack(t)
			table, err := lambdaidemcdk.NewTable(stack, "Idem", nil)
			require.NoError(t, err)
			props := tt.props
			props.Function = newFunction(t, stack, "Fn", 30*time.Second)
			props.Table = table
			var source any
			if tt.dynamo {
				orders := newStreamTable(stack, true)
				props.DynamoDBTable = orders
				source = cdktest.GetAtt(tmplID(t, stack, orders.Node().DefaultChild().(awscdk.CfnElement)), "StreamArn")
			} else {
				kin := newKinesisStream(stack)
				props.Stream = kin
				source = cdktest.GetAtt(tmplID(t, stack, kin.Node().DefaultChild().(awscdk.CfnElement)), "Arn")
			}
			src, err := lambdaidemcdk.NewStreamSource(stack, "Feed", props)
			require.NoError(t, err)
			assert.Equal(t, tt.horizon, src.Horizon)

			tmpl := cdktest.Synth(t, stack)
			mapping := tmpl.One(t, "AWS::Lambda::EventSourceMapping", "Fn")
			fn := tmpl.One(t, "AWS::Lambda::Function", "Fn")
			failures := tmpl.One(t, "AWS::SQS::Queue", "FeedFailureQueue")
			assert.Equal(t, source, mapping.Properties["EventSourceArn"])
			assert.Equal(t, cdktest.Ref(fn.LogicalID), mapping.Properties["FunctionName"])
			assert.Equal(t, []any{"ReportBatchItemFailures"}, mapping.Properties["FunctionResponseTypes"])
			assert.Equal(t, true, mapping.Properties["BisectBatchOnFunctionError"])
			assert.Equal(t, tt.retries, mapping.Properties["MaximumRetryAttempts"])
			assert.Equal(t, tt.maxAge, mapping.Properties["MaximumRecordAgeInSeconds"])
			assert.Equal(t, tt.parallel, mapping.Properties["ParallelizationFactor"])
			assert.Equal(t, "TRIM_HORIZON", mapping.Properties["StartingPosition"])
			assert.Equal(t, map[string]any{
				"OnFailure": map[string]any{"Destination": cdktest.GetAtt(failures.LogicalID, "Arn")},
			}, mapping.Properties["DestinationConfig"])
			assert.Equal(t, float64(14*24*3600), failures.Properties["MessageRetentionPeriod"])

			vars := fn.Properties["Environment"].(map[string]any)["Variables"].(map[string]any)
			assert.Equal(t, tt.ttlEnv, vars["IDEMPOTENCY_TTL"])
			// The one wildcard allowed: dynamodb:ListStreams, which IAM
			// authorizes on "*" only (the DynamoDB event source adds it).
			for _, st := range tmpl.Statements() {
				if len(st.Resources) == 1 && st.Resources[0] == "*" {
					assert.Equal(t, []string{"dynamodb:ListStreams"}, st.Actions)
					assert.True(t, tt.dynamo)
					continue
				}
				assert.NotContains(t, st.Resources, "*")
				assert.NotContains(t, st.Actions, "*")
			}
		})
	}
}

// tmplID returns the logical id CloudFormation gives a construct.
func tmplID(t *testing.T, stack awscdk.Stack, el awscdk.CfnElement) string {
	t.Helper()
	return *stack.GetLogicalId(el)
}

func TestNewStreamSourceRefusesUnsafeSettings(t *testing.T) {
	tests := []struct {
		name    string
		dynamo  string // "", "stream", "no stream"
		props   lambdaidemcdk.StreamSourceProps
		wantErr error
		wantMsg string
	}{
		{
			name:    "TTL shorter than the Kinesis retention",
			props:   lambdaidemcdk.StreamSourceProps{StreamRetention: 168 * time.Hour, TTL: 24 * time.Hour},
			wantErr: lambdaidemcdk.ErrTTLShorterThanHorizon,
			wantMsg: "lambdaidemcdk: idempotency TTL shorter than the retry horizon: TTL 24h0m0s is shorter than the stream's " +
				"retry horizon 168h0m0s (the stream's retention 168h0m0s, or the maximum record age 0s if shorter); " +
				"Lambda may send a record again until then, and a retry after the record expires would run the operation again: " +
				"set TTL to at least 168h0m0s or set a shorter MaxRecordAge",
		},
		{
			name:    "TTL shorter than the maximum record age",
			props:   lambdaidemcdk.StreamSourceProps{StreamRetention: 168 * time.Hour, MaxRecordAge: 12 * time.Hour, TTL: 6 * time.Hour},
			wantErr: lambdaidemcdk.ErrTTLShorterThanHorizon,
		},
		{
			name:    "TTL shorter than a DynamoDB stream's 24 hours",
			dynamo:  "stream",
			props:   lambdaidemcdk.StreamSourceProps{TTL: 23 * time.Hour},
			wantErr: lambdaidemcdk.ErrTTLShorterThanHorizon,
		},
		{name: "Kinesis retention unknown", props: lambdaidemcdk.StreamSourceProps{}, wantErr: lambdaidemcdk.ErrInvalidProps},
		{name: "Kinesis retention beyond 365 days", props: lambdaidemcdk.StreamSourceProps{StreamRetention: 8761 * time.Hour}, wantErr: lambdaidemcdk.ErrInvalidProps},
		{name: "Kinesis retention under 24 hours", props: lambdaidemcdk.StreamSourceProps{StreamRetention: 12 * time.Hour}, wantErr: lambdaidemcdk.ErrInvalidProps},
		{name: "maximum record age under a minute", props: lambdaidemcdk.StreamSourceProps{MaxRecordAge: 30 * time.Second}, wantErr: lambdaidemcdk.ErrInvalidProps},
		{name: "maximum record age over 7 days", props: lambdaidemcdk.StreamSourceProps{MaxRecordAge: 8 * 24 * time.Hour}, wantErr: lambdaidemcdk.ErrInvalidProps},
		{name: "retry attempts beyond 10,000", props: lambdaidemcdk.StreamSourceProps{StreamRetention: 24 * time.Hour, RetryAttempts: 10001}, wantErr: lambdaidemcdk.ErrInvalidProps},
		{name: "negative retry attempts", props: lambdaidemcdk.StreamSourceProps{StreamRetention: 24 * time.Hour, RetryAttempts: -2}, wantErr: lambdaidemcdk.ErrInvalidProps},
		{name: "parallelization beyond 10", props: lambdaidemcdk.StreamSourceProps{StreamRetention: 24 * time.Hour, ParallelizationFactor: 11}, wantErr: lambdaidemcdk.ErrInvalidProps},
		{name: "a table without a stream", dynamo: "no stream", wantErr: lambdaidemcdk.ErrInvalidProps},
		{name: "a DynamoDB stream's retention is fixed", dynamo: "stream", props: lambdaidemcdk.StreamSourceProps{StreamRetention: 48 * time.Hour}, wantErr: lambdaidemcdk.ErrInvalidProps},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			stack := newStack(t)
			table, err := lambdaidemcdk.NewTable(stack, "Idem", nil)
			require.NoError(t, err)
			props := tt.props
			props.Function = newFunction(t, stack, "Fn", 30*time.Second)
			props.Table = table
			switch tt.dynamo {
			case "":
				props.Stream = newKinesisStream(stack)
			default:
				props.DynamoDBTable = newStreamTable(stack, tt.dynamo == "stream")
			}
			src, err := lambdaidemcdk.NewStreamSource(stack, "Feed", props)
			require.ErrorIs(t, err, tt.wantErr)
			assert.Nil(t, src)
			if tt.wantMsg != "" {
				assert.EqualError(t, err, tt.wantMsg)
			}
			tmpl := cdktest.Synth(t, stack)
			assert.Empty(t, tmpl.OfType("AWS::SQS::Queue"), "a refused source creates nothing")
			assert.Empty(t, tmpl.OfType("AWS::Lambda::EventSourceMapping"))
			fn := tmpl.One(t, "AWS::Lambda::Function", "Fn")
			assert.Nil(t, fn.Properties["Environment"], "a refused source grants nothing")
		})
	}
}

func TestNewStreamSourceNeedsOneStream(t *testing.T) {
	stack := newStack(t)
	table, err := lambdaidemcdk.NewTable(stack, "Idem", nil)
	require.NoError(t, err)
	fn := newFunction(t, stack, "Fn", 0)
	kin := newKinesisStream(stack)
	orders := newStreamTable(stack, true)
	// An id already taken in the scope (here by the Kinesis stream) is
	// refused, not a jsii panic.
	_, err = lambdaidemcdk.NewStreamSource(stack, "Transfers", lambdaidemcdk.StreamSourceProps{
		Function: fn, Table: table, Stream: kin, StreamRetention: 168 * time.Hour,
	})
	assert.ErrorIs(t, err, lambdaidemcdk.ErrInvalidProps)
	for _, props := range []lambdaidemcdk.StreamSourceProps{
		{Table: table, Stream: kin, StreamRetention: 168 * time.Hour},
		{Function: fn, Stream: kin, StreamRetention: 168 * time.Hour},
		{Function: fn, Table: table},
		{Function: fn, Table: table, Stream: kin, DynamoDBTable: orders, StreamRetention: 168 * time.Hour},
	} {
		_, err := lambdaidemcdk.NewStreamSource(stack, "Feed", props)
		assert.ErrorIs(t, err, lambdaidemcdk.ErrInvalidProps)
	}
}

// A destination of the caller's own replaces the failure queue.
func TestNewStreamSourceTakesAnOnFailureDestination(t *testing.T) {
	stack := newStack(t)
	table, err := lambdaidemcdk.NewTable(stack, "Idem", nil)
	require.NoError(t, err)
	topic := newTopicDlq(stack)
	src, err := lambdaidemcdk.NewStreamSource(stack, "Feed", lambdaidemcdk.StreamSourceProps{
		Function: newFunction(t, stack, "Fn", 0), Table: table, Stream: newKinesisStream(stack),
		StreamRetention: 24 * time.Hour, OnFailure: topic,
	})
	require.NoError(t, err)
	assert.Nil(t, src.FailureQueue)
	tmpl := cdktest.Synth(t, stack)
	assert.Empty(t, tmpl.OfType("AWS::SQS::Queue"))
	mapping := tmpl.One(t, "AWS::Lambda::EventSourceMapping", "Fn")
	assert.Contains(t, mapping.Properties, "DestinationConfig")
}

func newTopicDlq(stack awscdk.Stack) awslambda.IEventSourceDlq {
	return awslambdaeventsources.NewSnsDlq(awssns.NewTopic(stack, jsii.String("Failures"), nil))
}
