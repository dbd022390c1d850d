package stacks

import (
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsdynamodb"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsiam"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambda"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslogs"
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"
	"github.com/cdklabs/cdk-nag-go/cdknag/v2"

	"github.com/lambdaidem/lambdaidem/cdk/lambdaidemcdk"
)

// Architectures of the example functions, named as Go names them (GOARCH):
// the zips `make build ARCHES=...` writes are build/<example>-<arch>.zip.
const (
	ArchARM64 = "arm64" // Lambda's arm64 (Graviton); the default
	ArchAMD64 = "amd64" // Lambda's x86_64
)

// lambdaArchitecture maps an architecture name ([ArchARM64], [ArchAMD64]; ""
// is [ArchARM64]) to Lambda's.
func lambdaArchitecture(arch string) (awslambda.Architecture, error) {
	switch arch {
	case "", ArchARM64:
		return awslambda.Architecture_ARM_64(), nil
	case ArchAMD64:
		return awslambda.Architecture_X86_64(), nil
	}
	return nil, fmt.Errorf("architecture %q: want %q or %q", arch, ArchARM64, ArchAMD64)
}

// functionProps describes one example function.
type functionProps struct {
	codeZip    string // path of a zip holding the bootstrap binary
	contextKey string // the context key that overrides codeZip, for messages
	arch       string // ArchARM64 ("" too) or ArchAMD64
	timeout    time.Duration
	// invokedBy says how the function is invoked, always synchronously: the
	// reason it has no dead-letter queue (cdk-nag Serverless-LambdaDLQ).
	invokedBy string
}

// newGoFunction creates a provided.al2023 function for p.arch whose code is
// the zip at p.codeZip, refusing clearly when the zip is missing or the
// architecture unknown.
func newGoFunction(scope constructs.Construct, id string, p functionProps) (awslambda.Function, error) {
	arch, err := lambdaArchitecture(p.arch)
	if err != nil {
		return nil, fmt.Errorf("%s: %w (context key %q)", id, err, ContextArch)
	}
	if p.codeZip == "" {
		return nil, fmt.Errorf("%s: no code zip given (context key %q)", id, p.contextKey)
	}
	abs, err := filepath.Abs(p.codeZip)
	if err != nil {
		return nil, fmt.Errorf("%s: code zip %q: %w", id, p.codeZip, err)
	}
	if fi, err := os.Stat(abs); err != nil || fi.IsDir() {
		return nil, fmt.Errorf("%s: code zip %s is missing: build the examples first (make build) "+
			"or point context key %q at a zip", id, abs, p.contextKey)
	}
	logs := awslogs.NewLogGroup(scope, jsii.String(id+"Logs"), &awslogs.LogGroupProps{
		Retention:     awslogs.RetentionDays_TWO_WEEKS,
		RemovalPolicy: awscdk.RemovalPolicy_DESTROY,
	})
	// A role of its own instead of CDK's default one, whose AWS managed
	// policy (AWSLambdaBasicExecutionRole) allows writing to every log group
	// of the account: this one writes to the function's log group only.
	role := awsiam.NewRole(scope, jsii.String(id+"Role"), &awsiam.RoleProps{
		AssumedBy:   awsiam.NewServicePrincipal(jsii.String("lambda.amazonaws.com"), nil),
		Description: jsii.String("Execution role of " + id),
	})
	logs.GrantWrite(role)
	fn := awslambda.NewFunction(scope, jsii.String(id), &awslambda.FunctionProps{
		Runtime:      awslambda.Runtime_PROVIDED_AL2023(),
		Architecture: arch,
		Handler:      jsii.String("bootstrap"),
		Code:         awslambda.Code_FromAsset(jsii.String(abs), nil),
		Timeout:      awscdk.Duration_Seconds(jsii.Number(p.timeout.Seconds())),
		MemorySize:   jsii.Number(256),
		LogGroup:     logs,
		Role:         role,
	})
	traceActively(scope, id, fn, role)
	cdknag.NagSuppressions_AddResourceSuppressions(fn, &[]*cdknag.NagPackSuppression{{
		Id: jsii.String("Serverless-LambdaDLQ"),
		Reason: jsii.String("The function is invoked synchronously only (" + p.invokedBy + "): a Lambda dead-letter queue " +
			"receives failed asynchronous invocations only (Lambda developer guide, Asynchronous invocation), so it would stay empty; " +
			"failures reach the caller, which retries with the same idempotency key."),
	}}, jsii.Bool(false))
	return fn, nil
}

