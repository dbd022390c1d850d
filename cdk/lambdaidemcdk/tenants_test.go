package lambdaidemcdk_test

import (
	"testing"
	"time"

	"github.com/aws/aws-cdk-go/awscdk/v2/awsiam"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambda"
	"github.com/aws/jsii-runtime-go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lambdaidem/lambdaidem/cdk/internal/cdktest"
	"github.com/lambdaidem/lambdaidem/cdk/lambdaidemcdk"
)

// Bind declares tenants on a function in Lambda's tenant isolation mode,
// and only there; queue and stream sources, whose mappings invoke without
// a tenant, refuse such a function.
func TestBindDeclaresTenantsOfATenantIsolatedFunction(t *testing.T) {
	stack := newStack(t)
	table, err := lambdaidemcdk.NewTable(stack, "Idem", nil)
	require.NoError(t, err)
	tenanted := awslambda.NewFunction(stack, jsii.String("Tenanted"), &awslambda.FunctionProps{
		Runtime:       awslambda.Runtime_PROVIDED_AL2023(),
		Handler:       jsii.String("bootstrap"),
		Code:          awslambda.Code_FromAsset(jsii.String(cdktest.DummyZip(t)), nil),
		TenancyConfig: awslambda.TenancyConfig_PER_TENANT(),
	})
	_, err = lambdaidemcdk.NewQueueSource(stack, "Orders", lambdaidemcdk.QueueSourceProps{Function: tenanted, Table: table})
	assert.ErrorIs(t, err, lambdaidemcdk.ErrInvalidProps, "an SQS mapping invokes without a tenant")
	_, err = lambdaidemcdk.NewStreamSource(stack, "Feed", lambdaidemcdk.StreamSourceProps{
		Function: tenanted, Table: table, Stream: newKinesisStream(stack), StreamRetention: 24 * time.Hour})
	assert.ErrorIs(t, err, lambdaidemcdk.ErrInvalidProps, "a stream mapping invokes without a tenant")
	_, err = table.Bind(tenanted.CurrentVersion(), 24*time.Hour)
	require.NoError(t, err)
	other, err := lambdaidemcdk.NewTable(stack, "Other", nil)
	require.NoError(t, err)
	_, err = other.Bind(newFunction(t, stack, "Plain", 0), 24*time.Hour)
	require.NoError(t, err)

	tmpl := cdktest.Synth(t, stack)
	fn := tmpl.One(t, "AWS::Lambda::Function", "Tenanted")
	assert.Equal(t, map[string]any{"TenantIsolationMode": "PER_TENANT"}, fn.Properties["TenancyConfig"])
	assert.Equal(t, lambdaidemcdk.TenantsRequired, envOf(t, tmpl, "Tenanted")[lambdaidemcdk.EnvTenants])
	assert.NotContains(t, envOf(t, tmpl, "Plain"), lambdaidemcdk.EnvTenants, "a function without tenants declares none")
}

// GrantStage takes any awslambda.IFunction, as Bind does.
func TestGrantStageTakesAnyFunction(t *testing.T) {
	stack := newStack(t)
	ob, err := lambdaidemcdk.NewOutbox(stack, "Outbox", lambdaidemcdk.OutboxProps{Relay: standIn(t, stack, "Relay")})
	require.NoError(t, err)
	fn := newFunction(t, stack, "Producer", 0)
	alias := awslambda.NewAlias(stack, jsii.String("Live"), &awslambda.AliasProps{AliasName: jsii.String("live"), Version: fn.CurrentVersion()})
	grant, err := ob.GrantStage(alias)
	require.NoError(t, err)
	assert.True(t, *grant.Success())

	role := awsiam.Role_FromRoleArn(stack, jsii.String("LedgerRole"), jsii.String("arn:aws:iam::111122223333:role/ledger"), nil)
	imported := awslambda.Function_FromFunctionAttributes(stack, jsii.String("Ledger"), &awslambda.FunctionAttributes{
		FunctionArn: jsii.String(importedFnArn), Role: role, SameEnvironment: jsii.Bool(true)})
	_, err = ob.GrantStage(imported)
	var notSet *lambdaidemcdk.EnvironmentNotSetError
	require.ErrorAs(t, err, &notSet)
	assert.True(t, notSet.Granted)
	assert.Contains(t, notSet.Environment, lambdaidemcdk.OutboxTableEnv)

	tmpl := cdktest.Synth(t, stack)
	tableID := tmpl.One(t, "AWS::DynamoDB::Table", "OutboxTable").LogicalID
	assert.Equal(t, cdktest.Ref(tableID), envOf(t, tmpl, "Producer")[lambdaidemcdk.OutboxTableEnv], "set on the function the alias runs")
}

// A function that already names another outbox table is refused.
func TestGrantStageRefusesToOverwriteTheOutboxTable(t *testing.T) {
	stack := newStack(t)
	ob, err := lambdaidemcdk.NewOutbox(stack, "Outbox", lambdaidemcdk.OutboxProps{Relay: standIn(t, stack, "Relay")})
	require.NoError(t, err)
	fn := newFunction(t, stack, "Producer", 0)
	fn.AddEnvironment(jsii.String(lambdaidemcdk.OutboxTableEnv), jsii.String("another"), nil)
	_, err = ob.GrantStage(fn)
	assert.ErrorIs(t, err, lambdaidemcdk.ErrEnvironmentConflict)
}
