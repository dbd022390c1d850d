package lambdaidemcdk

import (
	"fmt"
	"strings"
	"time"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsiam"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambda"
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"
)

// Environment variables that [Table.Bind] sets on a function, and
// [Table.Environment] returns for other compute (a container, a task): every
// setting the DynamoDB store and the wrapper need to match the table. The
// library reads them with dynamostore.ReadEnv.
const (
	// EnvTable names the variable holding the idempotency table's name.
	EnvTable = "IDEMPOTENCY_TABLE"
	// EnvTTL names the variable holding the retry horizon as a Go duration
	// string (time.Duration.String, such as "24h0m0s"), which the function
	// parses with time.ParseDuration and uses as the record TTL.
	EnvTTL = "IDEMPOTENCY_TTL"
	// EnvKeyAttr names the variable holding the partition key attribute (the
	// store's KeyAttr).
	EnvKeyAttr = "IDEMPOTENCY_KEY_ATTR"
	// EnvSortKeyAttr names the variable holding the sort key attribute (the
	// store's SortKeyAttr); set only for a table with a sort key.
	EnvSortKeyAttr = "IDEMPOTENCY_SORT_KEY_ATTR"
	// EnvSortKeyValue names the variable holding the static sort key value
	// (the store's SortKeyValue); set only with [EnvSortKeyAttr].
	EnvSortKeyValue = "IDEMPOTENCY_SORT_KEY_VALUE"
	// EnvExpirationAttr names the variable holding the TTL attribute (the
	// store's ExpirationAttr).
	EnvExpirationAttr = "IDEMPOTENCY_EXPIRATION_ATTR"
	// EnvTenants names the variable by which a function declares that it
	// runs in Lambda's tenant isolation mode (lambdaidem.TenantsEnv):
	// [Table.Bind] sets it to [TenantsRequired] on a function whose
	// TenancyConfig is PER_TENANT, and the library then refuses an
	// invocation that names no tenant instead of running it under a record
	// every tenant-less invocation shares.
	EnvTenants = "IDEMPOTENCY_TENANTS"
	// TenantsRequired is [EnvTenants]'s value.
	TenantsRequired = "required"
)

// bindingID is the id of the marker construct [Table.Bind] adds under a
// function: the construct tree remembers the binding, so a second one is
// refused.
const bindingID = "LambdaidemIdempotencyTable"

// StoreActions returns the DynamoDB actions the lambdaidem DynamoDB store calls on
// the idempotency table, and so the only ones [Table.GrantStore] grants: GetItem
// (strongly consistent reads of a record), PutItem (the conditional claim),
// UpdateItem (fenced commit and mark-unknown) and DeleteItem (fenced release).
// Inside TransactWriteItems the same per-item actions authorize the record
// write. Each call returns a new slice.
func StoreActions() []string {
	return []string{
		"dynamodb:GetItem",
		"dynamodb:PutItem",
		"dynamodb:UpdateItem",
		"dynamodb:DeleteItem",
	}
}

// keyActions are granted on a customer-managed table key: what a DynamoDB reader
// and writer needs of the key. It is the set CDK grants for read-write data
// with its two wildcards spelled out (kms:ReEncrypt* as ReEncryptFrom and
// ReEncryptTo, kms:GenerateDataKey* as GenerateDataKey and
// GenerateDataKeyWithoutPlaintext; the data key pair actions, which a
// symmetric table key never serves, left out): a wildcard action fails cdk-nag's
// AwsSolutions-IAM5 and would silently grant actions KMS adds later.
func keyActions() []string {
	return []string{
		"kms:Decrypt",
		"kms:DescribeKey",
		"kms:Encrypt",
		"kms:ReEncryptFrom",
		"kms:ReEncryptTo",
		"kms:GenerateDataKey",
		"kms:GenerateDataKeyWithoutPlaintext",
	}
}

