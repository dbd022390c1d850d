package stacks_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lambdaidem/lambdaidem/cdk/internal/cdktest"
	"github.com/lambdaidem/lambdaidem/cdk/lambdaidemcdk"
	"github.com/lambdaidem/lambdaidem/cdk/stacks"
)

func TestMain(m *testing.M) { cdktest.Main(m) }

var storeActions = []string{"dynamodb:GetItem", "dynamodb:PutItem", "dynamodb:UpdateItem", "dynamodb:DeleteItem"}

// storeEnv is the environment Bind sets for the app's idempotency tables.
func storeEnv(idemID, ttl string) map[string]any {
	return map[string]any{
		"IDEMPOTENCY_TABLE":           cdktest.Ref(idemID),
		"IDEMPOTENCY_TTL":             ttl,
		"IDEMPOTENCY_KEY_ATTR":        "id",
		"IDEMPOTENCY_EXPIRATION_ATTR": "expiration",
	}
}

func with(m map[string]any, k string, v any) map[string]any { m[k] = v; return m }

func newPayments(t *testing.T, props stacks.PaymentsProps) *cdktest.Template {
	t.Helper()
	if props.CodeZip == "" {
		props.CodeZip = cdktest.DummyZip(t)
	}
	stack, err := stacks.NewPaymentsStack(cdktest.NewApp(t, nil), "payments", props)
	require.NoError(t, err)
	return cdktest.Synth(t, stack)
}

func newOrders(t *testing.T, props stacks.OrdersProps) *cdktest.Template {
	t.Helper()
	if props.CodeZip == "" {
		props.CodeZip = cdktest.DummyZip(t)
	}
	stack, err := stacks.NewOrdersStack(cdktest.NewApp(t, nil), "orders", props)
	require.NoError(t, err)
	return cdktest.Synth(t, stack)
}

func TestPaymentsStack(t *testing.T) {
	tmpl := newPayments(t, stacks.PaymentsProps{AllowUnauthenticated: true})

	payments := tmpl.One(t, "AWS::DynamoDB::Table", "PaymentsTable")
	idem := tmpl.One(t, "AWS::DynamoDB::Table", "IdempotencyTable")
	assertTable(t, payments, "")
	assertTable(t, idem, "expiration")

	fn := tmpl.One(t, "AWS::Lambda::Function", "PaymentsFunction")
	assertGoFunction(t, fn, 10)
	assert.Equal(t, with(storeEnv(idem.LogicalID, "24h0m0s"), "PAYMENTS_TABLE", cdktest.Ref(payments.LogicalID)),
		fn.Properties["Environment"].(map[string]any)["Variables"])

	assert.ElementsMatch(t, []cdktest.Statement{
		{Effect: "Allow", Actions: []string{"dynamodb:PutItem"}, Resources: []any{cdktest.GetAtt(payments.LogicalID, "Arn")}},
		{Effect: "Allow", Actions: []string{"dynamodb:GetItem"}, Resources: []any{cdktest.GetAtt(payments.LogicalID, "Arn")}},
		{Effect: "Allow", Actions: storeActions, Resources: []any{cdktest.GetAtt(idem.LogicalID, "Arn")}},
		logsStatement(t, tmpl, "PaymentsFunction"), xrayStatement,
	}, tmpl.Statements(), "the staged Put, the GET route's GetItem, the store's actions, its logs, X-Ray")
	assertNoWildcards(t, tmpl)

	routes := map[string]string{}
	for _, r := range tmpl.OfType("AWS::ApiGatewayV2::Route") {
		routes[r.Properties["RouteKey"].(string)] = r.Properties["AuthorizationType"].(string)
	}
	assert.Equal(t, map[string]string{"POST /payments": "NONE", "GET /payments/{id}": "NONE"}, routes)
	assert.Empty(t, tmpl.OfType("AWS::ApiGatewayV2::Authorizer"), "no authorizer unless configured")
	integration := tmpl.One(t, "AWS::ApiGatewayV2::Integration", "Api")
	assert.Equal(t, cdktest.GetAtt(fn.LogicalID, "Arn"), integration.Properties["IntegrationUri"])
	assert.Equal(t, "2.0", integration.Properties["PayloadFormatVersion"])
	stage := tmpl.One(t, "AWS::ApiGatewayV2::Stage", "DefaultStage").Properties
	assert.Equal(t, "$default", stage["StageName"])
	assert.Equal(t, true, stage["AutoDeploy"])
	assert.Equal(t, map[string]any{"ThrottlingRateLimit": float64(50), "ThrottlingBurstLimit": float64(100)},
		stage["DefaultRouteSettings"], "stage throttling by default")

	assert.Equal(t, []string{"ApiUrl", "PaymentsFunctionName"}, tmpl.Outputs())
	assert.Equal(t, cdktest.Ref(fn.LogicalID), tmpl.Output(t, "PaymentsFunctionName"))
}

