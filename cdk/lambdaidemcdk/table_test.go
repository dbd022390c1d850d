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
			props:     &lambdaidemcdk.TableProps{Attributes: lambdaidemcdk.Attributes{SortKey: "sk"}},
			keySchema: []any{key("id", "HASH"), key("sk", "RANGE")},
			attrs:     []any{attr("id"), attr("sk")},
			ttl:       "expiration",
			retention: "Retain",
		},
		{
			name: "renamed attributes, removal policy DESTROY without deletion protection",
			props: &lambdaidemcdk.TableProps{
				Attributes:    lambdaidemcdk.Attributes{PartitionKey: "pk", TimeToLiveAttribute: "ttl"},
				RemovalPolicy: awscdk.RemovalPolicy_DESTROY, NoDeletionProtection: true,
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
			assert.Equal(t, tt.retention == "Retain", p["DeletionProtectionEnabled"], "deletion protection unless DESTROY")
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

func TestNewTableRefusesPropsThatCannotWork(t *testing.T) {
	tests := map[string]struct {
		props *lambdaidemcdk.TableProps
		msg   string
	}{
		"sort key is the partition key":  {&lambdaidemcdk.TableProps{Attributes: lambdaidemcdk.Attributes{SortKey: "id"}}, `sort key "id" is also the partition key`},
		"TTL attribute is the partition": {&lambdaidemcdk.TableProps{Attributes: lambdaidemcdk.Attributes{TimeToLiveAttribute: "id"}}, `TTL attribute "id" is also a key attribute`},
		"TTL attribute is the sort key":  {&lambdaidemcdk.TableProps{Attributes: lambdaidemcdk.Attributes{SortKey: "sk", TimeToLiveAttribute: "sk"}}, `TTL attribute "sk" is also a key attribute`},
		"DESTROY with deletion protection": {&lambdaidemcdk.TableProps{RemovalPolicy: awscdk.RemovalPolicy_DESTROY},
			"RemovalPolicy DESTROY cannot delete a table with deletion protection"},
		"table name too short":     {&lambdaidemcdk.TableProps{TableName: "ab"}, `table name "ab" must be 3 to 255 characters`},
		"table name with a slash":  {&lambdaidemcdk.TableProps{TableName: "idem/records"}, `table name "idem/records" may hold only`},
		"replicas without TableV2": {&lambdaidemcdk.TableProps{Global: &lambdaidemcdk.GlobalTableProps{Replicas: []string{"us-west-2"}, HomeRegionRouting: true}}, "needs V2"},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			stack := newStack(t)
			_, err := lambdaidemcdk.NewTable(stack, "Idem", tt.props)
			require.ErrorIs(t, err, lambdaidemcdk.ErrInvalidProps)
			assert.Contains(t, err.Error(), tt.msg)
			assert.Empty(t, cdktest.Synth(t, stack).Resources, "a refused table creates nothing")
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

// CDK throws (a panic in Go) on a construct id used twice in one scope; the
// constructors return an error instead, and create nothing more.
func TestConstructorsRefuseAnIDAlreadyUsed(t *testing.T) {
	stack := newStack(t)
	table, err := lambdaidemcdk.NewTable(stack, "Idem", nil)
	require.NoError(t, err)
	fn := newFunction(t, stack, "Fn", 0)
	calls := map[string]func() error{
		"NewTable":      func() error { _, err := lambdaidemcdk.NewTable(stack, "Idem", nil); return err },
		"FromTableName": func() error { _, err := lambdaidemcdk.FromTableName(stack, "Fn", "records", nil); return err },
		"FromTableArn": func() error {
			_, err := lambdaidemcdk.FromTableArn(stack, "Idem", "arn:aws:dynamodb:us-east-1:123456789012:table/records", nil)
			return err
		},
		"NewQueueSource": func() error {
			_, err := lambdaidemcdk.NewQueueSource(stack, "Fn", lambdaidemcdk.QueueSourceProps{Function: fn, Table: table})
			return err
		},
		"an empty id": func() error { _, err := lambdaidemcdk.NewTable(stack, "", nil); return err },
		"no scope":    func() error { _, err := lambdaidemcdk.NewTable(nil, "Other", nil); return err },
	}
	for name, call := range calls {
		t.Run(name, func(t *testing.T) {
			assert.ErrorIs(t, call(), lambdaidemcdk.ErrInvalidProps)
		})
	}
	tmpl := cdktest.Synth(t, stack)
	assert.Len(t, tmpl.OfType("AWS::DynamoDB::Table"), 1)
	assert.Empty(t, tmpl.OfType("AWS::SQS::Queue"))
	assert.NotContains(t, tmpl.One(t, "AWS::Lambda::Function", "Fn").Properties, "Environment", "the refused source bound nothing")
}
