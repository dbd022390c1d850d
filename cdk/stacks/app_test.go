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
			want: stacks.Config{
				PaymentsZip: "../build/api-gateway-arm64.zip", OrdersZip: "../build/sqs-arm64.zip",
				Arch: "arm64", HTTPAPI: true,
			},
		},
		{
			name: "every key, as the CLI's -c passes them (strings)",
			context: map[string]any{
				"paymentsZip": "/tmp/p.zip", "ordersZip": "/tmp/o.zip",
				"jwtIssuer": "https://issuer.example.com/", "jwtAudience": "payments, admin",
				"paymentsTtl": "48h", "destroyTables": "true", "arch": "amd64", "httpApi": "false", "publicApi": "true",
				"stackSuffix": "-v1a2b", "verifyStack": "true",
				"sealing": "true",
			},
			want: stacks.Config{
				PaymentsZip: "/tmp/p.zip", OrdersZip: "/tmp/o.zip",
				JWTIssuer: "https://issuer.example.com/", JWTAudience: []string{"payments", "admin"},
				PaymentsTTL: 48 * time.Hour, DestroyTables: true, Arch: "amd64", HTTPAPI: false, PublicAPI: true,
				StackSuffix: "-v1a2b", VerifyStack: true,
				Sealing: true,
			},
		},
		{
			name:    "arch amd64 picks the amd64 zips make build writes",
			context: map[string]any{"arch": "amd64"},
			want: stacks.Config{
				PaymentsZip: "../build/api-gateway-amd64.zip", OrdersZip: "../build/sqs-amd64.zip",
				Arch: "amd64", HTTPAPI: true,
			},
		},
		{
			name:    "arch arm64 explicitly",
			context: map[string]any{"arch": "arm64", "httpApi": true},
			want: stacks.Config{
				PaymentsZip: "../build/api-gateway-arm64.zip", OrdersZip: "../build/sqs-arm64.zip",
				Arch: "arm64", HTTPAPI: true,
			},
		},
		{
			name:    "an unknown arch",
			context: map[string]any{"arch": "x86_64"},
			wantErr: `context "arch": architecture "x86_64": want "arm64" or "amd64"`,
		},
		{
			name:    "httpApi that is not a boolean",
			context: map[string]any{"httpApi": "no"},
			wantErr: `context "httpApi": strconv.ParseBool: parsing "no": invalid syntax`,
		},
		{
			name:    "audience as a JSON list and a boolean, as cdk.json holds them",
			context: map[string]any{"jwtAudience": []any{"payments"}, "destroyTables": false, "httpApi": false},
			want: stacks.Config{
				PaymentsZip: "../build/api-gateway-arm64.zip", OrdersZip: "../build/sqs-arm64.zip",
				JWTAudience: []string{"payments"}, Arch: "arm64",
			},
		},
		{
			name:    "a stack suffix that is not one",
			context: map[string]any{"stackSuffix": "v1/../x"},
			wantErr: `context "stackSuffix": "v1/../x": want a hyphen, then at most 23 letters, digits or hyphens`,
		},
		{
			name:    "verifyStack that is not a boolean",
			context: map[string]any{"verifyStack": "maybe"},
			wantErr: `context "verifyStack": strconv.ParseBool: parsing "maybe": invalid syntax`,
		},
		{
			name:    "publicApi that is not a boolean",
			context: map[string]any{"publicApi": "yes please"},
			wantErr: `context "publicApi": strconv.ParseBool: parsing "yes please": invalid syntax`,
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
	assert.Equal(t, []string{"ApiUrl", "PaymentsFunctionName"}, payments.Outputs())
	assert.Equal(t, []any{"arm64"}, payments.One(t, "AWS::Lambda::Function", "PaymentsFunction").Properties["Architectures"])

	orders := cdktest.Synth(t, stackOf(t, app, "lambdaidem-orders"))
	assert.Equal(t, []string{"DlqUrl", "OrdersFunctionName", "QueueUrl"}, orders.Outputs())

	assembly := app.Synth(nil)
	names := []string{}
	for _, s := range *assembly.Stacks() {
		names = append(names, *s.StackName())
	}
	assert.ElementsMatch(t, []string{"lambdaidem-payments", "lambdaidem-orders"}, names)
}