// With sealing on, the function may use the stack's outcome key exactly as
// kmsseal does (lambdaidemcdk.BindSealing) and finds it by its alias.
func TestPaymentsStackWithSealing(t *testing.T) {
	tmpl := newPayments(t, stacks.PaymentsProps{AllowUnauthenticated: true, Sealing: true})
	key := tmpl.One(t, "AWS::KMS::Key", "OutcomeKey")
	assert.Equal(t, true, key.Properties["EnableKeyRotation"])
	assert.Equal(t, "Retain", key.DeletionPolicy, "outcomes stay readable while the table is kept")
	alias := tmpl.One(t, "AWS::KMS::Alias", "OutcomeKey")
	assert.Equal(t, "alias/payments-outcomes", alias.Properties["AliasName"])

	payments := tmpl.One(t, "AWS::DynamoDB::Table", "PaymentsTable")
	idem := tmpl.One(t, "AWS::DynamoDB::Table", "IdempotencyTable")
	keyArn := cdktest.GetAtt(key.LogicalID, "Arn")
	purpose := map[string]any{"StringEquals": map[string]any{"kms:EncryptionContext:purpose": "lambdaidem-outcome"}}
	assert.ElementsMatch(t, []cdktest.Statement{
		{Effect: "Allow", Actions: []string{"dynamodb:PutItem"}, Resources: []any{cdktest.GetAtt(payments.LogicalID, "Arn")}},
		{Effect: "Allow", Actions: []string{"dynamodb:GetItem"}, Resources: []any{cdktest.GetAtt(payments.LogicalID, "Arn")}},
		{Effect: "Allow", Actions: storeActions, Resources: []any{cdktest.GetAtt(idem.LogicalID, "Arn")}},
		{Effect: "Allow", Actions: []string{"kms:GenerateDataKey"}, Resources: []any{keyArn}, Condition: purpose},
		{Effect: "Allow", Actions: []string{"kms:Decrypt"}, Resources: []any{keyArn}, Condition: purpose},
		{Effect: "Allow", Actions: []string{"kms:DescribeKey"}, Resources: []any{keyArn}},
		logsStatement(t, tmpl, "PaymentsFunction"), xrayStatement,
	}, tmpl.Statements())
	assertNoWildcards(t, tmpl)
	vars := tmpl.One(t, "AWS::Lambda::Function", "PaymentsFunction").Properties["Environment"].(map[string]any)["Variables"].(map[string]any)
	assert.Equal(t, "alias/payments-outcomes", vars["IDEMPOTENCY_SEAL_KEY"])
	assert.Equal(t, `{"purpose":"lambdaidem-outcome"}`, vars["IDEMPOTENCY_SEAL_CONTEXT"])

	plain := newPayments(t, stacks.PaymentsProps{AllowUnauthenticated: true})
	assert.Empty(t, plain.OfType("AWS::KMS::Key"), "no key unless sealing is on")
}

