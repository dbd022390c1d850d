package stacks

import (
	"fmt"
	"time"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsapigateway"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsapigatewayv2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsapigatewayv2authorizers"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsapigatewayv2integrations"
	"github.com/aws/aws-cdk-go/awscdk/v2/awskms"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambda"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslogs"
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"

	"github.com/lambdaidem/lambdaidem/cdk/lambdaidemcdk"
)

// Defaults of the payments stack.
const (
	// DefaultPaymentsTTL is how long a completed payment key is remembered: the
	// window in which a client may retry a POST with the same Idempotency-Key.
	DefaultPaymentsTTL = 24 * time.Hour
	// PaymentsFunctionTimeout is the payments function's timeout (below the HTTP
	// API's 30-second integration limit).
	PaymentsFunctionTimeout = 10 * time.Second
	// DefaultThrottleRate is the HTTP API stage's steady-state request rate
	// limit (requests per second) across all routes.
	DefaultThrottleRate = 50
	// DefaultThrottleBurst is the HTTP API stage's burst limit (requests).
	DefaultThrottleBurst = 100
)

// AccessLogFormat is the payments API's access log line, JSON (one object
// per request) with HTTP API context variables (API Gateway developer guide,
// Customize HTTP API access logs): who called, which route, the outcome, and
// the integration's error if any. No header or body is logged: the
// Idempotency-Key and the payment stay out of the logs.
const AccessLogFormat = `{"requestId":"$context.requestId","ip":"$context.identity.sourceIp",` +
	`"requestTime":"$context.requestTime","routeKey":"$context.routeKey","status":"$context.status",` +
	`"protocol":"$context.protocol","responseLength":"$context.responseLength",` +
	`"integrationLatency":"$context.integrationLatency","integrationError":"$context.integrationErrorMessage",` +
	`"authorizerError":"$context.authorizer.error"}`

// accessLogSettings is an awsapigatewayv2.IAccessLogSettings.
type accessLogSettings struct {
	destination awsapigatewayv2.IAccessLogDestination
	format      awsapigateway.AccessLogFormat
}

func (a *accessLogSettings) Destination() awsapigatewayv2.IAccessLogDestination { return a.destination }
func (a *accessLogSettings) Format() awsapigateway.AccessLogFormat              { return a.format }

// PaymentsProps configures [NewPaymentsStack].
type PaymentsProps struct {
	// StackProps are passed to the stack (environment, description, tags).
	StackProps awscdk.StackProps
	// CodeZip is the path of the examples/api-gateway zip (a bootstrap binary
	// built for linux/Arch). Required; it must exist.
	CodeZip string
	// Arch is the function's architecture: [ArchARM64] (default, also "") or
	// [ArchAMD64]; anything else is an error.
	Arch string
	// NoHTTPAPI leaves the HTTP API, its routes and its authorizer out: the
	// function is reached through the Lambda Invoke API by the name in the
	// PaymentsFunctionName output (LocalStack's community image has no API
	// Gateway v2). The JWT settings are then only checked, not used.
	NoHTTPAPI bool
	// JWTIssuer and JWTAudience, when both are set, put a JWT authorizer on both
	// routes. Setting only one of them is an error, and so is setting neither
	// unless AllowUnauthenticated: the API writes payments.
	JWTIssuer   string
	JWTAudience []string
	// AllowUnauthenticated deploys the routes without an authorizer
	// (AuthorizationType NONE): anyone who finds the URL can POST payments,
	// limited only by the stage throttling. For a demo in a sandbox account.
	// Default false: no authorizer is an error.
	AllowUnauthenticated bool
	// ThrottleRate and ThrottleBurst are the HTTP API stage's throttling
	// limits. Default [DefaultThrottleRate] requests per second and a burst of
	// [DefaultThrottleBurst].
	ThrottleRate  float64
	ThrottleBurst float64
	// TTL is the idempotency retry horizon. Default [DefaultPaymentsTTL].
	TTL time.Duration
	// DestroyTables makes both tables' removal policy DESTROY and turns their
	// deletion protection off (for throwaway deployments such as LocalStack).
	// Default RETAIN with deletion protection.
	DestroyTables bool
	// Sealing seals stored outcomes under a KMS key of the stack (key
	// rotation on, alias [PaymentsSealingAlias]; retained with the tables
	// unless DestroyTables), bound with [lambdaidemcdk.BindSealing]: the
	// function may generate and decrypt data keys under it only with the
	// Sealer's encryption context. Default false.
	Sealing bool
}

