package stacks

import (
	"fmt"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsdynamodb"
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"

	"github.com/lambdaidem/lambdaidem/cdk/lambdaidemcdk"
)

// VerifyChecks names the checks of `make aws-verify` (dev/awsverify) that
// run on tables of their own: each gets an idempotency table (construct id
// <check>) created by [lambdaidemcdk.NewTable] as a user's would be, and a
// business table beside it (<check>Items) keyed by the string "id". The
// stack outputs their names as <check>Table and <check>ItemsTable, which
// dev/awsverify reads (its tableRoles).
var VerifyChecks = []string{"Conformance", "Contention", "Chaos", "Probe", "Capacity"}

// NewVerifyStack creates the verify stack: the tables of [VerifyChecks],
// every one throwaway (RemovalPolicy DESTROY, no deletion protection), on
// demand, with point-in-time recovery as the example's own tables have it.
// It exists while a `make aws-verify` run does.
func NewVerifyStack(scope constructs.Construct, id string, props awscdk.StackProps) (awscdk.Stack, error) {
	stack := awscdk.NewStack(scope, jsii.String(id), &props)
	for _, check := range VerifyChecks {
		idem, err := lambdaidemcdk.NewTable(stack, check, &lambdaidemcdk.TableProps{
			RemovalPolicy:        awscdk.RemovalPolicy_DESTROY,
			NoDeletionProtection: true,
		})
		if err != nil {
			return nil, fmt.Errorf("%s: %w", id, err)
		}
		items := awsdynamodb.NewTable(stack, jsii.String(check+"Items"), &awsdynamodb.TableProps{
			PartitionKey: &awsdynamodb.Attribute{Name: jsii.String("id"), Type: awsdynamodb.AttributeType_STRING},
			BillingMode:  awsdynamodb.BillingMode_PAY_PER_REQUEST,
			PointInTimeRecoverySpecification: &awsdynamodb.PointInTimeRecoverySpecification{
				PointInTimeRecoveryEnabled: jsii.Bool(true),
			},
			RemovalPolicy:      awscdk.RemovalPolicy_DESTROY,
			DeletionProtection: jsii.Bool(false),
		})
		for _, o := range []struct {
			id   string
			name *string
		}{{check + "Table", idem.TableName()}, {check + "ItemsTable", items.TableName()}} {
			awscdk.NewCfnOutput(stack, jsii.String(o.id), &awscdk.CfnOutputProps{
				Value:       o.name,
				Description: jsii.String("aws-verify: a table of the " + check + " check"),
			})
		}
	}
	return stack, nil
}
