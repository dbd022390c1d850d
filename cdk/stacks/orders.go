package stacks

import (
	"time"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"

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
