package lambdaidemcdk_test

import (
	"testing"
	"time"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awskms"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambda"
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lambdaidem/lambdaidem/cdk/internal/cdktest"
	"github.com/lambdaidem/lambdaidem/cdk/lambdaidemcdk"
)

func TestMain(m *testing.M) { cdktest.Main(m) }

// newStack returns an empty, environment-agnostic stack in a fresh app.
func newStack(t *testing.T) awscdk.Stack {
	t.Helper()
	return awscdk.NewStack(cdktest.NewApp(t, nil), jsii.String("Test"), nil)
}

// newFunction adds a provided.al2023 function with the given timeout (0: none
// configured) whose code is a dummy zip.
func newFunction(t *testing.T, scope constructs.Construct, id string, timeout time.Duration) awslambda.Function {
	t.Helper()
	props := &awslambda.FunctionProps{
		Runtime: awslambda.Runtime_PROVIDED_AL2023(),
		Handler: jsii.String("bootstrap"),
		Code:    awslambda.Code_FromAsset(jsii.String(cdktest.DummyZip(t)), nil),
	}
	if timeout != 0 {
		props.Timeout = awscdk.Duration_Seconds(jsii.Number(timeout.Seconds()))
	}
	return awslambda.NewFunction(scope, jsii.String(id), props)
}

func TestNewTableSchema(t *testing.T) {
	tests := []struct {
		name      string
		props     *lambdaidemcdk.TableProps
		keySchema []any
		attrs     []any
		ttl       string
		retention string
	}{
		{
			name:      "nil props: Powertools-compatible defaults, retained",
			props:     nil,
			keySchema: []any{key("id", "HASH")},
			attrs:     []any{attr("id")},
			ttl:       "expiration",
			retention: "Retain",
		},
		{
			name:      "optional String sort key",
			props:     &lambdaidemcdk.TableProps{SortKey: "sk"},
			keySchema: []any{key("id", "HASH"), key("sk", "RANGE")},
			attrs:     []any{attr("id"), attr("sk")},
			ttl:       "expiration",
			retention: "Retain",
		},
		{
			name: "renamed attributes, removal policy DESTROY",
			props: &lambdaidemcdk.TableProps{
				PartitionKey: "pk", TimeToLiveAttribute: "ttl", RemovalPolicy: awscdk.RemovalPolicy_DESTROY,
			},
			keySchema: []any{key("pk", "HASH")},
			attrs:     []any{attr("pk")},
			ttl:       "ttl",
			retention: "Delete",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			stack := newStack(t)
			_, err := lambdaidemcdk.NewTable(stack, "Idem", tt.props)
			require.NoError(t, err)

			table := cdktest.Synth(t, stack).One(t, "AWS::DynamoDB::Table", "Idem")
			p := table.Properties
			assert.Equal(t, tt.keySchema, p["KeySchema"], "key schema")
			assert.ElementsMatch(t, tt.attrs, p["AttributeDefinitions"], "only the keys are declared, as Strings")
			assert.Equal(t, map[string]any{"AttributeName": tt.ttl, "Enabled": true}, p["TimeToLiveSpecification"])
			assert.Equal(t, "PAY_PER_REQUEST", p["BillingMode"])
			assert.Equal(t, map[string]any{"PointInTimeRecoveryEnabled": true}, p["PointInTimeRecoverySpecification"])
			assert.Equal(t, map[string]any{"SSEEnabled": false}, p["SSESpecification"], "AWS-owned key")
			assert.Equal(t, tt.retention, table.DeletionPolicy)
			assert.Equal(t, tt.retention, table.UpdateReplace)
		})
	}
}

func TestNewTableCustomerManagedKey(t *testing.T) {
	stack := newStack(t)
	key := awskms.NewKey(stack, jsii.String("Key"), nil)
	_, err := lambdaidemcdk.NewTable(stack, "Idem", &lambdaidemcdk.TableProps{EncryptionKey: key})
	require.NoError(t, err)

	tmpl := cdktest.Synth(t, stack)
	keyID := tmpl.One(t, "AWS::KMS::Key", "Key").LogicalID
	table := tmpl.One(t, "AWS::DynamoDB::Table", "Idem")
	assert.Equal(t, map[string]any{
		"SSEEnabled":     true,
		"SSEType":        "KMS",
		"KMSMasterKeyId": cdktest.GetAtt(keyID, "Arn"),
	}, table.Properties["SSESpecification"])
}