// PaymentsSealingAlias returns the alias of the outcome key of the payments
// stack stackID ([PaymentsProps.Sealing]), by which the function finds the
// key: one per stack, so that copies side by side ([ContextStackSuffix]) do
// not collide.
func PaymentsSealingAlias(stackID string) string { return "alias/" + stackID + "-outcomes" }

// NewPaymentsStack creates the payments stack: an HTTP API with POST /payments
// and GET /payments/{id} routed to the payments function (provided.al2023,
// props.Arch, handler bootstrap) behind a JWT authorizer, with stage
// throttling; the payments table (env PAYMENTS_TABLE; the function may stage
// Puts on it and read it with GetItem), the idempotency table bound with
// [lambdaidemcdk.Table.Bind], and the outputs ApiUrl and PaymentsFunctionName.
// Without a JWT issuer and audience it refuses to build unless
// props.AllowUnauthenticated. With props.NoHTTPAPI there is no HTTP API (nor
// routes, authorizer, throttling, ApiUrl).
func NewPaymentsStack(scope constructs.Construct, id string, props PaymentsProps) (awscdk.Stack, error) {
	if (props.JWTIssuer == "") != (len(props.JWTAudience) == 0) {
		return nil, fmt.Errorf("%s: a JWT authorizer needs both an issuer (jwtIssuer) and an audience (jwtAudience)", id)
	}
	if !props.NoHTTPAPI && props.JWTIssuer == "" && !props.AllowUnauthenticated {
		return nil, fmt.Errorf("%s: the HTTP API would let anyone POST /payments: configure a JWT authorizer "+
			"(-c jwtIssuer=... -c jwtAudience=...) or opt out explicitly (-c %s=true)", id, ContextPublicAPI)
	}
	if props.ThrottleRate < 0 || props.ThrottleBurst < 0 {
		return nil, fmt.Errorf("%s: throttle rate %v and burst %v must not be negative", id, props.ThrottleRate, props.ThrottleBurst)
	}
	rate, burst := props.ThrottleRate, props.ThrottleBurst
	if rate == 0 {
		rate = DefaultThrottleRate
	}
	if burst == 0 {
		burst = DefaultThrottleBurst
	}
	ttl := props.TTL
	if ttl == 0 {
		ttl = DefaultPaymentsTTL
	}
	stack := awscdk.NewStack(scope, jsii.String(id), &props.StackProps)

	fn, idem, err := newPaymentsFunction(stack, "PaymentsFunction", functionProps{
		codeZip:    props.CodeZip,
		contextKey: ContextPaymentsZip,
		arch:       props.Arch,
		invokedBy:  "by the HTTP API, or by the Lambda Invoke API without it",
		timeout:    PaymentsFunctionTimeout,
	}, ttl, props.DestroyTables)
	if err != nil {
		return nil, err
	}
	if err := monitor(stack, idem, PaymentsMetricsService); err != nil {
		return nil, err
	}
	if props.Sealing {
		if err := sealOutcomes(stack, id, fn, props.DestroyTables); err != nil {
			return nil, err
		}
	}

	awscdk.NewCfnOutput(stack, jsii.String("PaymentsFunctionName"), &awscdk.CfnOutputProps{
		Value:       fn.FunctionName(),
		Description: jsii.String("Name of the payments function (for the Lambda Invoke API)"),
	})
	if props.NoHTTPAPI {
		return stack, nil
	}
	api := awsapigatewayv2.NewHttpApi(stack, jsii.String("Api"), &awsapigatewayv2.HttpApiProps{
		ApiName:            jsii.String(id),
		Description:        jsii.String("lambdaidem payments example"),
		CreateDefaultStage: jsii.Bool(false),
	})
	accessLogs := awslogs.NewLogGroup(stack, jsii.String("ApiAccessLogs"), &awslogs.LogGroupProps{
		Retention:     awslogs.RetentionDays_TWO_WEEKS,
		RemovalPolicy: awscdk.RemovalPolicy_DESTROY,
	})
	stage := awsapigatewayv2.NewHttpStage(stack, jsii.String("DefaultStage"), &awsapigatewayv2.HttpStageProps{
		HttpApi:    api,
		StageName:  jsii.String("$default"),
		AutoDeploy: jsii.Bool(true),
		AccessLogSettings: &accessLogSettings{
			destination: awsapigatewayv2.NewLogGroupLogDestination(accessLogs),
			format:      awsapigateway.AccessLogFormat_Custom(jsii.String(AccessLogFormat)),
		},
		Throttle: &awsapigatewayv2.ThrottleSettings{
			RateLimit:  jsii.Number(rate),
			BurstLimit: jsii.Number(burst),
		},
	})
	integration := awsapigatewayv2integrations.NewHttpLambdaIntegration(jsii.String("PaymentsIntegration"), fn, nil)
	var authorizer awsapigatewayv2.IHttpRouteAuthorizer
	if props.JWTIssuer != "" {
		authorizer = awsapigatewayv2authorizers.NewHttpJwtAuthorizer(jsii.String("JwtAuthorizer"),
			jsii.String(props.JWTIssuer), &awsapigatewayv2authorizers.HttpJwtAuthorizerProps{
				JwtAudience: jsii.Strings(props.JWTAudience...),
			})
	}
	api.AddRoutes(&awsapigatewayv2.AddRoutesOptions{
		Path:        jsii.String("/payments"),
		Methods:     &[]awsapigatewayv2.HttpMethod{awsapigatewayv2.HttpMethod_POST},
		Integration: integration,
		Authorizer:  authorizer,
	})
	api.AddRoutes(&awsapigatewayv2.AddRoutesOptions{
		Path:        jsii.String("/payments/{id}"),
		Methods:     &[]awsapigatewayv2.HttpMethod{awsapigatewayv2.HttpMethod_GET},
		Integration: integration,
		Authorizer:  authorizer,
	})

	awscdk.NewCfnOutput(stack, jsii.String("ApiUrl"), &awscdk.CfnOutputProps{
		Value:       stage.Url(),
		Description: jsii.String("Base URL of the payments HTTP API"),
	})
	return stack, nil
}

