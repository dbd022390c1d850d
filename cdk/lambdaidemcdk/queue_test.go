package lambdaidemcdk_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lambdaidem/lambdaidem/cdk/internal/cdktest"
	"github.com/lambdaidem/lambdaidem/cdk/lambdaidemcdk"
)

func TestMinVisibilityTimeoutIsSixFunctionTimeoutsPlusTheBatchingWindow(t *testing.T) {
	tests := []struct {
		timeout, window, want time.Duration
	}{
		{3 * time.Second, 0, 18 * time.Second},
		{30 * time.Second, 0, 3 * time.Minute},
		{30 * time.Second, 20 * time.Second, 3*time.Minute + 20*time.Second},
		{15 * time.Minute, 5 * time.Minute, 95 * time.Minute},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, lambdaidemcdk.MinVisibilityTimeout(tt.timeout, tt.window),
			"timeout %v, window %v", tt.timeout, tt.window)
	}
}

func TestRetryHorizonIsTheLargerOfRetentionAndRedrive(t *testing.T) {
	tests := []struct {
		name                        string
		retention, visibility, want time.Duration
		maxReceiveCount             int
	}{
		{"retention dominates (SQS defaults)", 96 * time.Hour, 3 * time.Minute, 96 * time.Hour, 3},
		{"redrive dominates", time.Hour, 30 * time.Minute, 150 * time.Minute, 5},
		{"equal bounds", time.Hour, 20 * time.Minute, time.Hour, 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, lambdaidemcdk.RetryHorizon(tt.retention, tt.visibility, tt.maxReceiveCount))
		})
	}
}

func TestNewQueueSourceWiresQueueDLQAndFunction(t *testing.T) {
	tests := []struct {
		name            string
		fnTimeout       time.Duration
		props           lambdaidemcdk.QueueSourceProps
		visibility      float64 // seconds
		retention       float64 // seconds
		maxReceiveCount float64
		horizon         time.Duration
		ttlEnv          string
	}{
		{
			name:            "defaults: 6x timeout, 4-day retention, 5 receives, TTL = horizon",
			fnTimeout:       30 * time.Second,
			visibility:      180,
			retention:       345600,
			maxReceiveCount: 5,
			horizon:         96 * time.Hour,
			ttlEnv:          "96h0m0s",
		},
		{
			name:            "default function timeout (3s) and a batching window",
			props:           lambdaidemcdk.QueueSourceProps{MaxBatchingWindow: 5 * time.Second},
			visibility:      23,
			retention:       345600,
			maxReceiveCount: 5,
			horizon:         96 * time.Hour,
			ttlEnv:          "96h0m0s",
		},
		{
			name:      "redrive bound beyond retention, longer TTL accepted",
			fnTimeout: time.Minute,
			props: lambdaidemcdk.QueueSourceProps{
				VisibilityTimeout: 30 * time.Minute,
				RetentionPeriod:   time.Hour,
				MaxReceiveCount:   5,
				TTL:               48 * time.Hour,
			},
			visibility:      1800,
			retention:       3600,
			maxReceiveCount: 5,
			horizon:         150 * time.Minute,
			ttlEnv:          "48h0m0s",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			stack, src, err := newQueueSource(t, tt.fnTimeout, tt.props)
			require.NoError(t, err)
			assert.Equal(t, tt.horizon, src.Horizon)

			tmpl := cdktest.Synth(t, stack)
			dlq := tmpl.One(t, "AWS::SQS::Queue", "OrdersDeadLetterQueue")
			queue := tmpl.One(t, "AWS::SQS::Queue", "OrdersQueue")
			assert.Equal(t, tt.visibility, queue.Properties["VisibilityTimeout"])
			assert.Equal(t, tt.retention, queue.Properties["MessageRetentionPeriod"])
			assert.Equal(t, map[string]any{
				"deadLetterTargetArn": cdktest.GetAtt(dlq.LogicalID, "Arn"),
				"maxReceiveCount":     tt.maxReceiveCount,
			}, queue.Properties["RedrivePolicy"])
			assert.Equal(t, float64(14*24*3600), dlq.Properties["MessageRetentionPeriod"], "DLQ keeps messages 14 days")

			fn := tmpl.One(t, "AWS::Lambda::Function", "Fn")
			mapping := tmpl.One(t, "AWS::Lambda::EventSourceMapping", "Fn")
			assert.Equal(t, []any{"ReportBatchItemFailures"}, mapping.Properties["FunctionResponseTypes"])
			assert.Equal(t, cdktest.GetAtt(queue.LogicalID, "Arn"), mapping.Properties["EventSourceArn"])
			assert.Equal(t, cdktest.Ref(fn.LogicalID), mapping.Properties["FunctionName"])

			vars := fn.Properties["Environment"].(map[string]any)["Variables"].(map[string]any)
			assert.Equal(t, tt.ttlEnv, vars["IDEMPOTENCY_TTL"])
			assert.Equal(t, cdktest.Ref(tmpl.One(t, "AWS::DynamoDB::Table", "Idem").LogicalID), vars["IDEMPOTENCY_TABLE"])
			assertNoWildcards(t, tmpl)
		})
	}
}

