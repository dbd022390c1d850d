package lambdaidemcdk_test

import (
	"testing"

	"github.com/aws/aws-cdk-go/awscdk/v2/awsdynamodb"
	"github.com/aws/aws-cdk-go/awscdk/v2/awskms"
	"github.com/aws/jsii-runtime-go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lambdaidem/lambdaidem/cdk/internal/cdktest"
	"github.com/lambdaidem/lambdaidem/cdk/lambdaidemcdk"
)

func TestGrantStagedWritesGivesEachKindItsAction(t *testing.T) {
	tests := []struct {
		name   string
		writes []lambdaidemcdk.StagedWrite
		want   []string
	}{
		{"a Put", []lambdaidemcdk.StagedWrite{lambdaidemcdk.StagedPut}, []string{"dynamodb:PutItem"}},
		{"an Update", []lambdaidemcdk.StagedWrite{lambdaidemcdk.StagedUpdate}, []string{"dynamodb:UpdateItem"}},
		{"a Delete", []lambdaidemcdk.StagedWrite{lambdaidemcdk.StagedDelete}, []string{"dynamodb:DeleteItem"}},
		{"a ConditionCheck", []lambdaidemcdk.StagedWrite{lambdaidemcdk.StagedConditionCheck}, []string{"dynamodb:ConditionCheckItem"}},
		{
			"all four, in any order and repeated: each action once, in a fixed order",
			[]lambdaidemcdk.StagedWrite{lambdaidemcdk.StagedConditionCheck, lambdaidemcdk.StagedDelete, lambdaidemcdk.StagedPut,
				lambdaidemcdk.StagedUpdate, lambdaidemcdk.StagedPut},
			[]string{"dynamodb:PutItem", "dynamodb:UpdateItem", "dynamodb:DeleteItem", "dynamodb:ConditionCheckItem"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			stack := newStack(t)
			business := awsdynamodb.NewTable(stack, jsii.String("Orders"), &awsdynamodb.TableProps{
				PartitionKey: &awsdynamodb.Attribute{Name: jsii.String("id"), Type: awsdynamodb.AttributeType_STRING},
			})
			grant, err := lambdaidemcdk.GrantStagedWrites(newFunction(t, stack, "Fn", 0), business, tt.writes...)
			require.NoError(t, err)
			assert.True(t, *grant.Success())

			tmpl := cdktest.Synth(t, stack)
			ordersID := tmpl.One(t, "AWS::DynamoDB::Table", "Orders").LogicalID
			assert.Equal(t, []cdktest.Statement{{Effect: "Allow", Actions: tt.want,
				Resources: []any{cdktest.GetAtt(ordersID, "Arn")}}}, tmpl.Statements())
			assertNoWildcards(t, tmpl)
		})
	}
}

func TestGrantStagedWritesOnATableWithACustomerManagedKey(t *testing.T) {
	stack := newStack(t)
	key := awskms.NewKey(stack, jsii.String("Key"), nil)
	business := awsdynamodb.NewTable(stack, jsii.String("Orders"), &awsdynamodb.TableProps{
		PartitionKey:  &awsdynamodb.Attribute{Name: jsii.String("id"), Type: awsdynamodb.AttributeType_STRING},
		Encryption:    awsdynamodb.TableEncryption_CUSTOMER_MANAGED,
		EncryptionKey: key,
	})
	_, err := lambdaidemcdk.GrantStagedWrites(newFunction(t, stack, "Fn", 0), business, lambdaidemcdk.StagedUpdate)
	require.NoError(t, err)

	tmpl := cdktest.Synth(t, stack)
	assert.Equal(t, []cdktest.Statement{
		{Effect: "Allow", Actions: []string{"dynamodb:UpdateItem"},
			Resources: []any{cdktest.GetAtt(tmpl.One(t, "AWS::DynamoDB::Table", "Orders").LogicalID, "Arn")}},
		{Effect: "Allow", Actions: tableKeyActions,
			Resources: []any{cdktest.GetAtt(tmpl.One(t, "AWS::KMS::Key", "Key").LogicalID, "Arn")}},
	}, tmpl.Statements())
}

func TestGrantStagedWritesRefusesAndGrantsNothing(t *testing.T) {
	stack := newStack(t)
	business := awsdynamodb.Table_FromTableName(stack, jsii.String("Orders"), jsii.String("orders"))
	fn := newFunction(t, stack, "Fn", 0)
	tests := map[string]func() error{
		"no kinds": func() error { _, err := lambdaidemcdk.GrantStagedWrites(fn, business); return err },
		"an unknown kind": func() error {
			_, err := lambdaidemcdk.GrantStagedWrites(fn, business, lambdaidemcdk.StagedPut, "Upsert")
			return err
		},
		"no table": func() error { _, err := lambdaidemcdk.GrantStagedWrites(fn, nil, lambdaidemcdk.StagedPut); return err },
		"no grantee": func() error {
			_, err := lambdaidemcdk.GrantStagedWrites(nil, business, lambdaidemcdk.StagedPut)
			return err
		},
	}
	for name, call := range tests {
		t.Run(name, func(t *testing.T) {
			assert.ErrorIs(t, call(), lambdaidemcdk.ErrInvalidProps)
		})
	}
	assert.Empty(t, cdktest.Synth(t, stack).Statements())
}
