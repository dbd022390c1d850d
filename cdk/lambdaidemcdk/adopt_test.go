package lambdaidemcdk_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/aws/aws-cdk-go/awscdk/v2/awsdynamodb"
	"github.com/aws/aws-cdk-go/awscdk/v2/awskms"
	"github.com/aws/jsii-runtime-go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lambdaidem/lambdaidem/cdk/internal/cdktest"
	"github.com/lambdaidem/lambdaidem/cdk/lambdaidemcdk"
)

// A team moving from Powertools keeps its table: adopted by name, with the
// attribute names Powertools was configured with, nothing is created and the
// function gets the grant and the settings.
func TestFromTableNameAdoptsAPowertoolsTable(t *testing.T) {
	stack := newStack(t)
	table, err := lambdaidemcdk.FromTableName(stack, "Powertools", "IdempotencyTable", nil)
	require.NoError(t, err)
	_, err = table.Bind(newFunction(t, stack, "Fn", 0), 24*time.Hour)
	require.NoError(t, err)

	tmpl := cdktest.Synth(t, stack)
	assert.Empty(t, tmpl.OfType("AWS::DynamoDB::Table"), "adoption creates no table")
	stmts := tmpl.Statements()
	require.Len(t, stmts, 1)
	assert.Equal(t, storeActions, stmts[0].Actions)
	require.Len(t, stmts[0].Resources, 1)
	arn, err := json.Marshal(stmts[0].Resources[0])
	require.NoError(t, err)
	assert.Contains(t, string(arn), ":table/IdempotencyTable", "the table's ARN in the stack's account and Region")
	assert.Equal(t, map[string]any{
		"IDEMPOTENCY_TABLE":           "IdempotencyTable",
		"IDEMPOTENCY_TTL":             "24h0m0s",
		"IDEMPOTENCY_KEY_ATTR":        "id",
		"IDEMPOTENCY_EXPIRATION_ATTR": "expiration",
	}, envOf(t, tmpl, "Fn"))
}

func TestFromTableArnAdoptsATableWithItsKey(t *testing.T) {
	const arn = "arn:aws:dynamodb:eu-west-1:123456789012:table/payments-idempotency"
	stack := newStack(t)
	key := awskms.Key_FromKeyArn(stack, jsii.String("Key"),
		jsii.String("arn:aws:kms:eu-west-1:123456789012:key/0b4a7d1e-1111-2222-3333-444455556666"))
	table, err := lambdaidemcdk.FromTableArn(stack, "Idem", arn, &lambdaidemcdk.AdoptProps{
		Attributes:    lambdaidemcdk.Attributes{PartitionKey: "pk", TimeToLiveAttribute: "expires_at"},
		EncryptionKey: key,
	})
	require.NoError(t, err)
	g := table.GrantStore(newFunction(t, stack, "Fn", 0))
	assert.True(t, *g.Success())
	assert.Equal(t, lambdaidemcdk.Attributes{PartitionKey: "pk", TimeToLiveAttribute: "expires_at"}, table.Attributes())

	assert.Equal(t, []cdktest.Statement{
		{Effect: "Allow", Actions: storeActions, Resources: []any{arn}},
		{Effect: "Allow", Actions: tableKeyActions,
			Resources: []any{"arn:aws:kms:eu-west-1:123456789012:key/0b4a7d1e-1111-2222-3333-444455556666"}},
	}, cdktest.Synth(t, stack).Statements())
}

func TestFromTableAdoptsATableDefinedElsewhere(t *testing.T) {
	stack := newRegionalStack(t)
	key := awskms.NewKey(stack, jsii.String("Key"), nil)
	v2 := awsdynamodb.NewTableV2(stack, jsii.String("Records"), &awsdynamodb.TablePropsV2{
		PartitionKey:        &awsdynamodb.Attribute{Name: jsii.String("id"), Type: awsdynamodb.AttributeType_STRING},
		TimeToLiveAttribute: jsii.String("expiration"),
		Encryption:          awsdynamodb.TableEncryptionV2_CustomerManagedKey(key, nil),
	})
	table, err := lambdaidemcdk.FromTable(v2, nil)
	require.NoError(t, err)
	assert.NotNil(t, table.EncryptionKey(), "the key is read from the table")
	_, err = table.Bind(newFunction(t, stack, "Fn", 0), time.Hour)
	require.NoError(t, err)

	tmpl := cdktest.Synth(t, stack)
	assert.Len(t, tmpl.Statements(), 2, "the table and its key")
	assert.Equal(t, cdktest.Ref(tmpl.One(t, "AWS::DynamoDB::GlobalTable", "Records").LogicalID), envOf(t, tmpl, "Fn")["IDEMPOTENCY_TABLE"])

	_, err = lambdaidemcdk.FromTable(nil, nil)
	assert.ErrorIs(t, err, lambdaidemcdk.ErrInvalidProps)
}

func TestAdoptionRefusesWhatCannotNameATable(t *testing.T) {
	tests := map[string]func(*testing.T) error{
		"empty name": func(t *testing.T) error { _, err := lambdaidemcdk.FromTableName(newStack(t), "I", "", nil); return err },
		"bad name": func(t *testing.T) error {
			_, err := lambdaidemcdk.FromTableName(newStack(t), "I", "my table", nil)
			return err
		},
		"empty ARN":     func(t *testing.T) error { _, err := lambdaidemcdk.FromTableArn(newStack(t), "I", "", nil); return err },
		"a queue's ARN": func(t *testing.T) error { return fromArn(t, "arn:aws:sqs:us-east-1:123456789012:orders") },
		"an index's ARN": func(t *testing.T) error {
			return fromArn(t, "arn:aws:dynamodb:us-east-1:123456789012:table/t1/index/gsi")
		},
		"no table name": func(t *testing.T) error { return fromArn(t, "arn:aws:dynamodb:us-east-1:123456789012:table/") },
		"colliding attributes": func(t *testing.T) error {
			_, err := lambdaidemcdk.FromTableName(newStack(t), "I", "records", &lambdaidemcdk.AdoptProps{
				Attributes: lambdaidemcdk.Attributes{PartitionKey: "expiration"},
			})
			return err
		},
	}
	for name, call := range tests {
		t.Run(name, func(t *testing.T) {
			assert.ErrorIs(t, call(t), lambdaidemcdk.ErrInvalidProps)
		})
	}
}

func fromArn(t *testing.T, arn string) error {
	_, err := lambdaidemcdk.FromTableArn(newStack(t), "I", arn, nil)
	return err
}