func TestNewQueueSourceRefusesUnsafeSettings(t *testing.T) {
	tests := []struct {
		name      string
		fnTimeout time.Duration
		props     lambdaidemcdk.QueueSourceProps
		wantErr   error
		wantMsg   string
	}{
		{
			name:      "visibility timeout below 6x the function timeout",
			fnTimeout: 30 * time.Second,
			props:     lambdaidemcdk.QueueSourceProps{VisibilityTimeout: 179 * time.Second},
			wantErr:   lambdaidemcdk.ErrVisibilityTimeoutTooShort,
			wantMsg: "lambdaidemcdk: queue visibility timeout too short: visibility timeout 2m59s is less than " +
				"6 × function timeout 30s + batching window 0s = 3m0s; a message would become visible again " +
				"while an invocation still runs it: set VisibilityTimeout to at least 3m0s or shorten the function timeout",
		},
		{
			name:      "visibility timeout that ignores the batching window",
			fnTimeout: 10 * time.Second,
			props: lambdaidemcdk.QueueSourceProps{
				VisibilityTimeout: time.Minute, MaxBatchingWindow: 10 * time.Second,
			},
			wantErr: lambdaidemcdk.ErrVisibilityTimeoutTooShort,
			wantMsg: "lambdaidemcdk: queue visibility timeout too short: visibility timeout 1m0s is less than " +
				"6 × function timeout 10s + batching window 10s = 1m10s; a message would become visible again " +
				"while an invocation still runs it: set VisibilityTimeout to at least 1m10s or shorten the function timeout",
		},
		{
			name:      "TTL shorter than the retention period",
			fnTimeout: 30 * time.Second,
			props:     lambdaidemcdk.QueueSourceProps{TTL: 24 * time.Hour},
			wantErr:   lambdaidemcdk.ErrTTLShorterThanHorizon,
			wantMsg: "lambdaidemcdk: idempotency TTL shorter than the retry horizon: TTL 24h0m0s is shorter than " +
				"the queue's retry horizon 96h0m0s (the larger of retention period 96h0m0s and maxReceiveCount 5 × " +
				"visibility timeout 3m0s); a redelivery after the record expires would run the operation again: " +
				"set TTL to at least 96h0m0s or shorten the retention period",
		},
		{
			name:      "TTL shorter than maxReceiveCount x visibility timeout",
			fnTimeout: time.Minute,
			props: lambdaidemcdk.QueueSourceProps{
				RetentionPeriod: time.Hour, VisibilityTimeout: time.Hour, MaxReceiveCount: 10, TTL: 9 * time.Hour,
			},
			wantErr: lambdaidemcdk.ErrTTLShorterThanHorizon,
			wantMsg: "lambdaidemcdk: idempotency TTL shorter than the retry horizon: TTL 9h0m0s is shorter than " +
				"the queue's retry horizon 10h0m0s (the larger of retention period 1h0m0s and maxReceiveCount 10 × " +
				"visibility timeout 1h0m0s); a redelivery after the record expires would run the operation again: " +
				"set TTL to at least 10h0m0s or shorten the retention period",
		},
		{
			name:    "visibility timeout beyond the SQS maximum",
			props:   lambdaidemcdk.QueueSourceProps{VisibilityTimeout: 13 * time.Hour},
			wantErr: lambdaidemcdk.ErrInvalidProps,
		},
		{
			name:    "retention in fractions of a second",
			props:   lambdaidemcdk.QueueSourceProps{RetentionPeriod: 90*time.Second + time.Millisecond},
			wantErr: lambdaidemcdk.ErrInvalidProps,
		},
		{
			name:    "maxReceiveCount beyond 1000",
			props:   lambdaidemcdk.QueueSourceProps{MaxReceiveCount: 1001},
			wantErr: lambdaidemcdk.ErrInvalidProps,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			stack, src, err := newQueueSource(t, tt.fnTimeout, tt.props)
			require.ErrorIs(t, err, tt.wantErr)
			assert.Nil(t, src)
			if tt.wantMsg != "" {
				assert.EqualError(t, err, tt.wantMsg)
			}
			tmpl := cdktest.Synth(t, stack)
			assert.Empty(t, tmpl.OfType("AWS::SQS::Queue"), "a refused source creates nothing")
			assert.Empty(t, tmpl.OfType("AWS::Lambda::EventSourceMapping"))
		})
	}
}