func TestPaymentsStackRefusesAPublicAPIUnlessOptedOut(t *testing.T) {
	_, err := stacks.NewPaymentsStack(cdktest.NewApp(t, nil), "payments", stacks.PaymentsProps{CodeZip: cdktest.DummyZip(t)})
	assert.EqualError(t, err, "payments: the HTTP API would let anyone POST /payments: configure a JWT authorizer "+
		"(-c jwtIssuer=... -c jwtAudience=...) or opt out explicitly (-c publicApi=true)")

	tmpl := newPayments(t, stacks.PaymentsProps{AllowUnauthenticated: true, ThrottleRate: 5, ThrottleBurst: 10})
	assert.Equal(t, map[string]any{"ThrottlingRateLimit": float64(5), "ThrottlingBurstLimit": float64(10)},
		tmpl.One(t, "AWS::ApiGatewayV2::Stage", "DefaultStage").Properties["DefaultRouteSettings"])

	_, err = stacks.NewPaymentsStack(cdktest.NewApp(t, nil), "payments", stacks.PaymentsProps{
		CodeZip: cdktest.DummyZip(t), AllowUnauthenticated: true, ThrottleRate: -1})
	assert.EqualError(t, err, "payments: throttle rate -1 and burst 0 must not be negative")
}

func TestPaymentsStackWithoutHTTPAPI(t *testing.T) {
	tmpl := newPayments(t, stacks.PaymentsProps{NoHTTPAPI: true})
	fn := tmpl.One(t, "AWS::Lambda::Function", "PaymentsFunction")
	assertGoFunction(t, fn, 10)
	for _, r := range tmpl.Resources {
		assert.NotContains(t, r.Type, "AWS::ApiGatewayV2::", r.LogicalID)
	}
	assert.Empty(t, tmpl.OfType("AWS::ApiGatewayV2::Api"))
	assert.Len(t, tmpl.OfType("AWS::DynamoDB::Table"), 2, "the tables stay")
	assert.Equal(t, []string{"PaymentsFunctionName"}, tmpl.Outputs(), "no ApiUrl")
	assert.Equal(t, cdktest.Ref(fn.LogicalID), tmpl.Output(t, "PaymentsFunctionName"))
}

func TestStacksArchitecture(t *testing.T) {
	for arch, want := range map[string]string{"": "arm64", "arm64": "arm64", "amd64": "x86_64"} {
		t.Run("arch="+arch, func(t *testing.T) {
			payments := newPayments(t, stacks.PaymentsProps{Arch: arch, AllowUnauthenticated: true})
			assert.Equal(t, []any{want}, payments.One(t, "AWS::Lambda::Function", "PaymentsFunction").Properties["Architectures"])
			orders := newOrders(t, stacks.OrdersProps{Arch: arch})
			assert.Equal(t, []any{want}, orders.One(t, "AWS::Lambda::Function", "OrdersFunction").Properties["Architectures"])
		})
	}
	_, err := stacks.NewPaymentsStack(cdktest.NewApp(t, nil), "payments", stacks.PaymentsProps{CodeZip: cdktest.DummyZip(t), Arch: "x86", AllowUnauthenticated: true})
	assert.EqualError(t, err, `PaymentsFunction: architecture "x86": want "arm64" or "amd64" (context key "arch")`)
	_, err = stacks.NewOrdersStack(cdktest.NewApp(t, nil), "orders", stacks.OrdersProps{CodeZip: cdktest.DummyZip(t), Arch: "x86"})
	assert.EqualError(t, err, `OrdersFunction: architecture "x86": want "arm64" or "amd64" (context key "arch")`)
}

func TestPaymentsStackTTL(t *testing.T) {
	tmpl := newPayments(t, stacks.PaymentsProps{TTL: 72 * time.Hour, AllowUnauthenticated: true})
	vars := tmpl.One(t, "AWS::Lambda::Function", "PaymentsFunction").Properties["Environment"].(map[string]any)["Variables"]
	assert.Equal(t, "72h0m0s", vars.(map[string]any)["IDEMPOTENCY_TTL"])
}

