package stacks

import (
	"time"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambda"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssqs"
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"
	"github.com/cdklabs/cdk-nag-go/cdknag/v2"

	"github.com/lambdaidem/lambdaidem/cdk/lambdaidemcdk"
)

// OrdersFunctionTimeout is the orders function's timeout; the queue's visibility
// timeout is six times this.
const OrdersFunctionTimeout = 30 * time.Second

// OrdersProps configures [NewOrdersStack].
type OrdersProps struct {
	// StackProps are passed to the stack (environment, description, tags).
	StackProps awscdk.StackProps
	// CodeZip is the path of the examples/sqs zip (a bootstrap binary built for
	// linux/Arch). Required; it must exist.
	CodeZip string
	// Arch is the function's architecture: [ArchARM64] (default, also "") or
	// [ArchAMD64]; anything else is an error.
	Arch string
	// Queue tunes the queue wiring (retention, maxReceiveCount, TTL, batching);
	// its Function and Table are set by the stack. Zero fields take
	// [lambdaidemcdk.NewQueueSource]'s defaults.
	Queue lambdaidemcdk.QueueSourceProps
	// RelayZip, if set, is the path of the examples/relay zip: the stack then
	// adds the outbox ([lambdaidemcdk.NewOutbox]) with that relay function,
	// and an "order accepted" FIFO queue (with its dead-letter queue) that
	// the orders function publishes to through it (ORDER_ACCEPTED_QUEUE,
	// OUTBOX_TABLE; output AcceptedQueueUrl). Default "": no outbox.
	RelayZip string
	// DestroyTables makes both tables' removal policy DESTROY and turns their
	// deletion protection off (for throwaway deployments such as LocalStack).
	// Default RETAIN with deletion protection.
	DestroyTables bool
}

// NewOrdersStack creates the orders stack: an SQS queue and its dead-letter
// queue feeding the orders function (provided.al2023, props.Arch, handler
// bootstrap) with ReportBatchItemFailures, the orders table (env
// ORDERS_TABLE; the function may stage Puts on it), the idempotency table bound
// with the queue's retry horizon as TTL, and the outputs QueueUrl, DlqUrl and
// OrdersFunctionName. The queue
// rules of [lambdaidemcdk.NewQueueSource] apply: their errors are returned.
func NewOrdersStack(scope constructs.Construct, id string, props OrdersProps) (awscdk.Stack, error) {
	stack := awscdk.NewStack(scope, jsii.String(id), &props.StackProps)

	fn, err := newGoFunction(stack, "OrdersFunction", functionProps{
		codeZip:    props.CodeZip,
		contextKey: ContextOrdersZip,
		arch:       props.Arch,
		invokedBy:  "by its SQS event source mapping",
		timeout:    OrdersFunctionTimeout,
	})
	if err != nil {
		return nil, err
	}
	if _, err := newBusinessTable(stack, "OrdersTable", fn, businessTable{
		envVar: "ORDERS_TABLE",
		writes: []lambdaidemcdk.StagedWrite{lambdaidemcdk.StagedPut}, // orders.Handler stages one Put
	}, props.DestroyTables); err != nil {
		return nil, err
	}
	idem, err := idempotencyTable(stack, props.DestroyTables)
	if err != nil {
		return nil, err
	}
	if err := monitor(stack, idem, OrdersMetricsService); err != nil {
		return nil, err
	}
	if props.RelayZip != "" {
		if err := addOutbox(stack, fn, props); err != nil {
			return nil, err
		}
	}
	qp := props.Queue
	qp.Function = fn
	qp.Table = idem
	src, err := lambdaidemcdk.NewQueueSource(stack, "Orders", qp)
	if err != nil {
		return nil, err
	}

	awscdk.NewCfnOutput(stack, jsii.String("QueueUrl"), &awscdk.CfnOutputProps{
		Value:       src.Queue.QueueUrl(),
		Description: jsii.String("URL of the orders queue"),
	})
	awscdk.NewCfnOutput(stack, jsii.String("DlqUrl"), &awscdk.CfnOutputProps{
		Value:       src.DeadLetterQueue.QueueUrl(),
		Description: jsii.String("URL of the orders dead-letter queue"),
	})
	awscdk.NewCfnOutput(stack, jsii.String("OrdersFunctionName"), &awscdk.CfnOutputProps{
		Value:       fn.FunctionName(),
		Description: jsii.String("Name of the orders function"),
	})
	return stack, nil
}

