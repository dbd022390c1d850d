package stacks_test

import (
	"testing"
	"time"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/jsii-runtime-go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lambdaidem/lambdaidem/cdk/internal/cdktest"
	"github.com/lambdaidem/lambdaidem/cdk/stacks"
)

func TestConfigFromContext(t *testing.T) {
	tests := []struct {
		name    string
		context map[string]any
		want    stacks.Config
		wantErr string
	}{
		{
			name:    "defaults: the zips make build writes",
			context: nil,
			want:    stacks.Config{PaymentsZip: "../build/api-gateway-arm64.zip", OrdersZip: "../build/sqs-arm64.zip"},
		},
		{
			name: "every key, as the CLI's -c passes them (strings)",
			context: map[string]any{
				"paymentsZip": "/tmp/p.zip", "ordersZip": "/tmp/o.zip",
				"jwtIssuer": "https://issuer.example.com/", "jwtAudience": "payments, admin",
				"paymentsTtl": "48h", "destroyTables": "true",
			},
			want: stacks.Config{
				PaymentsZip: "/tmp/p.zip", OrdersZip: "/tmp/o.zip",
				JWTIssuer: "https://issuer.example.com/", JWTAudience: []string{"payments", "admin"},
				PaymentsTTL: 48 * time.Hour, DestroyTables: true,
			},
		},
		{
			name:    "audience as a JSON list and a boolean, as cdk.json holds them",
			context: map[string]any{"jwtAudience": []any{"payments"}, "destroyTables": false},
			want: stacks.Config{
				PaymentsZip: "../build/api-gateway-arm64.zip", OrdersZip: "../build/sqs-arm64.zip",
				JWTAudience: []string{"payments"},
			},
		},
		{
			name:    "a TTL that is not a Go duration",
			context: map[string]any{"paymentsTtl": "1 day"},
			wantErr: `context "paymentsTtl": time: unknown unit " day" in duration "1 day"`,
		},
		{
			name:    "a zip path that is not a string",
			context: map[string]any{"ordersZip": 3},
			wantErr: `context "ordersZip": want a string, got float64`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			app := cdktest.NewApp(t, tt.context)
			got, err := stacks.ConfigFromContext(app.Node())
			if tt.wantErr != "" {
				assert.EqualError(t, err, tt.wantErr)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestBuildAddsBothStacksFromContext(t *testing.T) {
	zip := cdktest.DummyZip(t)
	app := cdktest.NewApp(t, map[string]any{
		"paymentsZip": zip, "ordersZip": zip,
		"jwtIssuer": "https://issuer.example.com/", "jwtAudience": "payments",
		"paymentsTtl": "48h",
	})
	require.NoError(t, stacks.Build(app))

	payments := cdktest.Synth(t, stackOf(t, app, "lambdaidem-payments"))
	assert.Len(t, payments.OfType("AWS::ApiGatewayV2::Authorizer"), 1)
	vars := payments.One(t, "AWS::Lambda::Function", "PaymentsFunction").Properties["Environment"].(map[string]any)["Variables"]
	assert.Equal(t, "48h0m0s", vars.(map[string]any)["IDEMPOTENCY_TTL"])
	assert.Equal(t, []string{"ApiUrl"}, payments.Outputs())

	orders := cdktest.Synth(t, stackOf(t, app, "lambdaidem-orders"))
	assert.Equal(t, []string{"DlqUrl", "QueueUrl"}, orders.Outputs())

	assembly := app.Synth(nil)
	names := []string{}
	for _, s := range *assembly.Stacks() {
		names = append(names, *s.StackName())
	}
	assert.ElementsMatch(t, []string{"lambdaidem-payments", "lambdaidem-orders"}, names)
}

func TestBuildReportsAMissingZip(t *testing.T) {
	app := cdktest.NewApp(t, map[string]any{"paymentsZip": t.TempDir() + "/missing.zip"})
	err := stacks.Build(app)
	require.Error(t, err)
	assert.Contains(t, err.Error(), `point context key "paymentsZip" at a zip`)
}

func stackOf(t *testing.T, app awscdk.App, id string) awscdk.Stack {
	t.Helper()
	child := app.Node().TryFindChild(jsii.String(id))
	require.NotNil(t, child, "stack %s", id)
	return awscdk.Stack_Of(child)
}
