package lambdaidemcdk_test

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsiam"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambda"
	"github.com/aws/jsii-runtime-go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lambdaidem/lambdaidem/cdk/internal/cdktest"
	"github.com/lambdaidem/lambdaidem/cdk/lambdaidemcdk"
)

const importedFnArn = "arn:aws:lambda:eu-west-1:111122223333:function:ledger"

// Bind takes any awslambda.IFunction. For an alias or a version of a
// function of this app, the grant lands on the role the function runs with
// and the environment on the function itself (Lambda keeps a version's
// environment with the version: CurrentVersion publishes one that holds it).
func TestBindAnAliasOrAVersionSetsTheFunctionsEnvironment(t *testing.T) {
	shapes := map[string]func(stack awscdk.Stack, fn awslambda.Function) awslambda.IFunction{
		"the function":        func(_ awscdk.Stack, fn awslambda.Function) awslambda.IFunction { return fn },
		"its current version": func(_ awscdk.Stack, fn awslambda.Function) awslambda.IFunction { return fn.CurrentVersion() },
		"an alias of its current version": func(stack awscdk.Stack, fn awslambda.Function) awslambda.IFunction {
			return awslambda.NewAlias(stack, jsii.String("Live"), &awslambda.AliasProps{AliasName: jsii.String("live"), Version: fn.CurrentVersion()})
		},
		"a version it publishes": func(stack awscdk.Stack, fn awslambda.Function) awslambda.IFunction {
			return awslambda.NewVersion(stack, jsii.String("V1"), &awslambda.VersionProps{Lambda: fn})
		},
	}
	for name, shape := range shapes {
		t.Run(name, func(t *testing.T) {
			stack := newStack(t)
			table, err := lambdaidemcdk.NewTable(stack, "Idem", nil)
			require.NoError(t, err)
			fn := newFunction(t, stack, "Fn", 0)
			grant, err := table.Bind(shape(stack, fn), 24*time.Hour)
			require.NoError(t, err)
			assert.True(t, *grant.Success())

			tmpl := cdktest.Synth(t, stack)
			tableID := tmpl.One(t, "AWS::DynamoDB::Table", "Idem").LogicalID
			assert.Equal(t, []cdktest.Statement{{Effect: "Allow", Actions: storeActions, Resources: []any{cdktest.GetAtt(tableID, "Arn")}}},
				tmpl.Statements())
			policy := tmpl.OfType("AWS::IAM::Policy")[0]
			assert.Equal(t, []any{cdktest.Ref(tmpl.One(t, "AWS::IAM::Role", "FnServiceRole").LogicalID)}, policy.Properties["Roles"],
				"on the role the function runs with")
			assert.Equal(t, cdktest.Ref(tableID), envOf(t, tmpl, "Fn")["IDEMPOTENCY_TABLE"])
			assert.Equal(t, "24h0m0s", envOf(t, tmpl, "Fn")["IDEMPOTENCY_TTL"])

			_, err = table.Bind(fn, time.Hour)
			assert.ErrorIs(t, err, lambdaidemcdk.ErrAlreadyBound, "the function behind the shape is bound")
		})
	}
}

// An imported function's environment is not this app's: Bind grants (to the
// role, when the import names it) and returns the variables to set where the
// function is defined.
func TestBindAnImportedFunctionGrantsAndReturnsTheEnvironment(t *testing.T) {
	shapes := map[string]struct {
		fn      func(stack awscdk.Stack) awslambda.IFunction
		granted bool
	}{
		"by ARN, role unknown": {fn: func(stack awscdk.Stack) awslambda.IFunction {
			return awslambda.Function_FromFunctionArn(stack, jsii.String("Ledger"), jsii.String(importedFnArn))
		}},
		"with its role": {granted: true, fn: func(stack awscdk.Stack) awslambda.IFunction {
			role := awsiam.Role_FromRoleArn(stack, jsii.String("LedgerRole"), jsii.String("arn:aws:iam::111122223333:role/ledger"), nil)
			return awslambda.Function_FromFunctionAttributes(stack, jsii.String("Ledger"), &awslambda.FunctionAttributes{
				FunctionArn: jsii.String(importedFnArn), Role: role, SameEnvironment: jsii.Bool(true)})
		}},
		"a version of it": {fn: func(stack awscdk.Stack) awslambda.IFunction {
			return awslambda.Version_FromVersionArn(stack, jsii.String("Ledger"), jsii.String(importedFnArn+":7"))
		}},
		"an alias of a version of it": {fn: func(stack awscdk.Stack) awslambda.IFunction {
			v := awslambda.Version_FromVersionArn(stack, jsii.String("LedgerV7"), jsii.String(importedFnArn+":7"))
			return awslambda.NewAlias(stack, jsii.String("Ledger"), &awslambda.AliasProps{AliasName: jsii.String("live"), Version: v})
		}},
	}
	for name, shape := range shapes {
		t.Run(name, func(t *testing.T) {
			stack := awscdk.NewStack(cdktest.NewApp(t, nil), jsii.String("Test"), &awscdk.StackProps{
				Env: &awscdk.Environment{Account: jsii.String("111122223333"), Region: jsii.String("eu-west-1")}})
			table, err := lambdaidemcdk.NewTable(stack, "Idem", nil)
			require.NoError(t, err)
			grant, err := table.Bind(shape.fn(stack), 48*time.Hour)

			require.ErrorIs(t, err, lambdaidemcdk.ErrEnvironmentNotSet)
			var notSet *lambdaidemcdk.EnvironmentNotSetError
			require.True(t, errors.As(err, &notSet))
			want, err2 := table.Environment(48 * time.Hour)
			require.NoError(t, err2)
			assert.Equal(t, want, notSet.Environment)
			assert.Equal(t, "Test/Ledger", notSet.Function)
			assert.Equal(t, shape.granted, notSet.Granted)
			assert.Contains(t, err.Error(), "Test/Ledger is imported")
			assert.Contains(t, err.Error(), "set IDEMPOTENCY_EXPIRATION_ATTR, IDEMPOTENCY_KEY_ATTR, IDEMPOTENCY_TABLE, IDEMPOTENCY_TTL where the function is defined")

			tmpl := cdktest.Synth(t, stack)
			if !shape.granted {
				assert.Nil(t, grant)
				assert.Contains(t, err.Error(), "nor its role, which the import does not name")
				assert.Empty(t, tmpl.Statements(), "no role to put a policy on")
				return
			}
			require.NotNil(t, grant)
			assert.True(t, *grant.Success())
			assert.Contains(t, err.Error(), "the grant was made; set")
			tableID := tmpl.One(t, "AWS::DynamoDB::Table", "Idem").LogicalID
			assert.Equal(t, []cdktest.Statement{{Effect: "Allow", Actions: storeActions, Resources: []any{cdktest.GetAtt(tableID, "Arn")}}},
				tmpl.Statements())
			assert.Equal(t, []any{"ledger"}, tmpl.OfType("AWS::IAM::Policy")[0].Properties["Roles"])
		})
	}
}