// newPaymentsFunction creates a function running the payments handler
// (examples/api-gateway/payments, behind any front door) with its payments
// table (env PAYMENTS_TABLE; Puts staged, GetItem) and the idempotency
// table, bound with ttl.
func newPaymentsFunction(stack awscdk.Stack, id string, p functionProps, ttl time.Duration,
	destroy bool) (awslambda.Function, *lambdaidemcdk.Table, error) {
	fn, err := newGoFunction(stack, id, p)
	if err != nil {
		return nil, nil, err
	}
	if _, err := newBusinessTable(stack, "PaymentsTable", fn, businessTable{
		envVar: "PAYMENTS_TABLE",
		reads:  true,                                                 // GET /payments/{id}
		writes: []lambdaidemcdk.StagedWrite{lambdaidemcdk.StagedPut}, // POST /payments stages one Put
	}, destroy); err != nil {
		return nil, nil, err
	}
	idem, err := idempotencyTable(stack, destroy)
	if err != nil {
		return nil, nil, err
	}
	if _, err := idem.Bind(fn, ttl); err != nil {
		return nil, nil, err
	}
	return fn, idem, nil
}

// sealOutcomes creates the stack's outcome key (rotation on, alias
// [PaymentsSealingAlias] of stackID, retained unless destroy) and binds fn to
// it with [lambdaidemcdk.BindSealing].
func sealOutcomes(stack awscdk.Stack, stackID string, fn awslambda.Function, destroy bool) error {
	key := awskms.NewKey(stack, jsii.String("OutcomeKey"), &awskms.KeyProps{
		Description:       jsii.String("Seals the payments function's stored idempotency outcomes"),
		EnableKeyRotation: jsii.Bool(true),
		RemovalPolicy:     removalPolicy(destroy),
		PendingWindow:     awscdk.Duration_Days(jsii.Number(30)),
	})
	alias := key.AddAlias(jsii.String(PaymentsSealingAlias(stackID)))
	_, err := lambdaidemcdk.BindSealing(fn, lambdaidemcdk.SealingProps{Key: alias})
	return err
}