func TestNewQueueSourceNeedsAFunctionAndATable(t *testing.T) {
	stack := newStack(t)
	table, err := lambdaidemcdk.NewTable(stack, "Idem", nil)
	require.NoError(t, err)
	fn := newFunction(t, stack, "Fn", 0)
	for i, props := range []lambdaidemcdk.QueueSourceProps{{Table: table}, {Function: fn}} {
		_, err := lambdaidemcdk.NewQueueSource(stack, fmt.Sprint("Q", i), props)
		assert.ErrorIs(t, err, lambdaidemcdk.ErrInvalidProps)
	}
}

// Every rule CDK's SqsEventSource or SQS would enforce by throwing (after the
// queues exist) is checked first and returned as an error, creating nothing.
func TestNewQueueSourceRefusesOutOfRangeBatchingAndFIFOSettings(t *testing.T) {
	tests := []struct {
		name  string
		props lambdaidemcdk.QueueSourceProps
		msg   string
	}{
		{"batch size 50 without a batching window", lambdaidemcdk.QueueSourceProps{BatchSize: 50},
			"BatchSize 50 must be from 1 to 10 without a batching window"},
		{"batch size over 10000 with a window", lambdaidemcdk.QueueSourceProps{BatchSize: 10001, MaxBatchingWindow: time.Second, VisibilityTimeout: time.Hour},
			"BatchSize 10001 must be from 1 to 10000 with a batching window"},
		{"a negative batch size", lambdaidemcdk.QueueSourceProps{BatchSize: -1}, "BatchSize -1 must be from 1 to 10"},
		{"a 10-minute batching window", lambdaidemcdk.QueueSourceProps{MaxBatchingWindow: 10 * time.Minute, VisibilityTimeout: time.Hour},
			"MaxBatchingWindow 10m0s must be whole seconds from 1s to 5m0s"},
		{"a batching window in fractions of a second", lambdaidemcdk.QueueSourceProps{MaxBatchingWindow: 1500 * time.Millisecond},
			"MaxBatchingWindow 1.5s must be whole seconds"},
		{"a negative batching window", lambdaidemcdk.QueueSourceProps{MaxBatchingWindow: -time.Second}, "MaxBatchingWindow -1s"},
		{"FIFO with a batching window", lambdaidemcdk.QueueSourceProps{FIFO: true, MaxBatchingWindow: 5 * time.Second},
			"a FIFO queue's event source has no batching window"},
		{"FIFO with batches over 10", lambdaidemcdk.QueueSourceProps{FIFO: true, BatchSize: 11}, "BatchSize 11 must be from 1 to 10 on a FIFO queue"},
		{"a .fifo name on a standard queue", lambdaidemcdk.QueueSourceProps{QueueName: "orders.fifo"}, "ends in .fifo but FIFO is not set"},
		{"a queue name with a dot", lambdaidemcdk.QueueSourceProps{QueueName: "orders.v2"}, "may hold only letters, digits"},
		{"a queue name too long for its DLQ", lambdaidemcdk.QueueSourceProps{QueueName: strings.Repeat("q", 77)}, "must be at most 80 characters"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			stack, src, err := newQueueSource(t, 0, tt.props)
			require.ErrorIs(t, err, lambdaidemcdk.ErrInvalidProps)
			assert.Nil(t, src)
			assert.Contains(t, err.Error(), tt.msg)
			tmpl := cdktest.Synth(t, stack)
			assert.Empty(t, tmpl.OfType("AWS::SQS::Queue"), "a refused source creates nothing")
			assert.Empty(t, tmpl.OfType("AWS::Lambda::EventSourceMapping"))
			assert.Empty(t, tmpl.Statements())
		})
	}
}