func TestNewTableRefusesCollidingAttributeNames(t *testing.T) {
	tests := map[string]*lambdaidemcdk.TableProps{
		"sort key is the partition key":  {SortKey: "id"},
		"TTL attribute is the partition": {TimeToLiveAttribute: "id"},
		"TTL attribute is the sort key":  {SortKey: "sk", TimeToLiveAttribute: "sk"},
	}
	for name, props := range tests {
		t.Run(name, func(t *testing.T) {
			_, err := lambdaidemcdk.NewTable(newStack(t), "Idem", props)
			assert.ErrorIs(t, err, lambdaidemcdk.ErrInvalidProps)
		})
	}
}

func TestGrantToGivesExactlyTheStoreActionsOnTheTable(t *testing.T) {
	stack := newStack(t)
	table, err := lambdaidemcdk.NewTable(stack, "Idem", nil)
	require.NoError(t, err)
	fn := newFunction(t, stack, "Fn", 10*time.Second)
	require.NoError(t, table.GrantTo(fn, 24*time.Hour))

	tmpl := cdktest.Synth(t, stack)
	tableID := tmpl.One(t, "AWS::DynamoDB::Table", "Idem").LogicalID
	assert.Equal(t, []cdktest.Statement{{
		Effect:    "Allow",
		Actions:   []string{"dynamodb:GetItem", "dynamodb:PutItem", "dynamodb:UpdateItem", "dynamodb:DeleteItem"},
		Resources: []any{cdktest.GetAtt(tableID, "Arn")},
	}}, tmpl.Statements(), "one statement: the store's four actions on the table ARN alone (no index ARNs)")
	assertNoWildcards(t, tmpl)

	env := tmpl.One(t, "AWS::Lambda::Function", "Fn").Properties["Environment"]
	assert.Equal(t, map[string]any{"Variables": map[string]any{
		"IDEMPOTENCY_TABLE": cdktest.Ref(tableID),
		"IDEMPOTENCY_TTL":   "24h0m0s",
	}}, env)
}

func TestGrantToWithCustomerManagedKeyAlsoGrantsTheKey(t *testing.T) {
	stack := newStack(t)
	key := awskms.NewKey(stack, jsii.String("Key"), nil)
	table, err := lambdaidemcdk.NewTable(stack, "Idem", &lambdaidemcdk.TableProps{EncryptionKey: key})
	require.NoError(t, err)
	fn := newFunction(t, stack, "Fn", 0)
	require.NoError(t, table.GrantTo(fn, 90*time.Minute))

	tmpl := cdktest.Synth(t, stack)
	tableID := tmpl.One(t, "AWS::DynamoDB::Table", "Idem").LogicalID
	keyID := tmpl.One(t, "AWS::KMS::Key", "Key").LogicalID
	assert.Equal(t, []cdktest.Statement{
		{
			Effect:    "Allow",
			Actions:   []string{"dynamodb:GetItem", "dynamodb:PutItem", "dynamodb:UpdateItem", "dynamodb:DeleteItem"},
			Resources: []any{cdktest.GetAtt(tableID, "Arn")},
		},
		{
			Effect:    "Allow",
			Actions:   []string{"kms:Decrypt", "kms:DescribeKey", "kms:Encrypt", "kms:ReEncrypt*", "kms:GenerateDataKey*"},
			Resources: []any{cdktest.GetAtt(keyID, "Arn")},
		},
	}, tmpl.Statements())
	assertNoWildcards(t, tmpl)
	vars := tmpl.One(t, "AWS::Lambda::Function", "Fn").Properties["Environment"].(map[string]any)["Variables"]
	assert.Equal(t, "1h30m0s", vars.(map[string]any)["IDEMPOTENCY_TTL"])
}

func TestGrantToRefusesAHorizonBelowOneSecond(t *testing.T) {
	for _, horizon := range []time.Duration{0, -time.Hour, 500 * time.Millisecond} {
		t.Run(horizon.String(), func(t *testing.T) {
			stack := newStack(t)
			table, err := lambdaidemcdk.NewTable(stack, "Idem", nil)
			require.NoError(t, err)
			err = table.GrantTo(newFunction(t, stack, "Fn", 0), horizon)
			assert.ErrorIs(t, err, lambdaidemcdk.ErrInvalidProps)
		})
	}
}

// assertNoWildcards fails unless every IAM policy statement of tmpl names its
// actions and resources: no "*" or "dynamodb:*" action, no "*" resource.
func assertNoWildcards(t *testing.T, tmpl *cdktest.Template) {
	t.Helper()
	for _, st := range tmpl.Statements() {
		assert.NotContains(t, st.Actions, "*")
		assert.NotContains(t, st.Actions, "dynamodb:*")
		assert.NotContains(t, st.Resources, "*")
	}
}

func key(name, typ string) any { return map[string]any{"AttributeName": name, "KeyType": typ} }
func attr(name string) any     { return map[string]any{"AttributeName": name, "AttributeType": "S"} }
