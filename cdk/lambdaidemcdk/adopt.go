package lambdaidemcdk

import (
	"fmt"
	"strings"

	"github.com/aws/aws-cdk-go/awscdk/v2/awsdynamodb"
	"github.com/aws/aws-cdk-go/awscdk/v2/awskms"
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"
)

// AdoptProps describes an existing table adopted with [FromTableName],
// [FromTableArn] or [FromTable]: what the table's definition says and the
// construct cannot read from it. The zero value (or nil) describes a table with
// the default schema, such as one created for Powertools for AWS Lambda with its
// defaults (partition key "id", TTL attribute "expiration").
type AdoptProps struct {
	// Attributes names the table's key and TTL attributes. For a Powertools
	// table, its key_attr, sort_key_attr and expiry_attr. Default: "id" and
	// "expiration", no sort key.
	Attributes Attributes
	// EncryptionKey is the table's customer-managed KMS key, if it has one,
	// so that the grants cover it. Ignored by [FromTable], which reads it from
	// the table. Default: none (an AWS-owned or AWS-managed key).
	EncryptionKey awskms.IKey
}

// FromTableName adopts the existing table named tableName (in the stack's
// account and Region) as an idempotency table: nothing is created or changed
// in the table; grants and [Table.Bind] work as for a table from [NewTable].
// It returns an error wrapping [ErrInvalidProps] for a name DynamoDB would
// refuse or colliding attribute names, and then scope is unchanged.
func FromTableName(scope constructs.Construct, id, tableName string, props *AdoptProps) (*Table, error) {
	if tableName == "" {
		return nil, fmt.Errorf("%w: FromTableName needs a table name", ErrInvalidProps)
	}
	if err := checkTableName(tableName); err != nil {
		return nil, err
	}
	return adopt(scope, id, props, &awsdynamodb.TableAttributes{TableName: jsii.String(tableName)})
}

// FromTableArn adopts the existing table with ARN tableArn
// (arn:<partition>:dynamodb:<region>:<account>:table/<name>) as an idempotency
// table, as [FromTableName] does; a table in another account or Region works
// if its owner allows it. A literal ARN of another shape is refused with
// [ErrInvalidProps].
func FromTableArn(scope constructs.Construct, id, tableArn string, props *AdoptProps) (*Table, error) {
	if err := checkTableArn(tableArn); err != nil {
		return nil, err
	}
	return adopt(scope, id, props, &awsdynamodb.TableAttributes{TableArn: jsii.String(tableArn)})
}

// FromTable adopts a table defined elsewhere in the app (an awsdynamodb.Table
// or TableV2 with settings this package does not offer, such as a global table
// with per-Region keys) or imported by other means. Its encryption key is read
// from the table.
func FromTable(table awsdynamodb.ITable, props *AdoptProps) (*Table, error) {
	if table == nil {
		return nil, fmt.Errorf("%w: FromTable needs a table", ErrInvalidProps)
	}
	attrs, _, err := props.settings()
	if err != nil {
		return nil, err
	}
	return &Table{Table: table, attrs: attrs, encryptionKey: table.EncryptionKey()}, nil
}

// adopt imports the table ta describes, once props are known to be valid.
func adopt(scope constructs.Construct, id string, props *AdoptProps, ta *awsdynamodb.TableAttributes) (*Table, error) {
	if err := checkID(scope, id); err != nil {
		return nil, err
	}
	attrs, key, err := props.settings()
	if err != nil {
		return nil, err
	}
	ta.EncryptionKey = key
	table := awsdynamodb.Table_FromTableAttributes(scope, jsii.String(id), ta)
	return &Table{Table: table, attrs: attrs, encryptionKey: key}, nil
}

// settings returns the attribute names (defaults filled in) and the key of p,
// which may be nil.
func (p *AdoptProps) settings() (Attributes, awskms.IKey, error) {
	if p == nil {
		p = &AdoptProps{}
	}
	attrs, err := p.Attributes.withDefaults()
	return attrs, p.EncryptionKey, err
}

// checkTableArn refuses a literal ARN that does not name a DynamoDB table; a
// token is accepted as is.
func checkTableArn(arn string) error {
	if arn == "" {
		return fmt.Errorf("%w: FromTableArn needs a table ARN", ErrInvalidProps)
	}
	if isToken(arn) {
		return nil
	}
	parts := strings.SplitN(arn, ":", 6)
	if len(parts) != 6 || parts[0] != "arn" || parts[1] == "" || parts[2] != "dynamodb" ||
		parts[3] == "" || parts[4] == "" || !strings.HasPrefix(parts[5], "table/") {
		return fmt.Errorf("%w: %q is not a DynamoDB table ARN (arn:<partition>:dynamodb:<region>:<account>:table/<name>)",
			ErrInvalidProps, arn)
	}
	name := strings.TrimPrefix(parts[5], "table/")
	if name == "" || strings.Contains(name, "/") {
		return fmt.Errorf("%w: %q does not name a table (an index or a stream is part of one)", ErrInvalidProps, arn)
	}
	return checkTableName(name)
}