// RelayFunctionTimeout is the relay function's timeout.
const RelayFunctionTimeout = 30 * time.Second

// addOutbox adds the "order accepted" queue, the relay function and the
// outbox between them, and lets the orders function stage events.
func addOutbox(stack awscdk.Stack, orders awslambda.Function, props OrdersProps) error {
	relayFn, err := newGoFunction(stack, "RelayFunction", functionProps{
		codeZip:    props.RelayZip,
		contextKey: ContextRelayZip,
		arch:       props.Arch,
		invokedBy:  "by its DynamoDB stream event source mapping, whose failures go to its on-failure queue",
		timeout:    RelayFunctionTimeout,
	})
	if err != nil {
		return err
	}
	dlq := awssqs.NewQueue(stack, jsii.String("AcceptedDeadLetterQueue"), &awssqs.QueueProps{
		Fifo: jsii.Bool(true), EnforceSSL: jsii.Bool(true), RetentionPeriod: awscdk.Duration_Days(jsii.Number(14)),
	})
	cdknag.NagSuppressions_AddResourceSuppressions(dlq, &[]*cdknag.NagPackSuppression{{
		Id:     jsii.String("Serverless-SQSRedrivePolicy"),
		Reason: jsii.String("This queue is the dead-letter queue of the order accepted queue: messages end here for an operator."),
	}}, jsii.Bool(false))
	accepted := awssqs.NewQueue(stack, jsii.String("AcceptedQueue"), &awssqs.QueueProps{
		Fifo: jsii.Bool(true), EnforceSSL: jsii.Bool(true),
		DeadLetterQueue: &awssqs.DeadLetterQueue{MaxReceiveCount: jsii.Number(5), Queue: dlq},
	})
	removal, noProtection := awscdk.RemovalPolicy_RETAIN, false
	if props.DestroyTables {
		removal, noProtection = awscdk.RemovalPolicy_DESTROY, true
	}
	ob, err := lambdaidemcdk.NewOutbox(stack, "Outbox", lambdaidemcdk.OutboxProps{
		Relay: relayFn, Queues: []awssqs.IQueue{accepted},
		RemovalPolicy: removal, NoDeletionProtection: noProtection,
	})
	if err != nil {
		return err
	}
	// CDK's DynamoEventSource grants dynamodb:ListStreams on "*": it supports
	// no resource-level permissions.
	cdknag.NagSuppressions_AddResourceSuppressions(relayFn.Role(), &[]*cdknag.NagPackSuppression{{
		Id: jsii.String("AwsSolutions-IAM5"),
		Reason: jsii.String("dynamodb:ListStreams, which CDK's DynamoEventSource grants for the outbox stream's mapping, " +
			"supports no resource-level permissions, so its resource is *; every other statement names its resource."),
		AppliesTo: &[]any{"Resource::*"},
	}}, jsii.Bool(true))
	if _, err := ob.GrantStage(orders); err != nil {
		return err
	}
	orders.AddEnvironment(jsii.String("ORDER_ACCEPTED_QUEUE"), accepted.QueueUrl(), nil)
	awscdk.NewCfnOutput(stack, jsii.String("AcceptedQueueUrl"), &awscdk.CfnOutputProps{
		Value:       accepted.QueueUrl(),
		Description: jsii.String("URL of the order accepted FIFO queue, fed through the outbox"),
	})
	return nil
}
