package lambdaidemcdk_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssqs"
	"github.com/aws/jsii-runtime-go"
	"github.com/cdklabs/cdk-nag-go/cdknag/v2"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lambdaidem/lambdaidem/cdk/internal/cdktest"
	"github.com/lambdaidem/lambdaidem/cdk/lambdaidemcdk"
)

// NewOutbox builds the table with a NEW_IMAGE stream and TTL, the relay's
// mapping (partial batch responses, bisection, bounded retries, an
// on-failure queue, a filter on unpublished items), the relay's grants on
// the table and on its one target queue only, OUTBOX_TABLE on the relay
// and on the producer granted to stage, and the two alarms; cdk-nag finds
// nothing but the suppressions named in README (Checks).
func TestNewOutbox(t *testing.T) {
	stack := awscdk.NewStack(cdktest.NewApp(t, nil), jsii.String("Outbox"), &awscdk.StackProps{
		Env: &awscdk.Environment{Account: jsii.String("111122223333"), Region: jsii.String("eu-west-1")},
	})
	relayFn := standIn(t, stack, "Relay")
	producer := standIn(t, stack, "Producer")
	accepted := awssqs.NewQueue(stack, jsii.String("Accepted"), &awssqs.QueueProps{
		Fifo: jsii.Bool(true), EnforceSSL: jsii.Bool(true),
		DeadLetterQueue: &awssqs.DeadLetterQueue{MaxReceiveCount: jsii.Number(5), Queue: awssqs.NewQueue(stack, jsii.String("AcceptedDLQ"), &awssqs.QueueProps{
			Fifo: jsii.Bool(true), EnforceSSL: jsii.Bool(true)})},
	})
	cdknag.NagSuppressions_AddResourceSuppressions(stack.Node().FindChild(jsii.String("AcceptedDLQ")), &[]*cdknag.NagPackSuppression{{
		Id: jsii.String("Serverless-SQSRedrivePolicy"), Reason: jsii.String("The test target's own dead-letter queue."),
	}}, jsii.Bool(true))
	ob, err := lambdaidemcdk.NewOutbox(stack, "Outbox", lambdaidemcdk.OutboxProps{Relay: relayFn, Queues: []awssqs.IQueue{accepted}})
	require.NoError(t, err)
	_, err = ob.GrantStage(producer)
	require.NoError(t, err)
	require.NotNil(t, ob.PoisonAlarm)

	tm := cdktest.Synth(t, stack)
	table := tm.One(t, "AWS::DynamoDB::Table", "OutboxTable")
	assert.Equal(t, map[string]any{"StreamViewType": "NEW_IMAGE"}, table.Properties["StreamSpecification"])
	assert.Equal(t, map[string]any{"AttributeName": "expiration", "Enabled": true}, table.Properties["TimeToLiveSpecification"])
	assert.Equal(t, true, table.Properties["DeletionProtectionEnabled"])
	assert.Equal(t, "Retain", table.DeletionPolicy)

	m := tm.One(t, "AWS::Lambda::EventSourceMapping", "Relay")
	assert.Equal(t, []any{"ReportBatchItemFailures"}, m.Properties["FunctionResponseTypes"])
	assert.Equal(t, true, m.Properties["BisectBatchOnFunctionError"])
	assert.Equal(t, float64(lambdaidemcdk.DefaultStreamRetryAttempts), m.Properties["MaximumRetryAttempts"])
	assert.NotNil(t, m.Properties["DestinationConfig"])
	filters, _ := json.Marshal(m.Properties["FilterCriteria"])
	assert.Contains(t, string(filters), `{\"dynamodb\":{\"NewImage\":{\"status\":{\"S\":[\"PENDING\"]}}}}`)

	// Least privilege: the relay reads and updates the outbox table, sends
	// to its queue, reads the stream; the producer may only put.
	var relayActions, producerActions []string
	for _, p := range tm.OfType("AWS::IAM::Policy") {
		for _, st := range cdktest.PolicyStatements(p) {
			switch {
			case strings.HasPrefix(p.LogicalID, "RelayRole"):
				relayActions = append(relayActions, st.Actions...)
			case strings.HasPrefix(p.LogicalID, "ProducerRole"):
				producerActions = append(producerActions, st.Actions...)
			}
		}
	}
	for _, a := range relayActions {
		assert.NotContains(t, a, "*", "relay action %s", a)
	}
	assert.Subset(t, relayActions, []string{"dynamodb:GetItem", "dynamodb:UpdateItem", "sqs:SendMessage"})
	assert.NotContains(t, relayActions, "dynamodb:PutItem")
	assert.NotContains(t, relayActions, "dynamodb:DeleteItem")
	assert.Equal(t, []string{"dynamodb:PutItem"}, producerActions)

	alarms := tm.OfType("AWS::CloudWatch::Alarm")
	require.Len(t, alarms, 2)
	var metrics []string
	for _, a := range alarms {
		metrics = append(metrics, a.Properties["MetricName"].(string))
	}
	assert.ElementsMatch(t, []string{"IteratorAge", "ApproximateNumberOfMessagesVisible"}, metrics)

	// CDK's DynamoEventSource grants dynamodb:ListStreams on "*" (it has no
	// resource-level permissions); the user suppresses it on the relay's
	// role, as for NewStreamSource (README, Checks).
	cdknag.NagSuppressions_AddResourceSuppressions(relayFn.Role(), &[]*cdknag.NagPackSuppression{{
		Id:        jsii.String("AwsSolutions-IAM5"),
		Reason:    jsii.String("dynamodb:ListStreams, which CDK's DynamoEventSource grants, supports no resource-level permissions."),
		AppliesTo: &[]any{"Resource::*"},
	}}, jsii.Bool(true))
	cdktest.ApplyNag(stack)
	assert.Empty(t, cdktest.Nag(t, stack))
}

// NewOutbox refuses what it cannot build safely, and builds nothing.
func TestNewOutboxRefuses(t *testing.T) {
	stack := awscdk.NewStack(cdktest.NewApp(t, nil), jsii.String("Refusals"), nil)
	fn := standIn(t, stack, "Relay")
	for name, p := range map[string]lambdaidemcdk.OutboxProps{
		"no relay":        {},
		"negative alarm":  {Relay: fn, AgeAlarm: -time.Second},
		"retries":         {Relay: fn, RetryAttempts: 10001},
		"destroy guarded": {Relay: fn, RemovalPolicy: awscdk.RemovalPolicy_DESTROY},
	} {
		_, err := lambdaidemcdk.NewOutbox(stack, "Outbox"+strings.ReplaceAll(name, " ", ""), p)
		assert.ErrorIs(t, err, lambdaidemcdk.ErrInvalidProps, name)
	}
	assert.Empty(t, cdktest.Synth(t, stack).OfType("AWS::DynamoDB::Table"))
}
