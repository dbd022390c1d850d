package lambdaidemcdk

import (
	"errors"
	"fmt"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsdynamodb"
	"github.com/aws/aws-cdk-go/awscdk/v2/awskms"
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"
)

// Default attribute names, matching the DynamoDB store and the table schema of
// Powertools for AWS Lambda.
const (
	// DefaultPartitionKey is the partition key attribute (type String).
	DefaultPartitionKey = "id"
	// DefaultTimeToLiveAttribute is the TTL attribute (type Number, Unix seconds).
	DefaultTimeToLiveAttribute = "expiration"
	// DefaultSortKeyValue is the static value every record carries in the sort
	// key, for a table that has one (the store's SortKeyValue).
	DefaultSortKeyValue = "lambdaidem"
)

// Errors returned by the constructors, [Table.Bind] and the grant helpers.
// Each is wrapped with the offending values; test for them with errors.Is.
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
	// ErrAlreadyBound reports a second [Table.Bind] of one function: a function
	// reads one idempotency table from its environment.
	ErrAlreadyBound = errors.New("lambdaidemcdk: function already bound to an idempotency table")
	// ErrUnsafeGlobalTable reports a global-table setup under which the store
	// cannot keep its guarantees (see [GlobalTableProps]).
	ErrUnsafeGlobalTable = errors.New("lambdaidemcdk: global table setup breaks the idempotency guarantees")
)

// Attributes names the attributes of an idempotency table that the table
// definition and the store must agree on. Zero fields take the defaults.
type Attributes struct {
	// PartitionKey is the name of the String partition key. Default "id".
	PartitionKey string
	// SortKey is the name of an optional String sort key, for a table shared
	// with other records (Powertools' sort_key_attr). Default: no sort key.
	SortKey string
	// SortKeyValue is the static value the store writes in SortKey. Default
	// [DefaultSortKeyValue] when SortKey is set; ignored otherwise.
	SortKeyValue string
	// TimeToLiveAttribute is the Number attribute DynamoDB's TTL reads (the
	// store's ExpirationAttr). Default "expiration".
	TimeToLiveAttribute string
}

// withDefaults fills the zero fields and refuses names that collide.
func (a Attributes) withDefaults() (Attributes, error) {
	if a.PartitionKey == "" {
		a.PartitionKey = DefaultPartitionKey
	}
	if a.TimeToLiveAttribute == "" {
		a.TimeToLiveAttribute = DefaultTimeToLiveAttribute
	}
	if a.SortKey == "" {
		a.SortKeyValue = ""
	} else if a.SortKeyValue == "" {
		a.SortKeyValue = DefaultSortKeyValue
	}
	if a.SortKey == a.PartitionKey {
		return a, fmt.Errorf("%w: sort key %q is also the partition key", ErrInvalidProps, a.SortKey)
	}
	if a.TimeToLiveAttribute == a.PartitionKey || a.TimeToLiveAttribute == a.SortKey {
		return a, fmt.Errorf("%w: TTL attribute %q is also a key attribute (keys are Strings, the TTL a Number)",
			ErrInvalidProps, a.TimeToLiveAttribute)
	}
	return a, nil
}

// TableProps configures [NewTable]. The zero value (or a nil *TableProps) gives
// the default table.
type TableProps struct {
	// TableName is the physical table name. Default: a name CloudFormation
	// generates, which lets the stack be deployed more than once per account.
	TableName string
	// Attributes names the key and TTL attributes. Default: "id" and
	// "expiration", no sort key (Powertools' schema).
	Attributes Attributes
	// EncryptionKey, when set, encrypts the table with this customer-managed KMS
	// key, and the grants then also let the grantee use the key.
	// Default: the AWS-owned key (DynamoDB's default encryption, no KMS cost).
	EncryptionKey awskms.IKey
	// RemovalPolicy says what happens to the table when it leaves the stack.
	// Default RETAIN: deleting the stack must not forget which operations ran.
	RemovalPolicy awscdk.RemovalPolicy
	// NoDeletionProtection turns DynamoDB's deletion protection off. Default:
	// on, so that neither a stack operation nor a console click deletes the
	// record of which operations ran. RemovalPolicy DESTROY needs it off (a
	// protected table cannot be deleted), and is refused otherwise.
	NoDeletionProtection bool
	// V2 creates the table as an awsdynamodb.TableV2 (CloudFormation
	// AWS::DynamoDB::GlobalTable), a single-Region table to which Regions can
	// be added later without replacing it. Default false: an
	// awsdynamodb.Table (AWS::DynamoDB::Table); moving such a table to
	// TableV2 later is a migration (retain, remove, import).
	V2 bool
	// Global adds replicas in other Regions (it needs V2). Default: none. See
	// [GlobalTableProps] for the one mode the store supports and the routing
	// rule it needs.
	Global *GlobalTableProps
}

