package stacks

import (
	"time"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambda"
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"
)

// FunctionURLStackID is the id (and CloudFormation name) of the net/http
// example's stack, added when [ContextFunctionURLZip] is set.
const FunctionURLStackID = "lambdaidem-function-url"

// FunctionURLProps configures [NewFunctionURLStack].
type FunctionURLProps struct {
	// StackProps are passed to the stack (environment, description, tags).
	StackProps awscdk.StackProps
	// CodeZip is the path of the examples/function-url zip (a bootstrap
	// binary built for linux/Arch). Required; it must exist.
	CodeZip string
	// Arch is the function's architecture: [ArchARM64] (default, also "") or
	// [ArchAMD64].
	Arch string
	// TTL is the idempotency retry horizon. Default [DefaultPaymentsTTL].
	TTL time.Duration
	// DestroyTables makes the tables' removal policy DESTROY and turns their
	// deletion protection off (throwaway deployments). Default RETAIN with
	// deletion protection.
	DestroyTables bool
	// Sealing seals stored outcomes under a KMS key of the stack, as
	// [PaymentsProps.Sealing] does. Default false.
	Sealing bool
}

// NewFunctionURLStack creates the net/http example's stack: the payments API
// as a go-chi router behind the httpidem middleware (examples/function-url)
// on a Lambda Function URL with AWS_IAM auth (the middleware scopes keys by
// the IAM caller, so an unsigned request never reaches it) in response
// streaming mode (lambdaurl); the payments table (env PAYMENTS_TABLE; Puts
// staged, GetItem), the idempotency table bound with props.TTL. Outputs:
// FunctionUrl, FunctionUrlFunctionName.
func NewFunctionURLStack(scope constructs.Construct, id string, props FunctionURLProps) (awscdk.Stack, error) {
	ttl := props.TTL
	if ttl == 0 {
		ttl = DefaultPaymentsTTL
	}
	stack := awscdk.NewStack(scope, jsii.String(id), &props.StackProps)
	fn, _, err := newPaymentsFunction(stack, "FunctionUrlFunction", functionProps{
		codeZip:    props.CodeZip,
		contextKey: ContextFunctionURLZip,
		arch:       props.Arch,
		invokedBy:  "through its Function URL, in response streaming mode",
		timeout:    PaymentsFunctionTimeout,
	}, ttl, props.DestroyTables)
	if err != nil {
		return nil, err
	}
	if props.Sealing {
		if err := sealOutcomes(stack, id, fn, props.DestroyTables); err != nil {
			return nil, err
		}
	}
	url := fn.AddFunctionUrl(&awslambda.FunctionUrlOptions{
		AuthType:   awslambda.FunctionUrlAuthType_AWS_IAM,
		InvokeMode: awslambda.InvokeMode_RESPONSE_STREAM,
	})
	awscdk.NewCfnOutput(stack, jsii.String("FunctionUrl"), &awscdk.CfnOutputProps{
		Value:       url.Url(),
		Description: jsii.String("The payments API's Function URL (requests signed with SigV4: AWS_IAM auth)"),
	})
	awscdk.NewCfnOutput(stack, jsii.String("FunctionUrlFunctionName"), &awscdk.CfnOutputProps{
		Value: fn.FunctionName(),
	})
	return stack, nil
}