func TestPaymentsStackJWTAuthorizer(t *testing.T) {
	tests := []struct {
		name     string
		issuer   string
		audience []string
		wantJWT  bool
		wantErr  string
	}{
		{name: "not configured, opted out", wantJWT: false},
		{name: "issuer and audience", issuer: "https://issuer.example.com/", audience: []string{"payments", "admin"}, wantJWT: true},
		{name: "issuer alone", issuer: "https://issuer.example.com/", wantErr: "payments: a JWT authorizer needs both an issuer (jwtIssuer) and an audience (jwtAudience)"},
		{name: "audience alone", audience: []string{"payments"}, wantErr: "payments: a JWT authorizer needs both an issuer (jwtIssuer) and an audience (jwtAudience)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			props := stacks.PaymentsProps{CodeZip: cdktest.DummyZip(t), JWTIssuer: tt.issuer, JWTAudience: tt.audience,
				AllowUnauthenticated: !tt.wantJWT}
			stack, err := stacks.NewPaymentsStack(cdktest.NewApp(t, nil), "payments", props)
			if tt.wantErr != "" {
				require.EqualError(t, err, tt.wantErr)
				return
			}
			require.NoError(t, err)
			tmpl := cdktest.Synth(t, stack)

			authorizers := tmpl.OfType("AWS::ApiGatewayV2::Authorizer")
			routes := tmpl.OfType("AWS::ApiGatewayV2::Route")
			require.Len(t, routes, 2)
			if !tt.wantJWT {
				assert.Empty(t, authorizers)
				for _, r := range routes {
					assert.Equal(t, "NONE", r.Properties["AuthorizationType"])
				}
				return
			}
			require.Len(t, authorizers, 1)
			a := authorizers[0]
			assert.Equal(t, "JWT", a.Properties["AuthorizerType"])
			assert.Equal(t, map[string]any{
				"Issuer":   tt.issuer,
				"Audience": []any{"payments", "admin"},
			}, a.Properties["JwtConfiguration"])
			for _, r := range routes {
				assert.Equal(t, "JWT", r.Properties["AuthorizationType"], r.Properties["RouteKey"])
				assert.Equal(t, cdktest.Ref(a.LogicalID), r.Properties["AuthorizerId"], r.Properties["RouteKey"])
			}
		})
	}
}

func TestOrdersStack(t *testing.T) {
	tmpl := newOrders(t, stacks.OrdersProps{})

	orders := tmpl.One(t, "AWS::DynamoDB::Table", "OrdersTable")
	idem := tmpl.One(t, "AWS::DynamoDB::Table", "IdempotencyTable")
	assertTable(t, orders, "")
	assertTable(t, idem, "expiration")

	fn := tmpl.One(t, "AWS::Lambda::Function", "OrdersFunction")
	assertGoFunction(t, fn, 30)
	assert.Equal(t, with(storeEnv(idem.LogicalID, "96h0m0s" /* the queue's 4-day retention */), "ORDERS_TABLE", cdktest.Ref(orders.LogicalID)),
		fn.Properties["Environment"].(map[string]any)["Variables"])

	queue := tmpl.One(t, "AWS::SQS::Queue", "OrdersQueue")
	dlq := tmpl.One(t, "AWS::SQS::Queue", "OrdersDeadLetterQueue")
	assert.Equal(t, float64(180), queue.Properties["VisibilityTimeout"], "6 × the 30 s function timeout")
	assert.Equal(t, float64(5), queue.Properties["RedrivePolicy"].(map[string]any)["maxReceiveCount"], "AWS's guidance: at least 5")
	assert.Equal(t, cdktest.GetAtt(dlq.LogicalID, "Arn"), queue.Properties["RedrivePolicy"].(map[string]any)["deadLetterTargetArn"])

	mapping := tmpl.One(t, "AWS::Lambda::EventSourceMapping", "OrdersFunction")
	assert.Equal(t, []any{"ReportBatchItemFailures"}, mapping.Properties["FunctionResponseTypes"])
	assert.Equal(t, cdktest.GetAtt(queue.LogicalID, "Arn"), mapping.Properties["EventSourceArn"])

	assert.ElementsMatch(t, []cdktest.Statement{
		{Effect: "Allow", Actions: []string{"dynamodb:PutItem"}, Resources: []any{cdktest.GetAtt(orders.LogicalID, "Arn")}},
		{Effect: "Allow", Actions: storeActions, Resources: []any{cdktest.GetAtt(idem.LogicalID, "Arn")}},
		{
			Effect: "Allow",
			Actions: []string{"sqs:ReceiveMessage", "sqs:ChangeMessageVisibility", "sqs:GetQueueUrl",
				"sqs:DeleteMessage", "sqs:GetQueueAttributes"},
			Resources: []any{cdktest.GetAtt(queue.LogicalID, "Arn")},
		},
		logsStatement(t, tmpl, "OrdersFunction"), xrayStatement,
	}, tmpl.Statements())
	assertNoWildcards(t, tmpl)

	assert.Equal(t, []string{"DlqUrl", "OrdersFunctionName", "QueueUrl"}, tmpl.Outputs())
	assert.Equal(t, cdktest.Ref(fn.LogicalID), tmpl.Output(t, "OrdersFunctionName"))
}

