package lambdaidemcdk_test

import (
	"errors"
	"fmt"
	"time"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambda"
	"github.com/aws/aws-cdk-go/awscdk/v2/awss3"
	"github.com/aws/jsii-runtime-go"

	"github.com/lambdaidem/lambdaidem/cdk/lambdaidemcdk"
)

// An HTTP function remembers completed keys for the horizon its clients retry in.
func ExampleTable_GrantTo() {
	app := awscdk.NewApp(nil)
	stack := awscdk.NewStack(app, jsii.String("Payments"), nil)
	artifacts := awss3.Bucket_FromBucketName(stack, jsii.String("Artifacts"), jsii.String("my-artifacts"))
	fn := awslambda.NewFunction(stack, jsii.String("Payments"), &awslambda.FunctionProps{
		Runtime:      awslambda.Runtime_PROVIDED_AL2023(),
		Architecture: awslambda.Architecture_ARM_64(),
		Handler:      jsii.String("bootstrap"),
		Code:         awslambda.Code_FromBucket(artifacts, jsii.String("payments.zip"), nil),
	})

	table, err := lambdaidemcdk.NewTable(stack, "Idempotency", nil)
	if err != nil {
		panic(err)
	}
	if err := table.GrantTo(fn, 24*time.Hour); err != nil {
		panic(err)
	}
	fmt.Println(lambdaidemcdk.StoreActions())
	// Output: [dynamodb:GetItem dynamodb:PutItem dynamodb:UpdateItem dynamodb:DeleteItem]
}

// A queue consumer gets its TTL from the queue, and unsafe settings are refused.
func ExampleNewQueueSource() {
	app := awscdk.NewApp(nil)
	stack := awscdk.NewStack(app, jsii.String("Orders"), nil)
	artifacts := awss3.Bucket_FromBucketName(stack, jsii.String("Artifacts"), jsii.String("my-artifacts"))
	fn := awslambda.NewFunction(stack, jsii.String("Orders"), &awslambda.FunctionProps{
		Runtime:      awslambda.Runtime_PROVIDED_AL2023(),
		Architecture: awslambda.Architecture_ARM_64(),
		Handler:      jsii.String("bootstrap"),
		Code:         awslambda.Code_FromBucket(artifacts, jsii.String("orders.zip"), nil),
		Timeout:      awscdk.Duration_Seconds(jsii.Number(30)),
	})
	table, err := lambdaidemcdk.NewTable(stack, "Idempotency", nil)
	if err != nil {
		panic(err)
	}

	_, err = lambdaidemcdk.NewQueueSource(stack, "Refused", lambdaidemcdk.QueueSourceProps{
		Function: fn, Table: table, TTL: 24 * time.Hour,
	})
	fmt.Println(errors.Is(err, lambdaidemcdk.ErrTTLShorterThanHorizon))

	src, err := lambdaidemcdk.NewQueueSource(stack, "Queue", lambdaidemcdk.QueueSourceProps{
		Function: fn, Table: table,
	})
	if err != nil {
		panic(err)
	}
	fmt.Println("visibility timeout:", src.VisibilityTimeout)
	fmt.Println("retry horizon:", src.Horizon)
	fmt.Println("IDEMPOTENCY_TTL:", src.TTL)
	// Output:
	// true
	// visibility timeout: 3m0s
	// retry horizon: 96h0m0s
	// IDEMPOTENCY_TTL: 96h0m0s
}
