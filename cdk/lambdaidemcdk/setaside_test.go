package lambdaidemcdk_test

import (
	"errors"
	"testing"

	"github.com/aws/aws-cdk-go/awscdk/v2/awscloudwatch"
	"github.com/aws/aws-cdk-go/awscdk/v2/awscloudwatchactions"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssns"
	"github.com/aws/jsii-runtime-go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lambdaidem/lambdaidem/cdk/internal/cdktest"
	"github.com/lambdaidem/lambdaidem/cdk/lambdaidemcdk"
)

// TestAlarmOnSetAside: one alarm on the relay's OutboxSetAside metric (Sum
// ≥ 1 in 5 minutes, by its Service dimension, missing data not breaching,
// with the actions), the metric the relay's emf.Metrics.WriteSetAside
// writes; a blank Service is refused.
func TestAlarmOnSetAside(t *testing.T) {
	stack := newStack(t)
	relayFn := newFunction(t, stack, "Relay", 0)
	ob, err := lambdaidemcdk.NewOutbox(stack, "Outbox", lambdaidemcdk.OutboxProps{Relay: relayFn})
	require.NoError(t, err)
	topic := awssns.NewTopic(stack, jsii.String("Pager"), nil)
	_, err = ob.AlarmOnSetAside(stack, "SetAside", lambdaidemcdk.SetAsideAlarmProps{
		Service: "relay", Actions: []awscloudwatch.IAlarmAction{awscloudwatchactions.NewSnsAction(topic)},
	})
	require.NoError(t, err)
	_, err = ob.AlarmOnSetAside(stack, "Blank", lambdaidemcdk.SetAsideAlarmProps{Service: " "})
	require.True(t, errors.Is(err, lambdaidemcdk.ErrInvalidProps), "blank service: %v", err)

	tmpl := cdktest.Synth(t, stack)
	topicID := tmpl.One(t, "AWS::SNS::Topic", "Pager").LogicalID
	var found map[string]any
	for _, a := range tmpl.OfType("AWS::CloudWatch::Alarm") {
		if a.Properties["MetricName"] == "OutboxSetAside" {
			require.Nil(t, found, "one set-aside alarm")
			found = a.Properties
		}
	}
	require.NotNil(t, found, "no alarm on OutboxSetAside")
	assert.Equal(t, "relay", dimension(found["Dimensions"]))
	assert.Equal(t, "lambdaidem", found["Namespace"])
	assert.Equal(t, "Sum", found["Statistic"])
	assert.Equal(t, float64(300), found["Period"])
	assert.Equal(t, float64(1), found["Threshold"])
	assert.Equal(t, "GreaterThanOrEqualToThreshold", found["ComparisonOperator"])
	assert.Equal(t, "notBreaching", found["TreatMissingData"])
	assert.Equal(t, []any{cdktest.Ref(topicID)}, found["AlarmActions"])
	assert.Contains(t, found["AlarmDescription"], "lambdaidem outbox list")
}
