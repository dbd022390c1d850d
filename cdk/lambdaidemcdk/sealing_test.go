package lambdaidemcdk_test

import (
	"encoding/json"
	"errors"
	"os"
	"testing"

	"github.com/aws/aws-cdk-go/awscdk/v2/awskms"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambda"
	"github.com/aws/jsii-runtime-go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lambdaidem/lambdaidem/cdk/internal/cdktest"
	"github.com/lambdaidem/lambdaidem/cdk/lambdaidemcdk"
)

const previousKeyArn = "arn:aws:kms:eu-west-1:111122223333:key/1234abcd-12ab-34cd-56ef-1234567890ab"

// sealedUnder is the condition of GenerateDataKey and Decrypt: each pair
// of the Sealer's encryption context.
func sealedUnder(pairs map[string]any) map[string]any {
	return map[string]any{"StringEquals": pairs}
}

// BindSealing grants exactly what kmsseal calls on the key (AWS KMS API
// Reference: GenerateDataKey and Decrypt take the encryption context that
// kms:EncryptionContext:<key> conditions check; DescribeKey takes none),
// on exactly the key ARNs, and sets what the function needs to find the key.
func TestBindSealingGrantsWhatKmssealCalls(t *testing.T) {
	stack := newStack(t)
	key := awskms.NewKey(stack, jsii.String("OutcomeKey"), &awskms.KeyProps{EnableKeyRotation: jsii.Bool(true)})
	fn := newFunction(t, stack, "Fn", 0)
	grant, err := lambdaidemcdk.BindSealing(fn, lambdaidemcdk.SealingProps{Key: key})
	require.NoError(t, err)
	assert.True(t, *grant.Success())

	tmpl := cdktest.Synth(t, stack)
	keyArn := cdktest.GetAtt(tmpl.One(t, "AWS::KMS::Key", "OutcomeKey").LogicalID, "Arn")
	purpose := sealedUnder(map[string]any{"kms:EncryptionContext:purpose": "lambdaidem-outcome"})
	assert.Equal(t, []cdktest.Statement{
		{Effect: "Allow", Actions: []string{"kms:GenerateDataKey"}, Resources: []any{keyArn}, Condition: purpose},
		{Effect: "Allow", Actions: []string{"kms:Decrypt"}, Resources: []any{keyArn}, Condition: purpose},
		{Effect: "Allow", Actions: []string{"kms:DescribeKey"}, Resources: []any{keyArn}},
	}, tmpl.Statements())
	assertNoWildcards(t, tmpl)
	assert.Equal(t, map[string]any{
		"IDEMPOTENCY_SEAL_KEY":     keyArn,
		"IDEMPOTENCY_SEAL_CONTEXT": `{"purpose":"lambdaidem-outcome"}`,
	}, envOf(t, tmpl, "Fn"))
	assert.ElementsMatch(t, []string{"kms:GenerateDataKey", "kms:Decrypt", "kms:DescribeKey"}, lambdaidemcdk.SealingActions())
}

// Sealing by alias (kmsseal resolves it with DescribeKey and follows a manual
// rotation), with the key outcomes may still be sealed under and a context of
// the team's own: the grant is on the key the alias names and on the previous
// key (Decrypt and DescribeKey only), the function gets the alias name, the
// previous key's ARN and the context.
func TestBindSealingByAliasWithAPreviousKeyAndAContext(t *testing.T) {
	stack := newStack(t)
	key := awskms.NewKey(stack, jsii.String("OutcomeKey"), &awskms.KeyProps{EnableKeyRotation: jsii.Bool(true)})
	alias := key.AddAlias(jsii.String("alias/payments-outcomes"))
	previous := awskms.Key_FromKeyArn(stack, jsii.String("Previous"), jsii.String(previousKeyArn))
	fn := newFunction(t, stack, "Fn", 0)
	ec := map[string]string{"purpose": "lambdaidem-outcome", "table": "payments-idempotency"}
	_, err := lambdaidemcdk.BindSealing(fn.CurrentVersion(), lambdaidemcdk.SealingProps{
		Key: alias, PreviousKeys: []awskms.IKey{previous}, EncryptionContext: ec})
	require.NoError(t, err)

	tmpl := cdktest.Synth(t, stack)
	keyArn := cdktest.GetAtt(tmpl.One(t, "AWS::KMS::Key", "OutcomeKey").LogicalID, "Arn")
	both := sealedUnder(map[string]any{"kms:EncryptionContext:purpose": "lambdaidem-outcome", "kms:EncryptionContext:table": "payments-idempotency"})
	assert.Equal(t, []cdktest.Statement{
		{Effect: "Allow", Actions: []string{"kms:GenerateDataKey"}, Resources: []any{keyArn}, Condition: both},
		{Effect: "Allow", Actions: []string{"kms:Decrypt"}, Resources: []any{keyArn, previousKeyArn}, Condition: both},
		{Effect: "Allow", Actions: []string{"kms:DescribeKey"}, Resources: []any{keyArn, previousKeyArn}},
	}, tmpl.Statements())
	env := envOf(t, tmpl, "Fn")
	assert.Equal(t, "alias/payments-outcomes", env["IDEMPOTENCY_SEAL_KEY"])
	assert.Equal(t, previousKeyArn, env["IDEMPOTENCY_SEAL_PREVIOUS_KEYS"])
	var got map[string]string
	require.NoError(t, json.Unmarshal([]byte(env["IDEMPOTENCY_SEAL_CONTEXT"].(string)), &got))
	assert.Equal(t, ec, got, "the context the function's Sealer uses is the one the condition requires")
}

