package lambdaidemcdk_test

import (
	"errors"
	"fmt"
	"time"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awskinesis"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambda"
	"github.com/aws/aws-cdk-go/awscdk/v2/awss3"
	"github.com/aws/jsii-runtime-go"

	"github.com/lambdaidem/lambdaidem/cdk/lambdaidemcdk"
)

// A Kinesis consumer gets its TTL from the stream's retention (or the
// mapping's maximum record age), and a shorter TTL is refused.
func ExampleNewStreamSource() {
	app := awscdk.NewApp(nil)
	stack := awscdk.NewStack(app, jsii.String("Ledger"), nil)
	artifacts := awss3.Bucket_FromBucketName(stack, jsii.String("Artifacts"), jsii.String("my-artifacts"))
	newFn := func(id string) awslambda.Function {
		return awslambda.NewFunction(stack, jsii.String(id), &awslambda.FunctionProps{
			Runtime: awslambda.Runtime_PROVIDED_AL2023(),
			Handler: jsii.String("bootstrap"),
			Code:    awslambda.Code_FromBucket(artifacts, jsii.String("ledger.zip"), nil),
		})
	}
	transfers := awskinesis.NewStream(stack, jsii.String("Transfers"), &awskinesis.StreamProps{
		RetentionPeriod: awscdk.Duration_Days(jsii.Number(7)),
	})
	table, err := lambdaidemcdk.NewTable(stack, "Idempotency", nil)
	if err != nil {
		panic(err)
	}

	src, err := lambdaidemcdk.NewStreamSource(stack, "LedgerFeed", lambdaidemcdk.StreamSourceProps{
		Function: newFn("Ledger"), Table: table,
		Stream: transfers, StreamRetention: 7 * 24 * time.Hour,
	})
	if err != nil {
		panic(err)
	}
	fmt.Println("horizon", src.Horizon, "TTL", src.TTL, "failure queue", src.FailureQueue != nil)

	_, err = lambdaidemcdk.NewStreamSource(stack, "AuditFeed", lambdaidemcdk.StreamSourceProps{
		Function: newFn("Audit"), Table: table,
		Stream: transfers, StreamRetention: 7 * 24 * time.Hour, TTL: 24 * time.Hour,
	})
	fmt.Println(errors.Is(err, lambdaidemcdk.ErrTTLShorterThanHorizon))
	// Output:
	// horizon 168h0m0s TTL 168h0m0s failure queue true
	// true
}