// Table is an idempotency record table: one created by [NewTable], or an
// existing one adopted with [FromTableName], [FromTableArn] or [FromTable].
type Table struct {
	// Table is the underlying DynamoDB table (an awsdynamodb.Table, a
	// TableV2, or an imported table), for what this package does not wrap:
	// metrics and alarms, extra grants, tags. Treat it as read-only.
	Table awsdynamodb.ITable

	attrs         Attributes
	encryptionKey awskms.IKey
}

// NewTable creates the idempotency table in scope under id: a String partition
// key (default "id"), an optional String sort key, TTL on the Number attribute
// "expiration", PAY_PER_REQUEST billing, point-in-time recovery, AWS-owned
// encryption unless props.EncryptionKey is set, deletion protection, and
// RemovalPolicy RETAIN unless props says otherwise. With props.V2 the table is
// an awsdynamodb.TableV2, with props.Global a global table.
//
// Every check happens before anything is created: it returns an error wrapping
// [ErrInvalidProps] (colliding attribute names, DESTROY with deletion
// protection, replicas without V2, an id already used in scope) or
// [ErrUnsafeGlobalTable] (a global-table setup under which the store cannot
// keep its guarantees), and then scope is unchanged.
func NewTable(scope constructs.Construct, id string, props *TableProps) (*Table, error) {
	if err := checkID(scope, id); err != nil {
		return nil, err
	}
	var p TableProps
	if props != nil {
		p = *props
	}
	attrs, err := p.Attributes.withDefaults()
	if err != nil {
		return nil, err
	}
	if p.RemovalPolicy == "" {
		p.RemovalPolicy = awscdk.RemovalPolicy_RETAIN
	}
	if p.RemovalPolicy == awscdk.RemovalPolicy_DESTROY && !p.NoDeletionProtection {
		return nil, fmt.Errorf("%w: RemovalPolicy DESTROY cannot delete a table with deletion protection: "+
			"set NoDeletionProtection too (a throwaway deployment), or keep the table", ErrInvalidProps)
	}
	if err := checkTableName(p.TableName); err != nil {
		return nil, err
	}
	if p.Global != nil && !p.V2 {
		return nil, fmt.Errorf("%w: a global table (Global) needs V2 (awsdynamodb.TableV2)", ErrInvalidProps)
	}
	if p.V2 {
		if p.EncryptionKey != nil && isToken(*awscdk.Stack_Of(scope).Region()) {
			return nil, fmt.Errorf("%w: a TableV2 with a customer-managed key needs a stack with a concrete Region "+
				"(StackProps.Env); CDK cannot render its encryption in a region-agnostic stack", ErrInvalidProps)
		}
		if err := p.Global.check(scope, p.EncryptionKey); err != nil {
			return nil, err
		}
		return &Table{Table: newTableV2(scope, id, p, attrs), attrs: attrs, encryptionKey: p.EncryptionKey}, nil
	}

	tp := &awsdynamodb.TableProps{
		PartitionKey:        stringAttr(attrs.PartitionKey),
		TimeToLiveAttribute: jsii.String(attrs.TimeToLiveAttribute),
		BillingMode:         awsdynamodb.BillingMode_PAY_PER_REQUEST,
		PointInTimeRecoverySpecification: &awsdynamodb.PointInTimeRecoverySpecification{
			PointInTimeRecoveryEnabled: jsii.Bool(true),
		},
		Encryption:         awsdynamodb.TableEncryption_DEFAULT,
		RemovalPolicy:      p.RemovalPolicy,
		DeletionProtection: jsii.Bool(!p.NoDeletionProtection),
	}
	tp.TableName, tp.SortKey = optionalName(p.TableName), sortKeyAttr(attrs)
	if p.EncryptionKey != nil {
		tp.Encryption = awsdynamodb.TableEncryption_CUSTOMER_MANAGED
		tp.EncryptionKey = p.EncryptionKey
	}
	return &Table{
		Table:         awsdynamodb.NewTable(scope, jsii.String(id), tp),
		attrs:         attrs,
		encryptionKey: p.EncryptionKey,
	}, nil
}

