package lambdaidemcdk_test

import (
	"testing"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsdynamodb"
	"github.com/aws/aws-cdk-go/awscdk/v2/awskms"
	"github.com/aws/jsii-runtime-go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lambdaidem/lambdaidem/cdk/internal/cdktest"
	"github.com/lambdaidem/lambdaidem/cdk/lambdaidemcdk"
)

// newRegionalStack returns a stack in account 123456789012, Region us-east-1.
func newRegionalStack(t *testing.T) awscdk.Stack {
	t.Helper()
	return awscdk.NewStack(cdktest.NewApp(t, nil), jsii.String("Test"), &awscdk.StackProps{
		Env: &awscdk.Environment{Account: jsii.String("123456789012"), Region: jsii.String("us-east-1")},
	})
}

func TestNewTableV2IsAGlobalTableResourceWithTheSameSchema(t *testing.T) {
	stack := newStack(t)
	table, err := lambdaidemcdk.NewTable(stack, "Idem", &lambdaidemcdk.TableProps{V2: true})
	require.NoError(t, err)
	_, isV2 := table.Table.(awsdynamodb.TableV2)
	assert.True(t, isV2, "the underlying table is a TableV2")

	tmpl := cdktest.Synth(t, stack)
	assert.Empty(t, tmpl.OfType("AWS::DynamoDB::Table"))
	g := tmpl.One(t, "AWS::DynamoDB::GlobalTable", "Idem")
	p := g.Properties
	assert.Equal(t, []any{key("id", "HASH")}, p["KeySchema"])
	assert.Equal(t, map[string]any{"AttributeName": "expiration", "Enabled": true}, p["TimeToLiveSpecification"])
	assert.Equal(t, "PAY_PER_REQUEST", p["BillingMode"])
	replicas := p["Replicas"].([]any)
	require.Len(t, replicas, 1, "one Region until replicas are added")
	r := replicas[0].(map[string]any)
	assert.Equal(t, true, r["DeletionProtectionEnabled"])
	assert.Equal(t, map[string]any{"PointInTimeRecoveryEnabled": true}, r["PointInTimeRecoverySpecification"])
	assert.Equal(t, "Retain", g.DeletionPolicy)
}

func TestNewTableGlobalWithHomeRegionRouting(t *testing.T) {
	stack := newRegionalStack(t)
	_, err := lambdaidemcdk.NewTable(stack, "Idem", &lambdaidemcdk.TableProps{V2: true, Global: &lambdaidemcdk.GlobalTableProps{
		Replicas: []string{"eu-west-1", "us-west-2"}, HomeRegionRouting: true,
	}})
	require.NoError(t, err)

	p := cdktest.Synth(t, stack).One(t, "AWS::DynamoDB::GlobalTable", "Idem").Properties
	regions := []string{}
	for _, r := range p["Replicas"].([]any) {
		rep := r.(map[string]any)
		regions = append(regions, rep["Region"].(string))
		assert.Equal(t, true, rep["DeletionProtectionEnabled"], rep["Region"])
	}
	assert.ElementsMatch(t, []string{"us-east-1", "eu-west-1", "us-west-2"}, regions)
	assert.Equal(t, map[string]any{"AttributeName": "expiration", "Enabled": true}, p["TimeToLiveSpecification"])
	assert.NotEqual(t, "STRONG", p["MultiRegionConsistency"])
}

func TestNewTableRefusesGlobalSetupsThatBreakTheGuarantees(t *testing.T) {
	tests := []struct {
		name    string
		regions bool // a stack with a concrete Region
		props   lambdaidemcdk.TableProps
		want    error
		msg     string
	}{
		{
			name: "MRSC: no transactions, no TTL", regions: true,
			props: lambdaidemcdk.TableProps{V2: true, Global: &lambdaidemcdk.GlobalTableProps{
				Replicas: []string{"us-east-2", "us-west-2"}, Consistency: awsdynamodb.MultiRegionConsistency_STRONG, HomeRegionRouting: true,
			}},
			want: lambdaidemcdk.ErrUnsafeGlobalTable, msg: "does not support the transaction APIs nor TTL",
		},
		{
			name: "MREC without home-Region routing", regions: true,
			props: lambdaidemcdk.TableProps{V2: true, Global: &lambdaidemcdk.GlobalTableProps{Replicas: []string{"us-west-2"}}},
			want:  lambdaidemcdk.ErrUnsafeGlobalTable, msg: "two Regions can both claim one key",
		},
		{
			name:  "a region-agnostic stack",
			props: lambdaidemcdk.TableProps{V2: true, Global: &lambdaidemcdk.GlobalTableProps{Replicas: []string{"us-west-2"}, HomeRegionRouting: true}},
			want:  lambdaidemcdk.ErrInvalidProps, msg: "concrete Region",
		},
		{
			name: "no replicas", regions: true,
			props: lambdaidemcdk.TableProps{V2: true, Global: &lambdaidemcdk.GlobalTableProps{HomeRegionRouting: true}},
			want:  lambdaidemcdk.ErrInvalidProps, msg: "at least one replica",
		},
		{
			name: "the stack's own Region as a replica", regions: true,
			props: lambdaidemcdk.TableProps{V2: true, Global: &lambdaidemcdk.GlobalTableProps{Replicas: []string{"us-east-1"}, HomeRegionRouting: true}},
			want:  lambdaidemcdk.ErrInvalidProps, msg: "the stack's own Region",
		},
		{
			name: "a replica twice", regions: true,
			props: lambdaidemcdk.TableProps{V2: true, Global: &lambdaidemcdk.GlobalTableProps{Replicas: []string{"eu-west-1", "eu-west-1"}, HomeRegionRouting: true}},
			want:  lambdaidemcdk.ErrInvalidProps, msg: "appears twice",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			stack := newStack(t)
			if tt.regions {
				stack = newRegionalStack(t)
			}
			_, err := lambdaidemcdk.NewTable(stack, "Idem", &tt.props)
			require.ErrorIs(t, err, tt.want)
			assert.Contains(t, err.Error(), tt.msg)
			assert.Empty(t, cdktest.Synth(t, stack).Resources, "a refused table creates nothing")
		})
	}

	t.Run("a customer-managed key in a region-agnostic stack", func(t *testing.T) {
		stack := newStack(t)
		key := awskms.NewKey(stack, jsii.String("Key"), nil)
		_, err := lambdaidemcdk.NewTable(stack, "Idem", &lambdaidemcdk.TableProps{V2: true, EncryptionKey: key})
		require.ErrorIs(t, err, lambdaidemcdk.ErrInvalidProps)
		assert.Contains(t, err.Error(), "concrete Region")
		assert.Empty(t, cdktest.Synth(t, stack).OfType("AWS::DynamoDB::GlobalTable"))
	})
	t.Run("a customer-managed key on replicas", func(t *testing.T) {
		stack := newRegionalStack(t)
		key := awskms.NewKey(stack, jsii.String("Key"), nil)
		_, err := lambdaidemcdk.NewTable(stack, "Idem", &lambdaidemcdk.TableProps{V2: true, EncryptionKey: key,
			Global: &lambdaidemcdk.GlobalTableProps{Replicas: []string{"us-west-2"}, HomeRegionRouting: true}})
		require.ErrorIs(t, err, lambdaidemcdk.ErrInvalidProps)
		assert.Contains(t, err.Error(), "adopt it with FromTable")
		assert.Empty(t, cdktest.Synth(t, stack).OfType("AWS::DynamoDB::GlobalTable"))
	})
}
