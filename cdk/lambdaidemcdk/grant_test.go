package lambdaidemcdk_test

import (
	"encoding/json"
	"os"
	"testing"
	"time"

	"github.com/aws/aws-cdk-go/awscdk/v2/awsiam"
	"github.com/aws/aws-cdk-go/awscdk/v2/awskms"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambda"
	"github.com/aws/jsii-runtime-go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lambdaidem/lambdaidem/cdk/internal/cdktest"
	"github.com/lambdaidem/lambdaidem/cdk/lambdaidemcdk"
)

var storeActions = []string{"dynamodb:GetItem", "dynamodb:PutItem", "dynamodb:UpdateItem", "dynamodb:DeleteItem"}

// tableKeyActions are granted on a table's customer-managed key: no wildcard.
var tableKeyActions = []string{"kms:Decrypt", "kms:DescribeKey", "kms:Encrypt", "kms:ReEncryptFrom", "kms:ReEncryptTo",
	"kms:GenerateDataKey", "kms:GenerateDataKeyWithoutPlaintext"}

func TestBindGivesExactlyTheStoreActionsAndTheStoreSettings(t *testing.T) {
	stack := newStack(t)
	table, err := lambdaidemcdk.NewTable(stack, "Idem", nil)
	require.NoError(t, err)
	fn := newFunction(t, stack, "Fn", 10*time.Second)
	grant, err := table.Bind(fn, 24*time.Hour)
	require.NoError(t, err)
	assert.True(t, *grant.Success(), "the function's role is CDK's to change")

	tmpl := cdktest.Synth(t, stack)
	tableID := tmpl.One(t, "AWS::DynamoDB::Table", "Idem").LogicalID
	assert.Equal(t, []cdktest.Statement{{
		Effect:    "Allow",
		Actions:   storeActions,
		Resources: []any{cdktest.GetAtt(tableID, "Arn")},
	}}, tmpl.Statements(), "one statement: the store's four actions on the table ARN alone (no index ARNs)")
	assertNoWildcards(t, tmpl)
	assert.Equal(t, map[string]any{
		"IDEMPOTENCY_TABLE":           cdktest.Ref(tableID),
		"IDEMPOTENCY_TTL":             "24h0m0s",
		"IDEMPOTENCY_KEY_ATTR":        "id",
		"IDEMPOTENCY_EXPIRATION_ATTR": "expiration",
	}, envOf(t, tmpl, "Fn"), "no sort key variables for a table without one")
}

func TestBindWithCustomerManagedKeyAlsoGrantsTheKey(t *testing.T) {
	stack := newStack(t)
	key := awskms.NewKey(stack, jsii.String("Key"), nil)
	table, err := lambdaidemcdk.NewTable(stack, "Idem", &lambdaidemcdk.TableProps{EncryptionKey: key})
	require.NoError(t, err)
	_, err = table.Bind(newFunction(t, stack, "Fn", 0), 90*time.Minute)
	require.NoError(t, err)

	tmpl := cdktest.Synth(t, stack)
	tableID := tmpl.One(t, "AWS::DynamoDB::Table", "Idem").LogicalID
	keyID := tmpl.One(t, "AWS::KMS::Key", "Key").LogicalID
	assert.Equal(t, []cdktest.Statement{
		{Effect: "Allow", Actions: storeActions, Resources: []any{cdktest.GetAtt(tableID, "Arn")}},
		{
			Effect:    "Allow",
			Actions:   tableKeyActions,
			Resources: []any{cdktest.GetAtt(keyID, "Arn")},
		},
	}, tmpl.Statements())
	assertNoWildcards(t, tmpl)
	assert.Equal(t, "1h30m0s", envOf(t, tmpl, "Fn")["IDEMPOTENCY_TTL"])
}

// The environment Bind sets is the one the library's reader parses
// (dynamostore.ReadEnv's test in dev/integrationtest/dynamostore reads the same golden file): a renamed key schema
// with a sort key, on an adopted table whose name is known at synthesis.
func TestBindEnvironmentIsTheGoldenOneTheExamplesRead(t *testing.T) {
	stack := newStack(t)
	table, err := lambdaidemcdk.FromTableName(stack, "Idem", "orders-idempotency", &lambdaidemcdk.AdoptProps{
		Attributes: lambdaidemcdk.Attributes{PartitionKey: "pk", SortKey: "sk", SortKeyValue: "idempotency", TimeToLiveAttribute: "ttl"},
	})
	require.NoError(t, err)
	_, err = table.Bind(newFunction(t, stack, "Fn", 0), 48*time.Hour)
	require.NoError(t, err)

	b, err := os.ReadFile("testdata/bound-environment.json")
	require.NoError(t, err)
	var golden map[string]any
	require.NoError(t, json.Unmarshal(b, &golden))
	assert.Equal(t, golden, envOf(t, cdktest.Synth(t, stack), "Fn"))
}

