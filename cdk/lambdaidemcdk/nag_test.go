package lambdaidemcdk_test

import (
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsdynamodb"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsiam"
	"github.com/aws/aws-cdk-go/awscdk/v2/awskinesis"
	"github.com/aws/aws-cdk-go/awscdk/v2/awskms"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambda"
	"github.com/aws/jsii-runtime-go"
	"github.com/cdklabs/cdk-nag-go/cdknag/v2"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lambdaidem/lambdaidem/cdk/internal/cdktest"
	"github.com/lambdaidem/lambdaidem/cdk/lambdaidemcdk"
)

// standIn is a function standing for the user's own, which the constructs
// bind and feed but do not create. Its own findings (a dead-letter queue,
// tracing) are the user's to settle and are suppressed on it alone; its
// role is CDK's default one without the managed policy, so that every IAM
// statement the constructs grant on it is checked.
func standIn(t *testing.T, stack awscdk.Stack, id string) awslambda.Function {
	t.Helper()
	role := awsiam.NewRole(stack, jsii.String(id+"Role"), &awsiam.RoleProps{
		AssumedBy: awsiam.NewServicePrincipal(jsii.String("lambda.amazonaws.com"), nil),
	})
	fn := awslambda.NewFunction(stack, jsii.String(id), &awslambda.FunctionProps{
		Runtime:    awslambda.Runtime_PROVIDED_AL2023(),
		Handler:    jsii.String("bootstrap"),
		Code:       awslambda.Code_FromAsset(jsii.String(cdktest.DummyZip(t)), nil),
		Timeout:    awscdk.Duration_Seconds(jsii.Number(10)),
		MemorySize: jsii.Number(256),
		Role:       role,
	})
	reason := jsii.String("The test's stand-in for the user's function: its own settings are the user's, not the construct's.")
	cdknag.NagSuppressions_AddResourceSuppressions(fn, &[]*cdknag.NagPackSuppression{
		{Id: jsii.String("Serverless-LambdaDLQ"), Reason: reason},
		{Id: jsii.String("Serverless-LambdaTracing"), Reason: reason},
	}, jsii.Bool(false))
	return fn
}