func TestNewQueueSourceRefusesAFunctionAlreadyBoundAndCreatesNothing(t *testing.T) {
	stack := newStack(t)
	table, err := lambdaidemcdk.NewTable(stack, "Idem", nil)
	require.NoError(t, err)
	fn := newFunction(t, stack, "Fn", 0)
	_, err = table.Bind(fn, 24*time.Hour)
	require.NoError(t, err)

	_, err = lambdaidemcdk.NewQueueSource(stack, "Orders", lambdaidemcdk.QueueSourceProps{Function: fn, Table: table})
	require.ErrorIs(t, err, lambdaidemcdk.ErrAlreadyBound)
	tmpl := cdktest.Synth(t, stack)
	assert.Empty(t, tmpl.OfType("AWS::SQS::Queue"))
	assert.Empty(t, tmpl.OfType("AWS::Lambda::EventSourceMapping"))
}

func TestNewQueueSourceLimitsThatAreAccepted(t *testing.T) {
	tests := []struct {
		name        string
		props       lambdaidemcdk.QueueSourceProps
		wantBatch   any
		wantWindow  any
		wantFIFO    bool
		queueName   string
		dlqName     string
		wantVisible float64
	}{
		{name: "batch size 10 without a window", props: lambdaidemcdk.QueueSourceProps{BatchSize: 10},
			wantBatch: float64(10), wantVisible: 18},
		{name: "batch size 10000 with a 5-minute window", props: lambdaidemcdk.QueueSourceProps{BatchSize: 10000, MaxBatchingWindow: 5 * time.Minute},
			wantBatch: float64(10000), wantWindow: float64(300), wantVisible: 318},
		{name: "FIFO with named queues", props: lambdaidemcdk.QueueSourceProps{FIFO: true, BatchSize: 10, QueueName: "orders"},
			wantBatch: float64(10), wantFIFO: true, queueName: "orders.fifo", dlqName: "orders-dlq.fifo", wantVisible: 18},
		{name: "FIFO named with its suffix", props: lambdaidemcdk.QueueSourceProps{FIFO: true, QueueName: "orders.fifo"},
			wantFIFO: true, queueName: "orders.fifo", dlqName: "orders-dlq.fifo", wantVisible: 18},
		{name: "a standard queue named", props: lambdaidemcdk.QueueSourceProps{QueueName: "orders_v2"},
			queueName: "orders_v2", dlqName: "orders_v2-dlq", wantVisible: 18},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			stack, _, err := newQueueSource(t, 0, tt.props)
			require.NoError(t, err)

			tmpl := cdktest.Synth(t, stack)
			queue := tmpl.One(t, "AWS::SQS::Queue", "OrdersQueue").Properties
			dlq := tmpl.One(t, "AWS::SQS::Queue", "OrdersDeadLetterQueue").Properties
			mapping := tmpl.One(t, "AWS::Lambda::EventSourceMapping", "Fn").Properties
			assert.Equal(t, tt.wantBatch, mapping["BatchSize"])
			assert.Equal(t, tt.wantWindow, mapping["MaximumBatchingWindowInSeconds"])
			assert.Equal(t, tt.wantVisible, queue["VisibilityTimeout"])
			if tt.wantFIFO {
				assert.Equal(t, true, queue["FifoQueue"])
				assert.Equal(t, true, dlq["FifoQueue"], "a FIFO queue's DLQ is FIFO")
			} else {
				assert.NotContains(t, queue, "FifoQueue")
			}
			if tt.queueName != "" {
				assert.Equal(t, tt.queueName, queue["QueueName"])
				assert.Equal(t, tt.dlqName, dlq["QueueName"])
			}
		})
	}
}

// newQueueSource calls NewQueueSource in a new stack with props, a new
// function with fnTimeout (0: Lambda's default) and a new table "Idem".
func newQueueSource(t *testing.T, fnTimeout time.Duration, props lambdaidemcdk.QueueSourceProps) (awscdk.Stack, *lambdaidemcdk.QueueSource, error) {
	t.Helper()
	stack := newStack(t)
	table, err := lambdaidemcdk.NewTable(stack, "Idem", nil)
	require.NoError(t, err)
	props.Function = newFunction(t, stack, "Fn", fnTimeout)
	props.Table = table
	src, err := lambdaidemcdk.NewQueueSource(stack, "Orders", props)
	return stack, src, err
}