func TestBindSealingRefusesBadProps(t *testing.T) {
	stack := newStack(t)
	key := awskms.NewKey(stack, jsii.String("Key"), nil)
	imported := awskms.Alias_FromAliasName(stack, jsii.String("Imported"), jsii.String("alias/elsewhere"))
	tests := map[string]struct {
		props lambdaidemcdk.SealingProps
		want  string
	}{
		"no key":                 {props: lambdaidemcdk.SealingProps{}, want: "BindSealing needs a Key"},
		"an imported alias":      {props: lambdaidemcdk.SealingProps{Key: imported}, want: "the alias alias/elsewhere is imported and does not say which key it names"},
		"an alias as previous":   {props: lambdaidemcdk.SealingProps{Key: key, PreviousKeys: []awskms.IKey{key.AddAlias(jsii.String("alias/old"))}}, want: "PreviousKeys[0] is an alias"},
		"a bad alias name":       {props: lambdaidemcdk.SealingProps{Key: key, Alias: "payments"}, want: `Alias "payments": an alias name starts with alias/`},
		"an empty context value": {props: lambdaidemcdk.SealingProps{Key: key, EncryptionContext: map[string]string{"purpose": ""}}, want: "KMS needs a non-empty key and value"},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			fn := newFunction(t, stack, "Fn"+name, 0)
			grant, err := lambdaidemcdk.BindSealing(fn, tt.props)
			require.ErrorIs(t, err, lambdaidemcdk.ErrInvalidProps)
			assert.Contains(t, err.Error(), tt.want)
			assert.Nil(t, grant)
		})
	}
	assert.Empty(t, cdktest.Synth(t, stack).Statements(), "nothing granted")
}

// A function already sealing under another key is refused, naming the
// variable; an imported function gets the variables to set.
func TestBindSealingOnAFunctionAlreadySetOrImported(t *testing.T) {
	stack := newStack(t)
	key := awskms.NewKey(stack, jsii.String("Key"), nil)
	fn := awslambda.NewFunction(stack, jsii.String("Fn"), &awslambda.FunctionProps{
		Runtime: awslambda.Runtime_PROVIDED_AL2023(), Handler: jsii.String("bootstrap"),
		Code:        awslambda.Code_FromAsset(jsii.String(cdktest.DummyZip(t)), nil),
		Environment: &map[string]*string{"IDEMPOTENCY_SEAL_KEY": jsii.String("alias/other")},
	})
	_, err := lambdaidemcdk.BindSealing(fn, lambdaidemcdk.SealingProps{Key: key})
	require.ErrorIs(t, err, lambdaidemcdk.ErrEnvironmentConflict)
	assert.Contains(t, err.Error(), `Test/Fn already sets IDEMPOTENCY_SEAL_KEY to "alias/other"`)

	imported := awslambda.Function_FromFunctionArn(stack, jsii.String("Ledger"), jsii.String(importedFnArn))
	grant, err := lambdaidemcdk.BindSealing(imported, lambdaidemcdk.SealingProps{Key: key, Alias: "alias/ledger-outcomes"})
	var notSet *lambdaidemcdk.EnvironmentNotSetError
	require.True(t, errors.As(err, &notSet))
	assert.False(t, notSet.Granted)
	assert.Nil(t, grant)
	assert.Equal(t, "alias/ledger-outcomes", *notSet.Environment["IDEMPOTENCY_SEAL_KEY"])
	assert.Equal(t, `{"purpose":"lambdaidem-outcome"}`, *notSet.Environment["IDEMPOTENCY_SEAL_CONTEXT"])

	tmpl := cdktest.Synth(t, stack)
	assert.Empty(t, tmpl.Statements())
	assert.Equal(t, map[string]any{"IDEMPOTENCY_SEAL_KEY": "alias/other"}, envOf(t, tmpl, "Fn"))
}

// The environment BindSealing sets is the one the examples' reader parses
// (examples/internal/idemenv reads the same golden file into kmsseal's and
// seal's options).
func TestBindSealingEnvironmentIsTheGoldenOneTheExamplesRead(t *testing.T) {
	stack := newStack(t)
	key := awskms.Key_FromKeyArn(stack, jsii.String("Key"), jsii.String("arn:aws:kms:eu-west-1:111122223333:key/0987dcba-09fe-87dc-65ba-ab0987654321"))
	previous := awskms.Key_FromKeyArn(stack, jsii.String("Previous"), jsii.String(previousKeyArn))
	_, err := lambdaidemcdk.BindSealing(newFunction(t, stack, "Fn", 0), lambdaidemcdk.SealingProps{
		Key: key, Alias: "alias/payments-outcomes", PreviousKeys: []awskms.IKey{previous},
		EncryptionContext: map[string]string{"purpose": "lambdaidem-outcome", "table": "payments-idempotency"},
	})
	require.NoError(t, err)

	b, err := os.ReadFile("testdata/sealing-environment.json")
	require.NoError(t, err)
	var golden map[string]any
	require.NoError(t, json.Unmarshal(b, &golden))
	assert.Equal(t, golden, envOf(t, cdktest.Synth(t, stack), "Fn"))
}