// Every resource the constructs create (tables of each kind, with an
// AWS-owned and a customer-managed key, the grants on a function's role, the
// SQS source with its dead-letter queue and mapping, the Kinesis and DynamoDB
// Streams sources with their failure queues and mappings, the alarms and the
// dashboard) passes the AwsSolutions and Serverless packs with no
// unsuppressed error or warning. The only suppressions are the construct's
// own, for rules its design contradicts (see cdk/README.md, Checks), and the
// stand-in function's.
func TestConstructsPassCdkNag(t *testing.T) {
	stack := awscdk.NewStack(cdktest.NewApp(t, nil), jsii.String("Constructs"), &awscdk.StackProps{
		Env: &awscdk.Environment{Account: jsii.String("111122223333"), Region: jsii.String("eu-west-1")},
	})
	idem, err := lambdaidemcdk.NewTable(stack, "Idempotency", nil)
	require.NoError(t, err)
	key := awskms.NewKey(stack, jsii.String("TableKey"), &awskms.KeyProps{EnableKeyRotation: jsii.Bool(true)})
	sealedTable, err := lambdaidemcdk.NewTable(stack, "Sealed", &lambdaidemcdk.TableProps{EncryptionKey: key, Attributes: lambdaidemcdk.Attributes{SortKey: "sk"}})
	require.NoError(t, err)
	v2, err := lambdaidemcdk.NewTable(stack, "Global", &lambdaidemcdk.TableProps{V2: true, Global: &lambdaidemcdk.GlobalTableProps{
		Replicas: []string{"eu-central-1"}, HomeRegionRouting: true}})
	require.NoError(t, err)
	_, err = idem.Monitor(stack, "Monitoring", &lambdaidemcdk.MonitoringProps{Services: []string{"payments", "orders"}})
	require.NoError(t, err)

	httpFn := standIn(t, stack, "Http")
	_, err = sealedTable.Bind(httpFn, 24*time.Hour)
	require.NoError(t, err)
	v2.GrantStore(httpFn)
	business := awsdynamodb.NewTable(stack, jsii.String("Business"), &awsdynamodb.TableProps{
		PartitionKey:                     &awsdynamodb.Attribute{Name: jsii.String("id"), Type: awsdynamodb.AttributeType_STRING},
		BillingMode:                      awsdynamodb.BillingMode_PAY_PER_REQUEST,
		PointInTimeRecoverySpecification: &awsdynamodb.PointInTimeRecoverySpecification{PointInTimeRecoveryEnabled: jsii.Bool(true)},
		Stream:                           awsdynamodb.StreamViewType_NEW_IMAGE,
	})
	_, err = lambdaidemcdk.GrantStagedWrites(httpFn, business, lambdaidemcdk.StagedPut, lambdaidemcdk.StagedUpdate,
		lambdaidemcdk.StagedDelete, lambdaidemcdk.StagedConditionCheck)
	require.NoError(t, err)

	_, err = lambdaidemcdk.NewQueueSource(stack, "Orders", lambdaidemcdk.QueueSourceProps{Function: standIn(t, stack, "Queue"), Table: idem})
	require.NoError(t, err)
	stream := awskinesis.NewStream(stack, jsii.String("Transfers"), &awskinesis.StreamProps{
		RetentionPeriod: awscdk.Duration_Hours(jsii.Number(48)),
		Encryption:      awskinesis.StreamEncryption_MANAGED,
	})
	_, err = lambdaidemcdk.NewStreamSource(stack, "Kinesis", lambdaidemcdk.StreamSourceProps{
		Function: standIn(t, stack, "Ledger"), Table: idem, Stream: stream, StreamRetention: 48 * time.Hour})
	require.NoError(t, err)
	outbox := standIn(t, stack, "OutboxConsumer")
	_, err = lambdaidemcdk.NewStreamSource(stack, "Outbox", lambdaidemcdk.StreamSourceProps{
		Function: outbox, Table: idem, DynamoDBTable: business})
	require.NoError(t, err)
	// The one finding on a grant that is not the construct's own: CDK's
	// DynamoEventSource, which NewStreamSource uses, grants the function's
	// role dynamodb:ListStreams on "*". The user suppresses it on their
	// role's policy (README, Checks), as the stream example does.
	cdknag.NagSuppressions_AddResourceSuppressions(outbox.Role(), &[]*cdknag.NagPackSuppression{{
		Id: jsii.String("AwsSolutions-IAM5"),
		Reason: jsii.String("dynamodb:ListStreams, which CDK's DynamoEventSource grants for the stream's mapping, " +
			"supports no resource-level permissions, so its resource is *; every other statement names its resource."),
		AppliesTo: &[]any{"Resource::*"},
	}}, jsii.Bool(true))

	cdktest.ApplyNag(stack)
	assert.Empty(t, cdktest.Nag(t, stack))

	// The constructs' own suppressions, and no others: each names a rule
	// their design contradicts (README, Checks).
	suppressed := map[string][]string{}
	for _, r := range cdktest.Synth(t, stack).Resources {
		if ids := r.NagSuppressions(); len(ids) > 0 && !strings.Contains(r.LogicalID, "Role") &&
			!strings.HasPrefix(r.LogicalID, "Http") && r.Type != "AWS::Lambda::Function" {
			suppressed[r.Type+" "+r.LogicalID[:len(r.LogicalID)-8]] = ids
		}
	}
	assert.Equal(t, map[string][]string{
		"AWS::SQS::Queue OrdersDeadLetterQueue":                                            {"Serverless-SQSRedrivePolicy"},
		"AWS::Lambda::EventSourceMapping QueueSqsEventSourceConstructsOrdersQueueB74879B8": {"Serverless-LambdaEventSourceMappingDestination"},
		"AWS::SQS::Queue KinesisFailureQueue":                                              {"Serverless-SQSRedrivePolicy", "AwsSolutions-SQS3"},
		"AWS::SQS::Queue OutboxFailureQueue":                                               {"Serverless-SQSRedrivePolicy", "AwsSolutions-SQS3"},
	}, suppressed)
}