// xrayActions are what Lambda's active tracing needs of X-Ray (Lambda
// developer guide, Visualize Lambda function invocations using AWS X-Ray:
// execution role permissions).
var xrayActions = []string{"xray:PutTraceSegments", "xray:PutTelemetryRecords"}

// traceActively turns on X-Ray active tracing for fn, with the permission it
// needs in a policy of its own (id+"Tracing") rather than in the role's
// default policy: X-Ray's PutTraceSegments and PutTelemetryRecords support no
// resource-level permissions, so the statement's resource must be "*", and
// the cdk-nag suppression that says so covers this policy alone, never the
// grants on the tables.
func traceActively(scope constructs.Construct, id string, fn awslambda.Function, role awsiam.IRole) {
	policy := awsiam.NewPolicy(scope, jsii.String(id+"Tracing"), &awsiam.PolicyProps{
		Roles: &[]awsiam.IRole{role},
		Statements: &[]awsiam.PolicyStatement{awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
			Actions:   jsii.Strings(xrayActions...),
			Resources: jsii.Strings("*"),
		})},
	})
	cdknag.NagSuppressions_AddResourceSuppressions(policy, &[]*cdknag.NagPackSuppression{{
		Id: jsii.String("AwsSolutions-IAM5"),
		Reason: jsii.String("xray:PutTraceSegments and xray:PutTelemetryRecords support no resource-level permissions " +
			"(Service Authorization Reference, AWS X-Ray: resource types column empty), so their resource is *; " +
			"this policy holds only those two actions."),
		AppliesTo: &[]any{"Resource::*"},
	}}, jsii.Bool(false))
	fn.Node().DefaultChild().(awslambda.CfnFunction).SetTracingConfig(
		&awslambda.CfnFunction_TracingConfigProperty{Mode: jsii.String("Active")})
	fn.Node().AddDependency(policy)
}

// businessTable describes an example's business table.
type businessTable struct {
	envVar string                      // the variable that names the table to the function
	reads  bool                        // the handler reads items itself (GetItem)
	writes []lambdaidemcdk.StagedWrite // the kinds of write its handler stages
}

// newBusinessTable creates an example's business table (partition key "id",
// String), lets fn make exactly the staged writes b lists
// ([lambdaidemcdk.GrantStagedWrites]) and, if b.reads, GetItem, and exposes
// its name to fn as b.envVar.
func newBusinessTable(scope constructs.Construct, id string, fn awslambda.Function, b businessTable,
	destroy bool) (awsdynamodb.Table, error) {
	table := awsdynamodb.NewTable(scope, jsii.String(id), &awsdynamodb.TableProps{
		PartitionKey: &awsdynamodb.Attribute{Name: jsii.String("id"), Type: awsdynamodb.AttributeType_STRING},
		BillingMode:  awsdynamodb.BillingMode_PAY_PER_REQUEST,
		PointInTimeRecoverySpecification: &awsdynamodb.PointInTimeRecoverySpecification{
			PointInTimeRecoveryEnabled: jsii.Bool(true),
		},
		RemovalPolicy:      removalPolicy(destroy),
		DeletionProtection: jsii.Bool(!destroy),
	})
	if _, err := lambdaidemcdk.GrantStagedWrites(fn, table, b.writes...); err != nil {
		return nil, fmt.Errorf("%s: %w", id, err)
	}
	if b.reads {
		awsiam.Grant_AddToPrincipal(&awsiam.GrantOnPrincipalOptions{
			Grantee:      fn,
			Actions:      jsii.Strings("dynamodb:GetItem"),
			ResourceArns: jsii.Strings(*table.TableArn()),
		})
	}
	fn.AddEnvironment(jsii.String(b.envVar), table.TableName(), nil)
	return table, nil
}

// idempotencyTable creates an example's idempotency table with the app's
// defaults; destroy makes it a throwaway table (RemovalPolicy DESTROY, no
// deletion protection).
func idempotencyTable(scope constructs.Construct, destroy bool) (*lambdaidemcdk.Table, error) {
	return lambdaidemcdk.NewTable(scope, "IdempotencyTable", &lambdaidemcdk.TableProps{
		RemovalPolicy:        removalPolicy(destroy),
		NoDeletionProtection: destroy,
	})
}

// removalPolicy maps the DestroyTables switch to a removal policy.
func removalPolicy(destroy bool) awscdk.RemovalPolicy {
	if destroy {
		return awscdk.RemovalPolicy_DESTROY
	}
	return awscdk.RemovalPolicy_RETAIN
}
