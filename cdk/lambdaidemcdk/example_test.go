package lambdaidemcdk_test

import (
	"errors"
	"fmt"
	"time"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsdynamodb"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsiam"
	"github.com/aws/aws-cdk-go/awscdk/v2/awskms"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambda"
	"github.com/aws/aws-cdk-go/awscdk/v2/awss3"
	"github.com/aws/jsii-runtime-go"

	"github.com/lambdaidem/lambdaidem/cdk/lambdaidemcdk"
)

// An HTTP function remembers completed keys for the horizon its clients retry
// in, and may stage exactly the writes its handler stages on its business table.
func ExampleTable_Bind() {
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
	if _, err := table.Bind(fn, 24*time.Hour); err != nil {
		panic(err)
	}
	payments := awsdynamodb.Table_FromTableName(stack, jsii.String("PaymentsTable"), jsii.String("payments"))
	if _, err := lambdaidemcdk.GrantStagedWrites(fn, payments, lambdaidemcdk.StagedPut, lambdaidemcdk.StagedUpdate); err != nil {
		panic(err)
	}

	other, err := lambdaidemcdk.NewTable(stack, "Other", nil)
	if err != nil {
		panic(err)
	}
	_, err = other.Bind(fn, time.Hour)
	fmt.Println(errors.Is(err, lambdaidemcdk.ErrAlreadyBound))
	fmt.Println(lambdaidemcdk.StoreActions())
	// Output:
	// true
	// [dynamodb:GetItem dynamodb:PutItem dynamodb:UpdateItem dynamodb:DeleteItem]
}

// A team moving from Powertools for AWS Lambda keeps its table.
func ExampleFromTableName() {
	app := awscdk.NewApp(nil)
	stack := awscdk.NewStack(app, jsii.String("Orders"), nil)
	table, err := lambdaidemcdk.FromTableName(stack, "Idempotency", "IdempotencyTable", &lambdaidemcdk.AdoptProps{
		// Powertools' defaults; name the attributes it was configured with.
		Attributes: lambdaidemcdk.Attributes{PartitionKey: "id", TimeToLiveAttribute: "expiration"},
	})
	if err != nil {
		panic(err)
	}
	env, err := table.Environment(96 * time.Hour)
	if err != nil {
		panic(err)
	}
	fmt.Println(*env[lambdaidemcdk.EnvTable], *env[lambdaidemcdk.EnvKeyAttr], *env[lambdaidemcdk.EnvExpirationAttr], *env[lambdaidemcdk.EnvTTL])
	// Output: IdempotencyTable id expiration 96h0m0s
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

// A function defined in another stack or app is imported: Bind grants on its
// role and returns the variables to set where the function is defined.
func ExampleTable_Bind_imported() {
	app := awscdk.NewApp(nil)
	stack := awscdk.NewStack(app, jsii.String("Ledger"), nil)
	role := awsiam.Role_FromRoleArn(stack, jsii.String("LedgerRole"), jsii.String("arn:aws:iam::111122223333:role/ledger"), nil)
	fn := awslambda.Function_FromFunctionAttributes(stack, jsii.String("Ledger"), &awslambda.FunctionAttributes{
		FunctionArn: jsii.String("arn:aws:lambda:eu-west-1:111122223333:function:ledger"), Role: role,
	})
	table, err := lambdaidemcdk.NewTable(stack, "Idempotency", nil)
	if err != nil {
		panic(err)
	}
	_, err = table.Bind(fn, 24*time.Hour)
	var notSet *lambdaidemcdk.EnvironmentNotSetError
	if errors.As(err, &notSet) {
		fmt.Println(notSet.Granted, *notSet.Environment[lambdaidemcdk.EnvTTL])
	}
	// Output: true 24h0m0s
}

// Outcomes sealed under a KMS key found by its alias: the function may
// generate and decrypt data keys only under the Sealer's encryption context.
func ExampleBindSealing() {
	app := awscdk.NewApp(nil)
	stack := awscdk.NewStack(app, jsii.String("Payments"), nil)
	artifacts := awss3.Bucket_FromBucketName(stack, jsii.String("Artifacts"), jsii.String("my-artifacts"))
	fn := awslambda.NewFunction(stack, jsii.String("Payments"), &awslambda.FunctionProps{
		Runtime: awslambda.Runtime_PROVIDED_AL2023(),
		Handler: jsii.String("bootstrap"),
		Code:    awslambda.Code_FromBucket(artifacts, jsii.String("payments.zip"), nil),
	})
	key := awskms.NewKey(stack, jsii.String("OutcomeKey"), &awskms.KeyProps{EnableKeyRotation: jsii.Bool(true)})
	if _, err := lambdaidemcdk.BindSealing(fn, lambdaidemcdk.SealingProps{
		Key: key.AddAlias(jsii.String("alias/payments-outcomes")),
	}); err != nil {
		panic(err)
	}
	fmt.Println(lambdaidemcdk.SealingActions(), lambdaidemcdk.DefaultSealContext())
	// Output: [kms:GenerateDataKey kms:Decrypt kms:DescribeKey] map[purpose:lambdaidem-outcome]
}