func TestBindDefaultsTheSortKeyValue(t *testing.T) {
	stack := newStack(t)
	table, err := lambdaidemcdk.NewTable(stack, "Idem", &lambdaidemcdk.TableProps{Attributes: lambdaidemcdk.Attributes{SortKey: "sk"}})
	require.NoError(t, err)
	_, err = table.Bind(newFunction(t, stack, "Fn", 0), time.Hour)
	require.NoError(t, err)
	env := envOf(t, cdktest.Synth(t, stack), "Fn")
	assert.Equal(t, "sk", env["IDEMPOTENCY_SORT_KEY_ATTR"])
	assert.Equal(t, lambdaidemcdk.DefaultSortKeyValue, env["IDEMPOTENCY_SORT_KEY_VALUE"])
}

func TestBindRefusesASecondBindingAndChangesNothing(t *testing.T) {
	for _, second := range []string{"another table", "the same table"} {
		t.Run(second, func(t *testing.T) {
			stack := newStack(t)
			first, err := lambdaidemcdk.NewTable(stack, "Idem", nil)
			require.NoError(t, err)
			other := first
			if second == "another table" {
				other, err = lambdaidemcdk.NewTable(stack, "Other", &lambdaidemcdk.TableProps{TableName: "other-records"})
				require.NoError(t, err)
			}
			fn := newFunction(t, stack, "Fn", 0)
			_, err = first.Bind(fn, 24*time.Hour)
			require.NoError(t, err)

			grant, err := other.Bind(fn, 48*time.Hour)
			require.ErrorIs(t, err, lambdaidemcdk.ErrAlreadyBound)
			assert.Nil(t, grant)
			assert.Contains(t, err.Error(), "Test/Fn is already bound to table Test.Idem")

			tmpl := cdktest.Synth(t, stack)
			firstID := tmpl.One(t, "AWS::DynamoDB::Table", "Idem").LogicalID
			env := envOf(t, tmpl, "Fn")
			assert.Equal(t, cdktest.Ref(firstID), env["IDEMPOTENCY_TABLE"], "the first binding stands")
			assert.Equal(t, "24h0m0s", env["IDEMPOTENCY_TTL"])
			assert.Len(t, tmpl.Statements(), 1, "no grant from the refused binding")
		})
	}
}

func TestBindRefusesABadHorizonOrNoFunction(t *testing.T) {
	stack := newStack(t)
	table, err := lambdaidemcdk.NewTable(stack, "Idem", nil)
	require.NoError(t, err)
	for _, horizon := range []time.Duration{0, -time.Hour, 500 * time.Millisecond, 90*time.Second + time.Millisecond} {
		t.Run(horizon.String(), func(t *testing.T) {
			_, err := table.Bind(newFunction(t, stack, "Fn"+horizon.String(), 0), horizon)
			assert.ErrorIs(t, err, lambdaidemcdk.ErrInvalidProps)
			_, err = table.Environment(horizon)
			assert.ErrorIs(t, err, lambdaidemcdk.ErrInvalidProps)
		})
	}
	_, err = table.Bind(nil, time.Hour)
	assert.ErrorIs(t, err, lambdaidemcdk.ErrInvalidProps)
}

// GrantStore takes any IGrantable: here a role that is not a function's (an
// ECS task role, a state machine's role) and a function alias.
func TestGrantStoreTakesAnyGrantable(t *testing.T) {
	stack := newStack(t)
	table, err := lambdaidemcdk.NewTable(stack, "Idem", nil)
	require.NoError(t, err)
	role := awsiam.NewRole(stack, jsii.String("TaskRole"), &awsiam.RoleProps{
		AssumedBy: awsiam.NewServicePrincipal(jsii.String("ecs-tasks.amazonaws.com"), nil),
	})
	fn := newFunction(t, stack, "Fn", 0)
	alias := awslambda.NewAlias(stack, jsii.String("Live"), &awslambda.AliasProps{
		AliasName: jsii.String("live"), Version: fn.CurrentVersion(),
	})
	for _, grantee := range []awsiam.IGrantable{role, alias} {
		g := table.GrantStore(grantee)
		assert.True(t, *g.Success())
	}

	tmpl := cdktest.Synth(t, stack)
	tableID := tmpl.One(t, "AWS::DynamoDB::Table", "Idem").LogicalID
	want := cdktest.Statement{Effect: "Allow", Actions: storeActions, Resources: []any{cdktest.GetAtt(tableID, "Arn")}}
	assert.Equal(t, []cdktest.Statement{want, want}, tmpl.Statements(), "one statement on each role")
	policies := tmpl.OfType("AWS::IAM::Policy")
	require.Len(t, policies, 2)
	roles := []any{policies[0].Properties["Roles"], policies[1].Properties["Roles"]}
	assert.ElementsMatch(t, []any{
		[]any{cdktest.Ref(tmpl.One(t, "AWS::IAM::Role", "TaskRole").LogicalID)},
		[]any{cdktest.Ref(tmpl.One(t, "AWS::IAM::Role", "FnServiceRole").LogicalID)},
	}, roles, "the alias's grant lands on its function's role")
	assert.NotContains(t, tmpl.One(t, "AWS::Lambda::Function", "Fn").Properties, "Environment", "GrantStore sets no environment")
}

// envOf returns the environment variables of the function whose logical id
// starts with prefix.
func envOf(t *testing.T, tmpl *cdktest.Template, prefix string) map[string]any {
	t.Helper()
	env, _ := tmpl.One(t, "AWS::Lambda::Function", prefix).Properties["Environment"].(map[string]any)
	vars, _ := env["Variables"].(map[string]any)
	return vars
}
