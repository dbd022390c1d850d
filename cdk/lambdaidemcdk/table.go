package lambdaidemcdk

import (
	"errors"
	"fmt"
	"time"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsdynamodb"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsiam"
	"github.com/aws/aws-cdk-go/awscdk/v2/awskms"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambda"
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"
)

// Environment variables that [Table.GrantTo] sets on a function.
const (
	// EnvTable names the variable holding the idempotency table's name.
	EnvTable = "IDEMPOTENCY_TABLE"
	// EnvTTL names the variable holding the retry horizon as a Go duration
	// string (time.Duration.String, such as "24h0m0s"), which the function
	// parses with time.ParseDuration and uses as the record TTL.
	EnvTTL = "IDEMPOTENCY_TTL"
)

// Default attribute names, matching the DynamoDB store and the table schema of
// Powertools for AWS Lambda.
const (
	// DefaultPartitionKey is the partition key attribute (type String).
	DefaultPartitionKey = "id"
	// DefaultTimeToLiveAttribute is the TTL attribute (type Number, Unix seconds).
	DefaultTimeToLiveAttribute = "expiration"
)

// Errors returned by the constructors and [Table.GrantTo]. Each is wrapped with
// the offending values; test for them with errors.Is.
var (
	// ErrInvalidProps reports props that cannot describe a working setup, such as
	// a missing function or two attributes with the same name.
	ErrInvalidProps = errors.New("lambdaidemcdk: invalid props")
	// ErrVisibilityTimeoutTooShort reports a queue visibility timeout below six
	// times the function timeout plus the maximum batching window.
	ErrVisibilityTimeoutTooShort = errors.New("lambdaidemcdk: queue visibility timeout too short")
	// ErrTTLShorterThanHorizon reports an idempotency TTL shorter than the retry
	// horizon of the queue that feeds the function.
	ErrTTLShorterThanHorizon = errors.New("lambdaidemcdk: idempotency TTL shorter than the retry horizon")
)

// StoreActions returns the DynamoDB actions the lambdaidem DynamoDB store calls on
// the idempotency table, and so the only ones [Table.GrantTo] grants: GetItem
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
// and writer needs of the key (the same set CDK grants for read-write data).
var keyActions = []string{
	"kms:Decrypt",
	"kms:DescribeKey",
	"kms:Encrypt",
	"kms:ReEncrypt*",
	"kms:GenerateDataKey*",
}

// TableProps configures [NewTable]. The zero value (or a nil *TableProps) gives
// the default table.
type TableProps struct {
	// TableName is the physical table name. Default: a name CloudFormation
	// generates, which lets the stack be deployed more than once per account.
	TableName string
	// PartitionKey is the name of the String partition key. Default "id".
	PartitionKey string
	// SortKey is the name of an optional String sort key, for a table shared
	// with other records (Powertools' sort_key_attr). Default: no sort key.
	SortKey string
	// TimeToLiveAttribute is the Number attribute DynamoDB's TTL reads.
	// Default "expiration".
	TimeToLiveAttribute string
	// EncryptionKey, when set, encrypts the table with this customer-managed KMS
	// key, and [Table.GrantTo] then also lets the function use the key.
	// Default: the AWS-owned key (DynamoDB's default encryption, no KMS cost).
	EncryptionKey awskms.IKey
	// RemovalPolicy says what happens to the table when it leaves the stack.
	// Default RETAIN: deleting the stack must not forget which operations ran.
	RemovalPolicy awscdk.RemovalPolicy
}

// Table is the idempotency record table created by [NewTable].
type Table struct {
	// Table is the underlying DynamoDB table, for settings this package does not
	// wrap (alarms, extra grants, tags).
	Table awsdynamodb.Table

	encryptionKey awskms.IKey
}