func TestOrdersStackRefusesUnsafeQueueSettings(t *testing.T) {
	tests := map[string]struct {
		queue lambdaidemcdk.QueueSourceProps
		want  error
	}{
		"visibility timeout below 6 × 30 s": {lambdaidemcdk.QueueSourceProps{VisibilityTimeout: 2 * time.Minute}, lambdaidemcdk.ErrVisibilityTimeoutTooShort},
		"TTL below the 4-day retention":     {lambdaidemcdk.QueueSourceProps{TTL: 24 * time.Hour}, lambdaidemcdk.ErrTTLShorterThanHorizon},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			_, err := stacks.NewOrdersStack(cdktest.NewApp(t, nil), "orders",
				stacks.OrdersProps{CodeZip: cdktest.DummyZip(t), Queue: tt.queue})
			assert.ErrorIs(t, err, tt.want)
		})
	}
}

func TestStacksRefuseAMissingZip(t *testing.T) {
	missing := t.TempDir() + "/nope.zip"
	_, err := stacks.NewPaymentsStack(cdktest.NewApp(t, nil), "payments", stacks.PaymentsProps{CodeZip: missing, NoHTTPAPI: true})
	assert.EqualError(t, err, "PaymentsFunction: code zip "+missing+
		` is missing: build the examples first (make build) or point context key "paymentsZip" at a zip`)
	_, err = stacks.NewOrdersStack(cdktest.NewApp(t, nil), "orders", stacks.OrdersProps{CodeZip: missing})
	assert.EqualError(t, err, "OrdersFunction: code zip "+missing+
		` is missing: build the examples first (make build) or point context key "ordersZip" at a zip`)
}

func TestDestroyTables(t *testing.T) {
	tmpl := newOrders(t, stacks.OrdersProps{DestroyTables: true})
	for _, table := range tmpl.OfType("AWS::DynamoDB::Table") {
		assert.Equal(t, "Delete", table.DeletionPolicy, table.LogicalID)
		assert.Equal(t, false, table.Properties["DeletionProtectionEnabled"], table.LogicalID)
	}
}