// GrantStore lets grantee (a function, an alias, a role, an ECS task role, a
// Step Functions state machine: any IGrantable) use the table as the lambdaidem
// DynamoDB store does, and nothing more: one statement allowing [StoreActions]
// on exactly this table's ARN (no index ARNs, no wildcards), plus, for a table
// with a customer-managed key, one allowing the key's use on exactly that key's
// ARN. It changes no environment (see [Table.Bind] and [Table.Environment]).
//
// As with CDK's own grants, the statements go to the grantee's identity policy
// when CDK manages it; check the returned grant (Success, AssertSuccess) for a
// grantee whose policy CDK cannot change, such as an imported role.
func (t *Table) GrantStore(grantee awsiam.IGrantable) awsiam.Grant {
	g := awsiam.Grant_AddToPrincipal(&awsiam.GrantOnPrincipalOptions{
		Grantee:      grantee,
		Actions:      jsii.Strings(StoreActions()...),
		ResourceArns: jsii.Strings(*t.TableArn()),
	})
	if t.encryptionKey != nil {
		g = g.Combine(awsiam.Grant_AddToPrincipal(&awsiam.GrantOnPrincipalOptions{
			Grantee:      grantee,
			Actions:      jsii.Strings(keyActions()...),
			ResourceArns: jsii.Strings(*t.encryptionKey.KeyArn()),
		}))
	}
	return g
}

// Environment returns the variables a process needs to use the table with the
// given retry horizon: [EnvTable] (the table name, a token until deployment),
// [EnvTTL] (horizon as time.Duration.String, "24h0m0s"), [EnvKeyAttr],
// [EnvExpirationAttr], and for a table with a sort key [EnvSortKeyAttr] and
// [EnvSortKeyValue]. Use it for compute that [Table.Bind] cannot set, such as
// an ECS container's environment. horizon must be whole seconds, at least one
// (the TTL is kept in Unix seconds); otherwise the error wraps
// [ErrInvalidProps].
func (t *Table) Environment(horizon time.Duration) (map[string]*string, error) {
	if horizon < time.Second || horizon%time.Second != 0 {
		return nil, fmt.Errorf("%w: retry horizon %v must be whole seconds, at least one (the TTL is kept in Unix seconds)",
			ErrInvalidProps, horizon)
	}
	env := map[string]*string{
		EnvTable:          t.TableName(),
		EnvTTL:            jsii.String(horizon.String()),
		EnvKeyAttr:        jsii.String(t.attrs.PartitionKey),
		EnvExpirationAttr: jsii.String(t.attrs.TimeToLiveAttribute),
	}
	if t.attrs.SortKey != "" {
		env[EnvSortKeyAttr] = jsii.String(t.attrs.SortKey)
		env[EnvSortKeyValue] = jsii.String(t.attrs.SortKeyValue)
	}
	return env, nil
}