// A variable the function already sets to another value is an error naming
// it, and nothing changes; the same value is accepted.
func TestBindRefusesToOverwriteAVariable(t *testing.T) {
	tests := []struct {
		name    string
		env     map[string]*string
		wantErr string
	}{
		{name: "another TTL", env: map[string]*string{"IDEMPOTENCY_TTL": jsii.String("1h0m0s"), "OTHER": jsii.String("x")},
			wantErr: `Test/Fn already sets IDEMPOTENCY_TTL to "1h0m0s", and binding would set "24h0m0s"`},
		{name: "another table", env: map[string]*string{"IDEMPOTENCY_TABLE": jsii.String("payments-idempotency")},
			wantErr: `Test/Fn already sets IDEMPOTENCY_TABLE to "payments-idempotency", and binding would set {"Ref":"Idem`},
		{name: "the same key attribute", env: map[string]*string{"IDEMPOTENCY_KEY_ATTR": jsii.String("id")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			stack := newStack(t)
			table, err := lambdaidemcdk.NewTable(stack, "Idem", nil)
			require.NoError(t, err)
			fn := awslambda.NewFunction(stack, jsii.String("Fn"), &awslambda.FunctionProps{
				Runtime: awslambda.Runtime_PROVIDED_AL2023(), Handler: jsii.String("bootstrap"),
				Code: awslambda.Code_FromAsset(jsii.String(cdktest.DummyZip(t)), nil), Environment: &tt.env,
			})
			grant, err := table.Bind(fn.CurrentVersion(), 24*time.Hour)
			if tt.wantErr == "" {
				require.NoError(t, err)
				assert.Equal(t, "id", envOf(t, cdktest.Synth(t, stack), "Fn")["IDEMPOTENCY_KEY_ATTR"])
				return
			}
			require.ErrorIs(t, err, lambdaidemcdk.ErrEnvironmentConflict)
			assert.Nil(t, grant)
			assert.Contains(t, err.Error(), tt.wantErr)
			tmpl := cdktest.Synth(t, stack)
			assert.Empty(t, tmpl.Statements(), "no grant")
			env := envOf(t, tmpl, "Fn")
			assert.NotContains(t, env, "IDEMPOTENCY_KEY_ATTR", "no variable set")
			for k, v := range tt.env {
				assert.Equal(t, *v, env[k], "%s kept", k)
			}
			_, err = table.Bind(fn, 24*time.Hour)
			assert.NotErrorIs(t, err, lambdaidemcdk.ErrAlreadyBound, "the refused Bind left no binding")
		})
	}
}

// A bound variable changed after Bind fails synthesis, naming it, instead of
// silently rebinding the function.
func TestABoundVariableChangedLaterFailsSynthesis(t *testing.T) {
	stack := newStack(t)
	table, err := lambdaidemcdk.NewTable(stack, "Idem", nil)
	require.NoError(t, err)
	fn := newFunction(t, stack, "Fn", 0)
	_, err = table.Bind(fn, 24*time.Hour)
	require.NoError(t, err)
	fn.AddEnvironment(jsii.String("IDEMPOTENCY_TTL"), jsii.String("1h"), nil)

	msg := synthPanic(t, stack)
	assert.Contains(t, msg, `Bind of table Test/Idem set IDEMPOTENCY_TTL to "24h0m0s", and it was changed afterwards to "1h"`)
}

// synthPanic synthesizes stack, which must fail (the jsii runtime panics with
// CDK's validation error), and returns the failure's message.
func synthPanic(t *testing.T, stack awscdk.Stack) (msg string) {
	t.Helper()
	defer func() {
		r := recover()
		require.NotNil(t, r, "synthesis succeeded")
		msg = fmt.Sprint(r)
	}()
	cdktest.Synth(t, stack)
	return ""
}