// NewTable creates the idempotency table in scope under id: a String partition
// key (default "id"), an optional String sort key, TTL on the Number attribute
// "expiration", PAY_PER_REQUEST billing, point-in-time recovery, AWS-owned
// encryption unless props.EncryptionKey is set, and RemovalPolicy RETAIN unless
// props says otherwise. It returns an error wrapping [ErrInvalidProps] when two of
// the attribute names coincide.
func NewTable(scope constructs.Construct, id string, props *TableProps) (*Table, error) {
	var p TableProps
	if props != nil {
		p = *props
	}
	if p.PartitionKey == "" {
		p.PartitionKey = DefaultPartitionKey
	}
	if p.TimeToLiveAttribute == "" {
		p.TimeToLiveAttribute = DefaultTimeToLiveAttribute
	}
	if p.RemovalPolicy == "" {
		p.RemovalPolicy = awscdk.RemovalPolicy_RETAIN
	}
	if p.SortKey == p.PartitionKey {
		return nil, fmt.Errorf("%w: sort key %q is also the partition key", ErrInvalidProps, p.SortKey)
	}
	if p.TimeToLiveAttribute == p.PartitionKey || p.TimeToLiveAttribute == p.SortKey {
		return nil, fmt.Errorf("%w: TTL attribute %q is also a key attribute (keys are Strings, the TTL a Number)",
			ErrInvalidProps, p.TimeToLiveAttribute)
	}

	tp := &awsdynamodb.TableProps{
		PartitionKey: &awsdynamodb.Attribute{
			Name: jsii.String(p.PartitionKey),
			Type: awsdynamodb.AttributeType_STRING,
		},
		TimeToLiveAttribute: jsii.String(p.TimeToLiveAttribute),
		BillingMode:         awsdynamodb.BillingMode_PAY_PER_REQUEST,
		PointInTimeRecoverySpecification: &awsdynamodb.PointInTimeRecoverySpecification{
			PointInTimeRecoveryEnabled: jsii.Bool(true),
		},
		Encryption:    awsdynamodb.TableEncryption_DEFAULT,
		RemovalPolicy: p.RemovalPolicy,
	}
	if p.TableName != "" {
		tp.TableName = jsii.String(p.TableName)
	}
	if p.SortKey != "" {
		tp.SortKey = &awsdynamodb.Attribute{
			Name: jsii.String(p.SortKey),
			Type: awsdynamodb.AttributeType_STRING,
		}
	}
	if p.EncryptionKey != nil {
		tp.Encryption = awsdynamodb.TableEncryption_CUSTOMER_MANAGED
		tp.EncryptionKey = p.EncryptionKey
	}
	return &Table{
		Table:         awsdynamodb.NewTable(scope, jsii.String(id), tp),
		encryptionKey: p.EncryptionKey,
	}, nil
}

// TableName returns the table's name (a token until deployment).
func (t *Table) TableName() *string { return t.Table.TableName() }

// TableArn returns the table's ARN (a token until deployment).
func (t *Table) TableArn() *string { return t.Table.TableArn() }

// GrantTo lets fn use the table as the lambdaidem DynamoDB store does, and
// nothing more: it adds one statement to fn's role allowing [StoreActions] on
// exactly this table's ARN (no index ARNs, no wildcards), plus, for a table with
// a customer-managed key, one statement allowing the key's use on exactly that
// key's ARN. It sets fn's environment: [EnvTable] to the table name and [EnvTTL]
// to horizon formatted by time.Duration.String ("24h0m0s").
//
// horizon is the retry horizon: how long a completed operation is remembered,
// which must be at least as long as any caller may retry (for an SQS source see
// [NewQueueSource], which derives it). It must be at least one second. Granting
// the same function twice sets the horizon of the last call.
//
// GrantTo changes fn's role policy only when CDK manages that role (a function
// created with an imported role must be given the statement by its owner).
func (t *Table) GrantTo(fn awslambda.Function, horizon time.Duration) error {
	if fn == nil {
		return fmt.Errorf("%w: GrantTo needs a function", ErrInvalidProps)
	}
	if horizon < time.Second {
		return fmt.Errorf("%w: retry horizon %v is shorter than one second (the TTL is kept in whole seconds)",
			ErrInvalidProps, horizon)
	}
	fn.AddToRolePolicy(awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
		Effect:    awsiam.Effect_ALLOW,
		Actions:   jsii.Strings(StoreActions()...),
		Resources: jsii.Strings(*t.TableArn()),
	}))
	if t.encryptionKey != nil {
		fn.AddToRolePolicy(awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
			Effect:    awsiam.Effect_ALLOW,
			Actions:   jsii.Strings(keyActions...),
			Resources: jsii.Strings(*t.encryptionKey.KeyArn()),
		}))
	}
	fn.AddEnvironment(jsii.String(EnvTable), t.TableName(), nil)
	fn.AddEnvironment(jsii.String(EnvTTL), jsii.String(horizon.String()), nil)
	return nil
}
