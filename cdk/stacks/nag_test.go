package stacks_test

import (
	"testing"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsdynamodb"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsiam"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssqs"
	"github.com/aws/jsii-runtime-go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lambdaidem/lambdaidem/cdk/internal/cdktest"
	"github.com/lambdaidem/lambdaidem/cdk/stacks"
)

// nagApp builds the example app from context with the cdk-nag packs on
// every stack, and returns the stacks by id.
func nagApp(t *testing.T, context map[string]any) map[string]awscdk.Stack {
	t.Helper()
	zip := cdktest.DummyZip(t)
	context["paymentsZip"], context["ordersZip"] = zip, zip
	for _, key := range []string{"relayZip", "ledgerZip", "functionUrlZip"} {
		if context[key] != nil {
			context[key] = zip
		}
	}
	app := cdktest.NewApp(t, context)
	require.NoError(t, stacks.Build(app))
	out := map[string]awscdk.Stack{}
	for _, c := range *app.Node().Children() {
		if s, ok := c.(awscdk.Stack); ok {
			cdktest.ApplyNag(s)
			out[*s.StackName()] = s
		}
	}
	return out
}

// Every stack of the example app, as deployed (a JWT authorizer) and as on
// LocalStack (no HTTP API), passes the AwsSolutions and Serverless packs with
// no unsuppressed error or warning.
func TestAppPassesCdkNag(t *testing.T) {
	for name, context := range map[string]map[string]any{
		"deployed, JWT authorizer": {"jwtIssuer": "https://issuer.example.com/", "jwtAudience": "payments"},
		"with the outbox relay and the verify stack, side by side": {"jwtIssuer": "https://issuer.example.com/",
			"jwtAudience": "payments", "relayZip": "dummy", "ledgerZip": "dummy", "functionUrlZip": "dummy",
			"verifyStack": "true", "stackSuffix": "-nag"},
		"no HTTP API, amd64": {"httpApi": "false", "arch": "amd64"},
		"sealing on, throwaway tables": {"jwtIssuer": "https://issuer.example.com/", "jwtAudience": "payments",
			"sealing": "true", "destroyTables": "true", "functionUrlZip": "dummy"},
	} {
		t.Run(name, func(t *testing.T) {
			all := nagApp(t, context)
			want := []string{stacks.PaymentsStackID, stacks.OrdersStackID}
			if context["functionUrlZip"] != nil && context["verifyStack"] == nil {
				want = append(want, stacks.FunctionURLStackID)
			}
			if context["verifyStack"] != nil {
				want = []string{stacks.PaymentsStackID + "-nag", stacks.OrdersStackID + "-nag", stacks.VerifyStackID + "-nag",
					stacks.LedgerStackID + "-nag", stacks.FunctionURLStackID + "-nag"}
			}
			assert.ElementsMatch(t, want, keys(all))
			for id, stack := range all {
				assert.Empty(t, cdktest.Nag(t, stack), id)
			}
		})
	}
}

// A payments API without an authorizer (-c publicApi=true, a sandbox demo) is
// reported, not suppressed: anyone can POST a payment.
func TestCdkNagReportsThePublicPaymentsAPI(t *testing.T) {
	all := nagApp(t, map[string]any{"publicApi": "true"})
	var rules []string
	for _, f := range cdktest.Nag(t, all[stacks.PaymentsStackID]) {
		rules = append(rules, f.Rule)
	}
	assert.ElementsMatch(t, []string{"AwsSolutions-APIG4", "AwsSolutions-APIG4"}, rules, "both routes, and nothing else")
	assert.Empty(t, cdktest.Nag(t, all[stacks.OrdersStackID]))
}

// The check is wired: a stack with a table without point-in-time recovery,
// a queue without a dead-letter queue that accepts plain HTTP, and a wildcard
// policy produces those findings. Without this test a mis-wired check (no
// aspect, the wrong annotations read) would pass the tests above with zero
// findings.
func TestCdkNagFindsANonCompliantStack(t *testing.T) {
	stack := awscdk.NewStack(cdktest.NewApp(t, nil), jsii.String("NonCompliant"), nil)
	awsdynamodb.NewTable(stack, jsii.String("Table"), &awsdynamodb.TableProps{
		PartitionKey: &awsdynamodb.Attribute{Name: jsii.String("id"), Type: awsdynamodb.AttributeType_STRING},
	})
	awssqs.NewQueue(stack, jsii.String("Queue"), nil)
	role := awsiam.NewRole(stack, jsii.String("Role"), &awsiam.RoleProps{
		AssumedBy: awsiam.NewServicePrincipal(jsii.String("lambda.amazonaws.com"), nil),
	})
	role.AddToPrincipalPolicy(awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
		Actions: jsii.Strings("dynamodb:*"), Resources: jsii.Strings("*"),
	}))
	cdktest.ApplyNag(stack)

	found := map[string]string{}
	for _, f := range cdktest.Nag(t, stack) {
		found[f.Rule] = f.Path
	}
	assert.Equal(t, "/NonCompliant/Table/Resource", found["AwsSolutions-DDB3"], "no point-in-time recovery")
	assert.Equal(t, "/NonCompliant/Queue/Resource", found["AwsSolutions-SQS3"], "no dead-letter queue")
	assert.Equal(t, "/NonCompliant/Queue/Resource", found["AwsSolutions-SQS4"], "plain HTTP allowed")
	assert.Equal(t, "/NonCompliant/Queue/Resource", found["Serverless-SQSRedrivePolicy"], "the Serverless pack runs too")
	assert.Equal(t, "/NonCompliant/Role/DefaultPolicy/Resource", found["AwsSolutions-IAM5"], "a wildcard action and resource")
}

func keys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}

// With the relay's zip (-c relayZip=...), the orders stack publishes "order
// accepted" events through the outbox: the outbox table, the relay on its
// stream, the FIFO queue; the orders function gets OUTBOX_TABLE and
// ORDER_ACCEPTED_QUEUE and may put outbox items; cdk-nag finds nothing.
func TestOrdersStackWithTheOutbox(t *testing.T) {
	all := nagApp(t, map[string]any{"relayZip": cdktest.DummyZip(t), "httpApi": "false"})
	orders := all[stacks.OrdersStackID]
	assert.Empty(t, cdktest.Nag(t, orders))
	tm := cdktest.Synth(t, orders)
	assert.Contains(t, tm.Outputs(), "AcceptedQueueUrl")
	vars := tm.One(t, "AWS::Lambda::Function", "OrdersFunction").Properties["Environment"].(map[string]any)["Variables"].(map[string]any)
	assert.Contains(t, vars, "OUTBOX_TABLE")
	assert.Contains(t, vars, "ORDER_ACCEPTED_QUEUE")
	tm.One(t, "AWS::Lambda::EventSourceMapping", "RelayFunction")
	tm.One(t, "AWS::DynamoDB::Table", "OutboxTable")
}
