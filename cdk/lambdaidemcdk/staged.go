package lambdaidemcdk

import (
	"fmt"

	"github.com/aws/aws-cdk-go/awscdk/v2/awsdynamodb"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsiam"
	"github.com/aws/jsii-runtime-go"
)

// StagedWrite is a kind of business write a handler stages with the DynamoDB
// store (dynamostore.Stage of a types.Put, Update, Delete or ConditionCheck)
// for the transaction that commits its idempotency record. Its value is the
// store's name for it.
type StagedWrite string

// The kinds of staged write, and the action each needs on its table:
// TransactWriteItems authorizes every item by the action of its own kind.
const (
	StagedPut            StagedWrite = "Put"            // dynamodb:PutItem
	StagedUpdate         StagedWrite = "Update"         // dynamodb:UpdateItem
	StagedDelete         StagedWrite = "Delete"         // dynamodb:DeleteItem
	StagedConditionCheck StagedWrite = "ConditionCheck" // dynamodb:ConditionCheckItem
)

// Action returns the IAM action a staged write of kind w needs on its table,
// or "" for an unknown kind.
func (w StagedWrite) Action() string {
	switch w {
	case StagedPut:
		return "dynamodb:PutItem"
	case StagedUpdate:
		return "dynamodb:UpdateItem"
	case StagedDelete:
		return "dynamodb:DeleteItem"
	case StagedConditionCheck:
		return "dynamodb:ConditionCheckItem"
	}
	return ""
}

// GrantStagedWrites lets grantee (any IGrantable: a function, an alias, a
// role) make exactly the staged writes listed on a business table: one
// statement allowing each kind's [StagedWrite.Action] (each once, in the order
// Put, Update, Delete, ConditionCheck) on exactly the table's ARN, plus, for a
// table with a customer-managed key, the key's use on exactly that key's ARN.
// Without it a handler that stages, say, an Update on a table it may only Put
// to gets AccessDenied for its whole transaction, idempotency record included.
//
// Reads the handler makes itself (GetItem, Query) are not staged writes: grant
// them with the table's own methods (table.Grant(grantee, "dynamodb:GetItem")).
// No table, no grantee, no kinds or an unknown kind return an error wrapping
// [ErrInvalidProps], and then nothing is granted.
func GrantStagedWrites(grantee awsiam.IGrantable, table awsdynamodb.ITable, writes ...StagedWrite) (awsiam.Grant, error) {
	if grantee == nil || table == nil {
		return nil, fmt.Errorf("%w: GrantStagedWrites needs a grantee and a table", ErrInvalidProps)
	}
	if len(writes) == 0 {
		return nil, fmt.Errorf("%w: GrantStagedWrites needs at least one kind of staged write", ErrInvalidProps)
	}
	want := map[StagedWrite]bool{}
	for _, w := range writes {
		if w.Action() == "" {
			return nil, fmt.Errorf("%w: unknown staged write %q (want Put, Update, Delete or ConditionCheck)",
				ErrInvalidProps, string(w))
		}
		want[w] = true
	}
	var actions []string
	for _, w := range [...]StagedWrite{StagedPut, StagedUpdate, StagedDelete, StagedConditionCheck} {
		if want[w] {
			actions = append(actions, w.Action())
		}
	}
	g := awsiam.Grant_AddToPrincipal(&awsiam.GrantOnPrincipalOptions{
		Grantee:      grantee,
		Actions:      jsii.Strings(actions...),
		ResourceArns: jsii.Strings(*table.TableArn()),
	})
	if key := table.EncryptionKey(); key != nil {
		g = g.Combine(awsiam.Grant_AddToPrincipal(&awsiam.GrantOnPrincipalOptions{
			Grantee:      grantee,
			Actions:      jsii.Strings(keyActions()...),
			ResourceArns: jsii.Strings(*key.KeyArn()),
		}))
	}
	return g, nil
}
