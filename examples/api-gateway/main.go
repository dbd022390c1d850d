// Command api-gateway is the payments API as a Lambda function behind an
// HTTP API (payload format 2.0). See README.md.
//
// Environment:
//
//	IDEMPOTENCY_TABLE          the idempotency table (required)
//	PAYMENTS_TABLE             the payments table, partition key "id" (S) (required)
//	IDEMPOTENCY_TTL            how long a key is remembered, a Go duration (default 24h)
//	IDEMPOTENCY_*_ATTR, IDEMPOTENCY_SORT_KEY_VALUE  the table's attribute names (see dynamostore.ReadEnv)
//	IDEMPOTENCY_SEAL_KEY, IDEMPOTENCY_SEAL_PREVIOUS_KEYS, IDEMPOTENCY_SEAL_CONTEXT
//	                           set: stored outcomes are sealed under this KMS key, as
//	                           lambdaidemcdk.BindSealing grants (see kmsseal.ReadEnv)
//	AWS_ENDPOINT_URL_DYNAMODB  honoured by the AWS SDK itself (LocalStack, an emulator)
package main

import (
	"context"
	"errors"
	"fmt"
	"log"
	"os"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/kms"

	"github.com/lambdaidem/lambdaidem/dynamostore"
	"github.com/lambdaidem/lambdaidem/examples/api-gateway/payments"
	"github.com/lambdaidem/lambdaidem/kmsseal"
	"github.com/lambdaidem/lambdaidem/lambdaidem"
	"github.com/lambdaidem/lambdaidem/lambdaidem/emf"
)

// metricsService is the Service dimension of the function's CloudWatch
// metrics (package emf), which the CDK app's alarms watch.
const metricsService = "payments"

func main() {
	api, err := setup(context.Background(), os.Getenv)
	if err != nil {
		log.Fatalf("api-gateway: %v", err)
	}
	lambda.Start(api.Handle)
}

// settings is the function's configuration.
type settings struct {
	idempotency   dynamostore.Env // IDEMPOTENCY_*, as the CDK construct's Table.Bind sets them
	sealing       kmsseal.Env     // IDEMPOTENCY_SEAL_*, as lambdaidemcdk.BindSealing sets them
	paymentsTable string
}

func readSettings(getenv func(string) string) (settings, error) {
	idem, err := dynamostore.ReadEnv(getenv)
	sealing, serr := kmsseal.ReadEnv(getenv)
	s := settings{idempotency: idem, sealing: sealing, paymentsTable: getenv("PAYMENTS_TABLE")}
	errs := []error{err, serr}
	if s.paymentsTable == "" {
		errs = append(errs, errors.New("PAYMENTS_TABLE is not set"))
	}
	return s, errors.Join(errs...)
}

// setup builds the clients once, at start.
func setup(ctx context.Context, getenv func(string) string) (*payments.API, error) {
	s, err := readSettings(getenv)
	if err != nil {
		return nil, err
	}
	cfg, err := config.LoadDefaultConfig(ctx)
	if err != nil {
		return nil, fmt.Errorf("load AWS config: %w", err)
	}
	client := dynamodb.NewFromConfig(cfg)
	store, err := dynamostore.New(client, s.idempotency.Table, s.idempotency.StoreOptions)
	if err != nil {
		return nil, err
	}
	metrics, err := emf.New(os.Stdout, func(o *emf.Options) { o.Service = metricsService })
	if err != nil {
		return nil, err
	}
	sealer, err := s.sealing.Sealer(ctx, kms.NewFromConfig(cfg))
	if err != nil {
		return nil, err
	}
	guard, err := lambdaidem.New(store, func(o *lambdaidem.Options) {
		o.RetryHorizon = s.idempotency.RetryHorizon
		o.Hooks = metrics.Hooks() // CloudWatch metrics as EMF lines on stdout
		if sealer != nil {
			o.Sealer = sealer // outcomes encrypted under the KMS key (cdk: -c sealing=true)
		}
	})
	if err != nil {
		return nil, err
	}
	return payments.New(guard, client, s.paymentsTable)
}