// newTableV2 creates the TableV2 of checked props.
func newTableV2(scope constructs.Construct, id string, p TableProps, attrs Attributes) awsdynamodb.TableV2 {
	tp := &awsdynamodb.TablePropsV2{
		PartitionKey:        stringAttr(attrs.PartitionKey),
		TimeToLiveAttribute: jsii.String(attrs.TimeToLiveAttribute),
		Billing:             awsdynamodb.Billing_OnDemand(nil),
		PointInTimeRecoverySpecification: &awsdynamodb.PointInTimeRecoverySpecification{
			PointInTimeRecoveryEnabled: jsii.Bool(true),
		},
		Encryption:         awsdynamodb.TableEncryptionV2_DynamoOwnedKey(),
		RemovalPolicy:      p.RemovalPolicy,
		DeletionProtection: jsii.Bool(!p.NoDeletionProtection),
	}
	tp.TableName, tp.SortKey = optionalName(p.TableName), sortKeyAttr(attrs)
	if p.EncryptionKey != nil {
		tp.Encryption = awsdynamodb.TableEncryptionV2_CustomerManagedKey(p.EncryptionKey, nil)
	}
	if p.Global != nil {
		replicas := make([]*awsdynamodb.ReplicaTableProps, 0, len(p.Global.Replicas))
		for _, r := range p.Global.Replicas {
			replicas = append(replicas, &awsdynamodb.ReplicaTableProps{
				Region:             jsii.String(r),
				DeletionProtection: jsii.Bool(!p.NoDeletionProtection),
			})
		}
		tp.Replicas = &replicas
		tp.MultiRegionConsistency = awsdynamodb.MultiRegionConsistency_EVENTUAL
	}
	return awsdynamodb.NewTableV2(scope, jsii.String(id), tp)
}

// TableName returns the table's name (a token until deployment).
func (t *Table) TableName() *string { return t.Table.TableName() }

// TableArn returns the table's ARN (a token until deployment).
func (t *Table) TableArn() *string { return t.Table.TableArn() }

// Attributes returns the table's attribute names, defaults filled in: what
// [Table.Bind] passes to a function.
func (t *Table) Attributes() Attributes { return t.attrs }

// EncryptionKey returns the table's customer-managed key, or nil for an
// AWS-owned one.
func (t *Table) EncryptionKey() awskms.IKey { return t.encryptionKey }

func stringAttr(name string) *awsdynamodb.Attribute {
	return &awsdynamodb.Attribute{Name: jsii.String(name), Type: awsdynamodb.AttributeType_STRING}
}

// sortKeyAttr returns the sort key of a, or nil for none.
func sortKeyAttr(a Attributes) *awsdynamodb.Attribute {
	if a.SortKey == "" {
		return nil
	}
	return stringAttr(a.SortKey)
}

// optionalName returns nil for "" (a generated name), else name.
func optionalName(name string) *string {
	if name == "" {
		return nil
	}
	return jsii.String(name)
}

// checkTableName refuses a literal table name DynamoDB would refuse: 3 to 255
// characters of a-z, A-Z, 0-9, '_', '-' and '.'. A token is accepted as is.
func checkTableName(name string) error {
	if name == "" || isToken(name) {
		return nil
	}
	if len(name) < 3 || len(name) > 255 {
		return fmt.Errorf("%w: table name %q must be 3 to 255 characters", ErrInvalidProps, name)
	}
	for _, r := range name {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-' || r == '.') {
			return fmt.Errorf("%w: table name %q may hold only a-z, A-Z, 0-9, '_', '-' and '.'", ErrInvalidProps, name)
		}
	}
	return nil
}

// checkID refuses a nil scope, an empty id, or an id already used in scope:
// CDK would throw (a panic in Go) instead of returning an error.
func checkID(scope constructs.Construct, id string) error {
	switch {
	case scope == nil:
		return fmt.Errorf("%w: no scope", ErrInvalidProps)
	case id == "":
		return fmt.Errorf("%w: an empty construct id", ErrInvalidProps)
	case scope.Node().TryFindChild(jsii.String(id)) != nil:
		return fmt.Errorf("%w: id %q is already used in %s", ErrInvalidProps, id, *scope.Node().Path())
	}
	return nil
}

// isToken reports whether s is a CDK token (a value known only at deployment).
func isToken(s string) bool { return *awscdk.Token_IsUnresolved(jsii.String(s)) }