// Bind makes the table fn's idempotency table: it grants fn the store's actions
// ([Table.GrantStore], whose grant it returns) and sets the environment to
// [Table.Environment] of horizon, every setting the store needs to match the
// table.
//
// horizon is the retry horizon: how long a completed operation is remembered,
// which must be at least as long as any caller may retry (for an SQS source see
// [NewQueueSource], which derives it and binds the table itself).
//
// fn may be any awslambda.IFunction:
//
//   - a function defined in this app (awslambda.NewFunction and the
//     constructs built on it): the grant goes to its role, the environment
//     is set on it;
//   - an alias or a version (fn.CurrentVersion(), awslambda.NewVersion,
//     awslambda.NewAlias) of such a function: the grant goes to the role it
//     runs with, and the environment is set on the function it runs, since
//     Lambda keeps a version's environment with the version: with
//     fn.CurrentVersion() CDK publishes a new version that holds it; a
//     version published outside this app (Version_FromVersionArn) keeps
//     the environment it was published with;
//   - an imported function (awslambda.Function_FromFunctionArn, and the like),
//     or an alias or version of one: its environment is not this app's to
//     set. Bind makes the grant if the import names the function's role
//     (FromFunctionAttributes with Role; otherwise there is no role to
//     attach a policy to, and the grant is nil) and returns an
//     [*EnvironmentNotSetError] (errors.Is [ErrEnvironmentNotSet]) holding the
//     variables to set where the function is defined and whether it granted.
//
// A function in Lambda's tenant isolation mode (awslambda.FunctionProps
// TenancyConfig: awslambda.TenancyConfig_PER_TENANT()) is bound with
// [EnvTenants] too: every record is then scoped by the invocation's tenant
// and an invocation without one is refused. (An imported function's mode is
// not known here: set [EnvTenants] where it is defined.)
//
// A variable the function already sets to another value is never overwritten:
// Bind returns an error wrapping [ErrEnvironmentConflict] naming it, and a
// later AddEnvironment that changes a bound variable fails synthesis, naming
// it.
//
// A function reads one idempotency table, so binding a function a second time
// (to this table or another, directly or through an alias or version) returns
// an error wrapping [ErrAlreadyBound]; bad arguments return
// [ErrInvalidProps]. On those errors nothing is changed. To let a function (or
// a role) use a table without binding it, use [Table.GrantStore].
func (t *Table) Bind(fn awslambda.IFunction, horizon time.Duration) (awsiam.Grant, error) {
	b, env, err := t.checkBind(fn, horizon)
	if err != nil {
		return nil, err
	}
	if b.local == nil {
		if fn.Role() == nil {
			return nil, &EnvironmentNotSetError{Function: b.path, Environment: env}
		}
		return t.GrantStore(fn), &EnvironmentNotSetError{Function: b.path, Environment: env, Granted: true}
	}
	grant := t.GrantStore(fn)
	marker := constructs.NewConstruct(b.local, jsii.String(bindingID))
	constructs.NewConstruct(marker, jsii.String(strings.ReplaceAll(*t.Table.Node().Path(), "/", ".")))
	setEnvironment(b.local, env, "Bind of table "+*t.Table.Node().Path())
	return grant, nil
}

// checkBind returns the function [Table.Bind] would set the environment of,
// and that environment, or the error it would return, changing nothing.
func (t *Table) checkBind(fn awslambda.IFunction, horizon time.Duration) (boundFunction, map[string]*string, error) {
	b, err := resolveFunction(fn)
	if err != nil {
		return b, nil, fmt.Errorf("%w: Bind needs a function", err)
	}
	env, err := t.Environment(horizon)
	if err != nil {
		return b, nil, err
	}
	if b.local == nil {
		return b, env, nil
	}
	if perTenant(b.local) {
		env[EnvTenants] = jsii.String(TenantsRequired)
	}
	if marker := b.local.Node().TryFindChild(jsii.String(bindingID)); marker != nil {
		bound := "another table"
		for _, c := range *marker.Node().Children() {
			bound = "table " + *c.Node().Id()
		}
		return b, nil, fmt.Errorf("%w: %s is already bound to %s; a function reads one idempotency table "+
			"(use GrantStore to let it use another without binding)", ErrAlreadyBound, *b.local.Node().Path(), bound)
	}
	if err := checkEnvironment(b.local, env); err != nil {
		return b, nil, err
	}
	return b, env, nil
}

// perTenant reports whether fn runs in Lambda's tenant isolation mode: its
// CloudFormation TenancyConfig is PER_TENANT.
func perTenant(fn awslambda.Function) bool {
	cfn, ok := fn.Node().DefaultChild().(awslambda.CfnFunction)
	if !ok || cfn.TenancyConfig() == nil {
		return false
	}
	tc, _ := plain(awscdk.Stack_Of(fn).Resolve(cfn.TenancyConfig())).(map[string]any)
	return tc["tenantIsolationMode"] == "PER_TENANT"
}

// refuseTenantMapping refuses an event source mapping from source to fn in
// Lambda's tenant isolation mode, which Lambda invokes through its Invoke
// API and API Gateway only: a mapping's invocations name no tenant, and
// the bound function would refuse every one of them.
func refuseTenantMapping(fn awslambda.Function, source string) error {
	if perTenant(fn) {
		return fmt.Errorf("%w: %s runs in Lambda's tenant isolation mode (TenancyConfig PER_TENANT), which event source mappings "+
			"do not invoke with a tenant: %s cannot feed it", ErrInvalidProps, *fn.Node().Path(), source)
	}
	return nil
}
