package lambdaidemcdk

import (
	"fmt"
	"strings"
	"time"

	"github.com/aws/aws-cdk-go/awscdk/v2/awsiam"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambda"
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"
)

// Environment variables that [Table.Bind] sets on a function, and
// [Table.Environment] returns for other compute (a container, a task): every
// setting the DynamoDB store and the wrapper need to match the table. The
// examples read them (see examples/internal/idemenv).
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
// ([Table.GrantStore], whose grant it returns) and sets fn's environment to
// [Table.Environment] of horizon, every setting the store needs to match the
// table.
//
// horizon is the retry horizon: how long a completed operation is remembered,
// which must be at least as long as any caller may retry (for an SQS source see
// [NewQueueSource], which derives it and binds the table itself).
//
// A function reads one idempotency table, so binding a function a second time
// (to this table or another) returns an error wrapping [ErrAlreadyBound]; bad
// arguments return [ErrInvalidProps]. On an error fn is unchanged. To let a
// function (or an alias, a role) use a table without binding it, use
// [Table.GrantStore].
func (t *Table) Bind(fn awslambda.Function, horizon time.Duration) (awsiam.Grant, error) {
	env, err := t.checkBind(fn, horizon)
	if err != nil {
		return nil, err
	}
	marker := constructs.NewConstruct(fn, jsii.String(bindingID))
	constructs.NewConstruct(marker, jsii.String(strings.ReplaceAll(*t.Table.Node().Path(), "/", ".")))

	grant := t.GrantStore(fn)
	for _, name := range [...]string{EnvTable, EnvTTL, EnvKeyAttr, EnvSortKeyAttr, EnvSortKeyValue, EnvExpirationAttr} {
		if v, ok := env[name]; ok {
			fn.AddEnvironment(jsii.String(name), v, nil)
		}
	}
	return grant, nil
}

// checkBind returns the environment [Table.Bind] would set on fn, or the error
// it would return, changing nothing.
func (t *Table) checkBind(fn awslambda.Function, horizon time.Duration) (map[string]*string, error) {
	if fn == nil {
		return nil, fmt.Errorf("%w: Bind needs a function", ErrInvalidProps)
	}
	env, err := t.Environment(horizon)
	if err != nil {
		return nil, err
	}
	if marker := fn.Node().TryFindChild(jsii.String(bindingID)); marker != nil {
		bound := "another table"
		for _, c := range *marker.Node().Children() {
			bound = "table " + *c.Node().Id()
		}
		return nil, fmt.Errorf("%w: %s is already bound to %s; a function reads one idempotency table "+
			"(use GrantStore to let it use another without binding)", ErrAlreadyBound, *fn.Node().Path(), bound)
	}
	return env, nil
}
