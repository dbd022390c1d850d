package stacks

import (
	"time"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsdynamodb"
	"github.com/aws/aws-cdk-go/awscdk/v2/awskinesis"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambda"
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"
	"github.com/cdklabs/cdk-nag-go/cdknag/v2"

	"github.com/lambdaidem/lambdaidem/cdk/lambdaidemcdk"
)

// LedgerStackID is the id (and CloudFormation name) of the stream example's
// stack, added when [ContextLedgerZip] is set.
const LedgerStackID = "lambdaidem-ledger"

// Settings of the ledger stack.
const (
	// LedgerFunctionTimeout is both ledger functions' timeout.
	LedgerFunctionTimeout = 30 * time.Second
	// LedgerStreamRetention is the Kinesis stream's retention, and so the
	// Kinesis consumer's retry horizon (IDEMPOTENCY_TTL).
	LedgerStreamRetention = 24 * time.Hour
)

// LedgerProps configures [NewLedgerStack].
type LedgerProps struct {
	// StackProps are passed to the stack (environment, description, tags).
	StackProps awscdk.StackProps
	// CodeZip is the path of the examples/stream zip (a bootstrap binary
	// built for linux/Arch). Required; it must exist.
	CodeZip string
	// Arch is the functions' architecture: [ArchARM64] (default, also "") or
	// [ArchAMD64].
	Arch string
	// DestroyTables makes the tables' removal policy DESTROY and turns their
	// deletion protection off (throwaway deployments). Default RETAIN with
	// deletion protection.
	DestroyTables bool
}

// NewLedgerStack creates the stream example's stack: the ledger consumer
// (examples/stream) fed twice, through [lambdaidemcdk.NewStreamSource] both
// times:
//
//   - KinesisLedgerFunction (LEDGER_SOURCE=kinesis), by the Kinesis data
//     stream Transfers (encrypted, 24-hour retention): each record is a
//     transfer, keyed by its transfer_id;
//   - OutboxLedgerFunction (LEDGER_SOURCE=dynamodb), by the DynamoDB stream
//     of the transfers table (an outbox: partition key transfer_id, stream
//     NEW_IMAGE): each INSERT is booked, keyed by the stream record's id.
//
// Both stage their Put on the ledger table (env LEDGER_TABLE) and share the
// idempotency table, each bound with its stream's horizon as TTL; each
// mapping reports batch item failures, bisects, retries boundedly and sends
// what still fails to its failure queue. Outputs: StreamName,
// TransfersTableName, KinesisLedgerFunctionName, OutboxLedgerFunctionName,
// KinesisFailureQueueUrl, OutboxFailureQueueUrl.
func NewLedgerStack(scope constructs.Construct, id string, props LedgerProps) (awscdk.Stack, error) {
	stack := awscdk.NewStack(scope, jsii.String(id), &props.StackProps)
	fns := map[string]awslambda.Function{}
	for _, name := range []string{"KinesisLedgerFunction", "OutboxLedgerFunction"} {
		fn, err := newGoFunction(stack, name, functionProps{
			codeZip:    props.CodeZip,
			contextKey: ContextLedgerZip,
			arch:       props.Arch,
			invokedBy:  "by its stream's event source mapping",
			timeout:    LedgerFunctionTimeout,
		})
		if err != nil {
			return nil, err
		}
		fns[name] = fn
	}
	kinesisFn, outboxFn := fns["KinesisLedgerFunction"], fns["OutboxLedgerFunction"]
	kinesisFn.AddEnvironment(jsii.String("LEDGER_SOURCE"), jsii.String("kinesis"), nil)
	outboxFn.AddEnvironment(jsii.String("LEDGER_SOURCE"), jsii.String("dynamodb"), nil)

	ledger, err := newBusinessTable(stack, "LedgerTable", kinesisFn, businessTable{
		envVar: "LEDGER_TABLE",
		writes: []lambdaidemcdk.StagedWrite{lambdaidemcdk.StagedPut}, // ledger.stage: one Put per transfer
	}, props.DestroyTables)
	if err != nil {
		return nil, err
	}
	if _, err := lambdaidemcdk.GrantStagedWrites(outboxFn, ledger, lambdaidemcdk.StagedPut); err != nil {
		return nil, err
	}
	outboxFn.AddEnvironment(jsii.String("LEDGER_TABLE"), ledger.TableName(), nil)

	idem, err := idempotencyTable(stack, props.DestroyTables)
	if err != nil {
		return nil, err
	}

	stream := awskinesis.NewStream(stack, jsii.String("Transfers"), &awskinesis.StreamProps{
		RetentionPeriod: awscdk.Duration_Hours(jsii.Number(LedgerStreamRetention.Hours())),
		Encryption:      awskinesis.StreamEncryption_MANAGED,
		StreamMode:      awskinesis.StreamMode_ON_DEMAND,
	})
	kinesisSrc, err := lambdaidemcdk.NewStreamSource(stack, "Kinesis", lambdaidemcdk.StreamSourceProps{
		Function: kinesisFn, Table: idem, Stream: stream, StreamRetention: LedgerStreamRetention,
	})
	if err != nil {
		return nil, err
	}

	transfers := awsdynamodb.NewTable(stack, jsii.String("TransfersTable"), &awsdynamodb.TableProps{
		PartitionKey: &awsdynamodb.Attribute{Name: jsii.String("transfer_id"), Type: awsdynamodb.AttributeType_STRING},
		BillingMode:  awsdynamodb.BillingMode_PAY_PER_REQUEST,
		PointInTimeRecoverySpecification: &awsdynamodb.PointInTimeRecoverySpecification{
			PointInTimeRecoveryEnabled: jsii.Bool(true),
		},
		Stream:             awsdynamodb.StreamViewType_NEW_IMAGE,
		RemovalPolicy:      removalPolicy(props.DestroyTables),
		DeletionProtection: jsii.Bool(!props.DestroyTables),
	})
	outboxSrc, err := lambdaidemcdk.NewStreamSource(stack, "Outbox", lambdaidemcdk.StreamSourceProps{
		Function: outboxFn, Table: idem, DynamoDBTable: transfers,
	})
	if err != nil {
		return nil, err
	}
	// CDK's DynamoEventSource (under NewStreamSource) grants ListStreams on
	// "*"; every other statement of this role's policy names its resource
	// (stacks_test asserts them all).
	cdknag.NagSuppressions_AddResourceSuppressions(outboxFn.Role(), &[]*cdknag.NagPackSuppression{{
		Id: jsii.String("AwsSolutions-IAM5"),
		Reason: jsii.String("dynamodb:ListStreams, which CDK's DynamoEventSource grants for the stream's mapping, " +
			"supports no resource-level permissions, so its resource is *; every other statement names its resource."),
		AppliesTo: &[]any{"Resource::*"},
	}}, jsii.Bool(true))

	for name, v := range map[string]*string{
		"StreamName":                stream.StreamName(),
		"TransfersTableName":        transfers.TableName(),
		"KinesisLedgerFunctionName": kinesisFn.FunctionName(),
		"OutboxLedgerFunctionName":  outboxFn.FunctionName(),
		"KinesisFailureQueueUrl":    kinesisSrc.FailureQueue.QueueUrl(),
		"OutboxFailureQueueUrl":     outboxSrc.FailureQueue.QueueUrl(),
	} {
		awscdk.NewCfnOutput(stack, jsii.String(name), &awscdk.CfnOutputProps{Value: v})
	}
	return stack, nil
}