// assertTable checks the shape every table of the app shares: partition key "id"
// (String), on-demand, point-in-time recovery, retained; and its TTL attribute,
// if any.
func assertTable(t *testing.T, table cdktest.Resource, ttl string) {
	t.Helper()
	p := table.Properties
	assert.Equal(t, []any{map[string]any{"AttributeName": "id", "KeyType": "HASH"}}, p["KeySchema"], table.LogicalID)
	assert.Equal(t, []any{map[string]any{"AttributeName": "id", "AttributeType": "S"}}, p["AttributeDefinitions"], table.LogicalID)
	assert.Equal(t, "PAY_PER_REQUEST", p["BillingMode"], table.LogicalID)
	assert.Equal(t, map[string]any{"PointInTimeRecoveryEnabled": true}, p["PointInTimeRecoverySpecification"], table.LogicalID)
	assert.Equal(t, "Retain", table.DeletionPolicy, table.LogicalID)
	assert.Equal(t, true, p["DeletionProtectionEnabled"], table.LogicalID)
	if ttl == "" {
		assert.NotContains(t, p, "TimeToLiveSpecification", table.LogicalID)
	} else {
		assert.Equal(t, map[string]any{"AttributeName": ttl, "Enabled": true}, p["TimeToLiveSpecification"], table.LogicalID)
	}
}

// assertGoFunction checks the runtime settings of an example function.
func assertGoFunction(t *testing.T, fn cdktest.Resource, timeoutSeconds float64) {
	t.Helper()
	p := fn.Properties
	assert.Equal(t, "provided.al2023", p["Runtime"])
	assert.Equal(t, []any{"arm64"}, p["Architectures"])
	assert.Equal(t, "bootstrap", p["Handler"])
	assert.Equal(t, timeoutSeconds, p["Timeout"])
	assert.Equal(t, map[string]any{"Mode": "Active"}, p["TracingConfig"], "X-Ray active tracing")
}

// logsStatement is what the role of the example function id may do with
// logs: write to the function's own log group, nothing else (CDK's default
// role would carry AWSLambdaBasicExecutionRole: every log group).
func logsStatement(t *testing.T, tmpl *cdktest.Template, id string) cdktest.Statement {
	t.Helper()
	logs := tmpl.One(t, "AWS::Logs::LogGroup", id+"Logs")
	return cdktest.Statement{Effect: "Allow", Actions: []string{"logs:CreateLogStream", "logs:PutLogEvents"},
		Resources: []any{cdktest.GetAtt(logs.LogicalID, "Arn")}}
}

// xrayStatement is active tracing's permission: X-Ray's two actions support
// no resource-level permissions, so the resource is "*".
var xrayStatement = cdktest.Statement{Effect: "Allow",
	Actions: []string{"xray:PutTraceSegments", "xray:PutTelemetryRecords"}, Resources: []any{"*"}}

// assertNoWildcards fails unless every IAM policy statement names its actions
// and resources, but X-Ray's, which must be alone in a policy of its own
// (the one the cdk-nag suppression for its "*" covers), and the actions
// listed in starOK, which take no resource (a statement of only those may
// name "*"); and no role carries a managed policy.
func assertNoWildcards(t *testing.T, tmpl *cdktest.Template, starOK ...string) {
	t.Helper()
	for _, p := range tmpl.OfType("AWS::IAM::Policy") {
		stmts := cdktest.PolicyStatements(p)
		for _, st := range stmts {
			assert.NotContains(t, st.Actions, "*", p.LogicalID)
			assert.NotContains(t, st.Actions, "dynamodb:*", p.LogicalID)
			if st.Equal(xrayStatement) {
				assert.Len(t, stmts, 1, "%s: X-Ray's statement is alone in its policy", p.LogicalID)
				assert.Contains(t, p.LogicalID, "Tracing")
				continue
			}
			if len(st.Actions) > 0 && allIn(st.Actions, starOK) {
				continue
			}
			assert.NotContains(t, st.Resources, "*", p.LogicalID)
		}
	}
	for _, r := range tmpl.OfType("AWS::IAM::Role") {
		assert.NotContains(t, r.Properties, "ManagedPolicyArns", r.LogicalID)
	}
}

func allIn(xs, set []string) bool {
	for _, x := range xs {
		found := false
		for _, s := range set {
			found = found || x == s
		}
		if !found {
			return false
		}
	}
	return true
}
