package lambdaidemcdk

import (
	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"
)

// nagRule is a cdk-nag rule that the design of a construct's resource
// contradicts, with the reason a reviewer reads in the template.
type nagRule struct{ id, reason string }

// The cdk-nag rules this package's own resources carry a suppression for:
// each is a rule whose remedy does not exist for the resource or would
// defeat its purpose. cdk/README.md ("Checks") lists them.
var (
	// nagDLQRedrive: a dead-letter queue or an on-failure destination is
	// where failed messages end up; a redrive policy on it would move them
	// on to a further queue after maxReceiveCount reads by an operator.
	nagDLQRedrive = nagRule{"Serverless-SQSRedrivePolicy",
		"This queue is itself the dead-letter queue (or on-failure destination) of a lambdaidem event source: " +
			"messages end here for an operator to inspect and redrive; a redrive policy on it would move them " +
			"to yet another queue after a few reads and lose track of them."}
	// nagFailureDestinationIsDLQ: AwsSolutions-SQS3 recognizes a queue as a
	// dead-letter queue only through a redrive policy or a function's
	// DeadLetterConfig, not as an event source mapping's destination.
	nagFailureDestinationIsDLQ = nagRule{"AwsSolutions-SQS3",
		"This queue is the on-failure destination of a Kinesis or DynamoDB Streams event source mapping " +
			"(DestinationConfig.OnFailure), that is, the dead-letter queue of the stream; cdk-nag recognizes " +
			"only redrive policies and function dead-letter configs as DLQ use."}
	// nagSQSNoDestination: Lambda supports on-failure destinations for
	// stream and Kafka sources only (CreateEventSourceMapping,
	// DestinationConfig).
	nagSQSNoDestination = nagRule{"Serverless-LambdaEventSourceMappingDestination",
		"An SQS event source mapping takes no on-failure destination (Lambda API Reference, " +
			"CreateEventSourceMapping: DestinationConfig is for Kinesis, DynamoDB Streams and Kafka only); " +
			"a message that keeps failing moves to the queue's dead-letter queue through its redrive policy " +
			"(maxReceiveCount), which NewQueueSource always creates."}
)

// suppressNag records rules as cdk-nag suppressions on c's CloudFormation
// resource (c itself or its default child), in the template metadata
// cdk-nag reads (cdk_nag.rules_to_suppress, the format of cdk-nag's
// NagSuppressions and of its README's "Using on CloudFormation templates"),
// keeping any suppression already there. The package writes the metadata
// itself so that a user's app does not load cdk-nag to use the constructs.
func suppressNag(c constructs.IConstruct, rules ...nagRule) {
	if c == nil {
		return
	}
	res, ok := c.(awscdk.CfnResource)
	if !ok {
		if res, ok = c.Node().DefaultChild().(awscdk.CfnResource); !ok {
			return
		}
	}
	var list []any
	if m, ok := res.GetMetadata(jsii.String("cdk_nag")).(map[string]any); ok {
		list, _ = m["rules_to_suppress"].([]any)
	}
	for _, r := range rules {
		list = append(list, map[string]any{"id": r.id, "reason": r.reason})
	}
	res.AddMetadata(jsii.String("cdk_nag"), map[string]any{"rules_to_suppress": list})
}