func TestBuildAppliesArchAndHTTPAPIFromContext(t *testing.T) {
	tests := []struct {
		name     string
		context  map[string]any
		wantArch string
		wantAPI  bool
	}{
		{name: "defaults (a public API, opted out)", context: map[string]any{"publicApi": "true"}, wantArch: "arm64", wantAPI: true},
		{name: "arch arm64", context: map[string]any{"arch": "arm64", "publicApi": true}, wantArch: "arm64", wantAPI: true},
		{name: "arch amd64 (x86_64)", context: map[string]any{"arch": "amd64", "publicApi": "true"}, wantArch: "x86_64", wantAPI: true},
		{
			name:     "LocalStack's: amd64 and no HTTP API, even with a JWT authorizer configured",
			context:  map[string]any{"arch": "amd64", "httpApi": "false", "jwtIssuer": "https://issuer.example.com/", "jwtAudience": "payments"},
			wantArch: "x86_64", wantAPI: false,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			zip := cdktest.DummyZip(t)
			tt.context["paymentsZip"], tt.context["ordersZip"] = zip, zip
			app := cdktest.NewApp(t, tt.context)
			require.NoError(t, stacks.Build(app))
			payments := cdktest.Synth(t, stackOf(t, app, "lambdaidem-payments"))
			orders := cdktest.Synth(t, stackOf(t, app, "lambdaidem-orders"))

			for _, fn := range []cdktest.Resource{
				payments.One(t, "AWS::Lambda::Function", "PaymentsFunction"),
				orders.One(t, "AWS::Lambda::Function", "OrdersFunction"),
			} {
				assert.Equal(t, []any{tt.wantArch}, fn.Properties["Architectures"], fn.LogicalID)
			}
			fn := payments.One(t, "AWS::Lambda::Function", "PaymentsFunction")
			assert.Equal(t, cdktest.Ref(fn.LogicalID), payments.Output(t, "PaymentsFunctionName"))
			ofn := orders.One(t, "AWS::Lambda::Function", "OrdersFunction")
			assert.Equal(t, cdktest.Ref(ofn.LogicalID), orders.Output(t, "OrdersFunctionName"))
			assert.Equal(t, []string{"DlqUrl", "OrdersFunctionName", "QueueUrl"}, orders.Outputs())

			if tt.wantAPI {
				assert.Len(t, payments.OfType("AWS::ApiGatewayV2::Api"), 1)
				assert.Equal(t, []string{"ApiUrl", "PaymentsFunctionName"}, payments.Outputs())
				return
			}
			for _, r := range payments.Resources {
				assert.NotContains(t, r.Type, "AWS::ApiGatewayV2::", r.LogicalID)
			}
			assert.Empty(t, payments.OfType("AWS::ApiGatewayV2::Api"))
			assert.Empty(t, payments.OfType("AWS::Lambda::Permission"), "no API to allow invoking the function")
			assert.Equal(t, []string{"PaymentsFunctionName"}, payments.Outputs(), "no ApiUrl")
		})
	}
}

// make deploy without JWT settings: refused, saying how to fix it.
func TestBuildRefusesAPublicPaymentsAPIByDefault(t *testing.T) {
	zip := cdktest.DummyZip(t)
	app := cdktest.NewApp(t, map[string]any{"paymentsZip": zip, "ordersZip": zip})
	err := stacks.Build(app)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "-c publicApi=true")
}

func TestBuildRefusesAnUnknownArch(t *testing.T) {
	zip := cdktest.DummyZip(t)
	app := cdktest.NewApp(t, map[string]any{"paymentsZip": zip, "ordersZip": zip, "arch": "x86_64"})
	assert.EqualError(t, stacks.Build(app), `context "arch": architecture "x86_64": want "arm64" or "amd64"`)
}

func TestBuildReportsAMissingZip(t *testing.T) {
	app := cdktest.NewApp(t, map[string]any{"paymentsZip": t.TempDir() + "/missing.zip", "publicApi": "true"})
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
