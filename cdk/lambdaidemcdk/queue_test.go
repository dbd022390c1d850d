package lambdaidemcdk_test

import (
	"fmt"
	"testing"
	"time"

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
			name:            "defaults: 6x timeout, 4-day retention, 3 receives, TTL = horizon",
			fnTimeout:       30 * time.Second,
			visibility:      180,
			retention:       345600,
			maxReceiveCount: 3,
			horizon:         96 * time.Hour,
			ttlEnv:          "96h0m0s",
		},
		{
			name:            "default function timeout (3s) and a batching window",
			props:           lambdaidemcdk.QueueSourceProps{MaxBatchingWindow: 5 * time.Second},
			visibility:      23,
			retention:       345600,
			maxReceiveCount: 3,
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
			stack := newStack(t)
			table, err := lambdaidemcdk.NewTable(stack, "Idem", nil)
			require.NoError(t, err)
			props := tt.props
			props.Function = newFunction(t, stack, "Fn", tt.fnTimeout)
			props.Table = table
			src, err := lambdaidemcdk.NewQueueSource(stack, "Orders", props)
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
				"the queue's retry horizon 96h0m0s (the larger of retention period 96h0m0s and maxReceiveCount 3 × " +
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
			stack := newStack(t)
			table, err := lambdaidemcdk.NewTable(stack, "Idem", nil)
			require.NoError(t, err)
			props := tt.props
			props.Function = newFunction(t, stack, "Fn", tt.fnTimeout)
			props.Table = table

			src, err := lambdaidemcdk.NewQueueSource(stack, "Orders", props)
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
