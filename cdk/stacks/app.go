package stacks

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/constructs-go/constructs/v10"
)

// Context keys read by [ConfigFromContext]. Pass them with the CDK CLI's
// `-c key=value`, in cdk.json's "context", or to `go run .` as `-c key=value`.
const (
	// ContextPaymentsZip overrides the payments function's zip path.
	ContextPaymentsZip = "paymentsZip"
	// ContextOrdersZip overrides the orders function's zip path.
	ContextOrdersZip = "ordersZip"
	// ContextRelayZip is the outbox relay's zip (examples/relay): set, the
	// orders stack publishes "order accepted" events through the outbox
	// (see [OrdersProps.RelayZip]). Default: no outbox.
	ContextRelayZip = "relayZip"
	// ContextLedgerZip is the stream example's zip (examples/stream): set,
	// the app adds the ledger stack ([NewLedgerStack]). Default: none.
	ContextLedgerZip = "ledgerZip"
	// ContextFunctionURLZip is the net/http example's zip
	// (examples/function-url): set, the app adds the Function URL stack
	// ([NewFunctionURLStack]). Default: none.
	ContextFunctionURLZip = "functionUrlZip"
	// ContextJWTIssuer is the JWT authorizer's issuer URL.
	ContextJWTIssuer = "jwtIssuer"
	// ContextJWTAudience is the JWT authorizer's audience: a comma-separated
	// string or a JSON list of strings.
	ContextJWTAudience = "jwtAudience"
	// ContextPaymentsTTL is the payments retry horizon, a Go duration ("48h").
	ContextPaymentsTTL = "paymentsTtl"
	// ContextDestroyTables, "true", gives every table RemovalPolicy DESTROY.
	ContextDestroyTables = "destroyTables"
	// ContextArch is both functions' architecture: "arm64" (default) or
	// "amd64" (Lambda's x86_64). It also picks the default zips.
	ContextArch = "arch"
	// ContextHTTPAPI, "false", leaves the HTTP API (its routes and JWT
	// authorizer) out of the payments stack: the function is then reached
	// through the Lambda Invoke API (output PaymentsFunctionName), as on
	// LocalStack's community image, which has no API Gateway v2. Default true.
	ContextHTTPAPI = "httpApi"
	// ContextPublicAPI, "true", deploys the payments routes without an
	// authorizer when no JWT issuer is configured (see
	// [PaymentsProps.AllowUnauthenticated]). Default false: refused.
	ContextPublicAPI = "publicApi"
	// ContextStackSuffix is appended to every stack's id and name, so that
	// several copies of the app live side by side in one account and Region
	// (`make aws-verify` deploys its run as "-<run id>"): letters, digits and
	// hyphens, at most 24 characters, starting with a hyphen. Default none.
	ContextStackSuffix = "stackSuffix"
	// ContextVerifyStack, "true", adds the stack of the tables `make
	// aws-verify`'s checks run on ([NewVerifyStack]). Default false.
	ContextVerifyStack = "verifyStack"
	// ContextSealing, "true", seals the payments functions' stored outcomes
	// (the HTTP API's and the Function URL's) under a KMS key of their stack
	// (see [PaymentsProps.Sealing]). Default false.
	ContextSealing = "sealing"
)

// Defaults of [Config], relative to the cdk/ folder (the app's working
// directory): the zips `make build` writes, for the default architecture
// [ArchARM64]. With [ContextArch] amd64 the defaults are the -amd64 zips
// (see [DefaultZips]).
const (
	DefaultPaymentsZip = "../build/api-gateway-arm64.zip"
	DefaultOrdersZip   = "../build/sqs-arm64.zip"
)

// DefaultZips returns the zips `make build ARCHES=<arch>` writes for the
// payments and orders functions, relative to the cdk/ folder.
func DefaultZips(arch string) (payments, orders string) {
	if arch == "" {
		arch = ArchARM64
	}
	return "../build/api-gateway-" + arch + ".zip", "../build/sqs-" + arch + ".zip"
}

// Stack ids (and CloudFormation stack names) of the app.
const (
	PaymentsStackID = "lambdaidem-payments"
	OrdersStackID   = "lambdaidem-orders"
	VerifyStackID   = "lambdaidem-verify"
)

// Config is the app's configuration, read from the CDK context.
type Config struct {
	// PaymentsZip is the payments function's zip ([ContextPaymentsZip]).
	PaymentsZip string
	// OrdersZip is the orders function's zip ([ContextOrdersZip]).
	OrdersZip string
	// RelayZip is the outbox relay's zip ([ContextRelayZip]); "" for none.
	RelayZip string
	// LedgerZip is the stream example's zip ([ContextLedgerZip]); "" for
	// no ledger stack.
	LedgerZip string
	// FunctionURLZip is the net/http example's zip ([ContextFunctionURLZip]);
	// "" for no Function URL stack.
	FunctionURLZip string
	// JWTIssuer is the JWT authorizer's issuer ([ContextJWTIssuer]).
	JWTIssuer string
	// JWTAudience is the JWT authorizer's audience ([ContextJWTAudience]).
	JWTAudience []string
	// PaymentsTTL is the payments retry horizon ([ContextPaymentsTTL]); zero
	// means [DefaultPaymentsTTL].
	PaymentsTTL time.Duration
	// DestroyTables gives every table RemovalPolicy DESTROY
	// ([ContextDestroyTables]).
	DestroyTables bool
	// Arch is both functions' architecture ([ContextArch]): [ArchARM64]
	// (default) or [ArchAMD64].
	Arch string
	// HTTPAPI puts the HTTP API in the payments stack ([ContextHTTPAPI]);
	// default true.
	HTTPAPI bool
	// PublicAPI allows the payments routes without an authorizer
	// ([ContextPublicAPI]); default false.
	PublicAPI bool
	// StackSuffix is appended to every stack id ([ContextStackSuffix]).
	StackSuffix string
	// VerifyStack adds the verify stack ([ContextVerifyStack]).
	VerifyStack bool
	// Sealing seals the payments outcomes under a KMS key
	// ([ContextSealing]); default false.
	Sealing bool
}

// stackSuffix is what [ContextStackSuffix] accepts.
var stackSuffix = regexp.MustCompile(`^-[A-Za-z0-9-]{1,23}$`)

// ConfigFromContext reads [Config] from node's context, applying the defaults.
func ConfigFromContext(node constructs.Node) (Config, error) {
	c := Config{Arch: ArchARM64, HTTPAPI: true}
	str := func(key string) (string, error) {
		switch v := node.TryGetContext(&key).(type) {
		case nil:
			return "", nil
		case string:
			return strings.TrimSpace(v), nil
		case bool:
			return strconv.FormatBool(v), nil
		default:
			return "", fmt.Errorf("context %q: want a string, got %T", key, v)
		}
	}
	arch, err := str(ContextArch)
	if err != nil {
		return c, err
	}
	if arch != "" {
		if _, err := lambdaArchitecture(arch); err != nil {
			return c, fmt.Errorf("context %q: %w", ContextArch, err)
		}
		c.Arch = arch
	}
	c.PaymentsZip, c.OrdersZip = DefaultZips(c.Arch)
	for key, dst := range map[string]*string{ContextPaymentsZip: &c.PaymentsZip, ContextOrdersZip: &c.OrdersZip, ContextRelayZip: &c.RelayZip,
		ContextLedgerZip: &c.LedgerZip, ContextFunctionURLZip: &c.FunctionURLZip} {
		s, err := str(key)
		if err != nil {
			return c, err
		}
		if s != "" {
			*dst = s
		}
	}
	if c.JWTIssuer, err = str(ContextJWTIssuer); err != nil {
		return c, err
	}
	key := ContextJWTAudience
	switch v := node.TryGetContext(&key).(type) {
	case nil:
	case string:
		for _, a := range strings.Split(v, ",") {
			if a = strings.TrimSpace(a); a != "" {
				c.JWTAudience = append(c.JWTAudience, a)
			}
		}
	case []any:
		for _, a := range v {
			s, ok := a.(string)
			if !ok {
				return c, fmt.Errorf("context %q: want strings, got %T", key, a)
			}
			c.JWTAudience = append(c.JWTAudience, s)
		}
	default:
		return c, fmt.Errorf("context %q: want a string or a list of strings, got %T", key, v)
	}
	ttl, err := str(ContextPaymentsTTL)
	if err != nil {
		return c, err
	}
	if ttl != "" {
		if c.PaymentsTTL, err = time.ParseDuration(ttl); err != nil {
			return c, fmt.Errorf("context %q: %w", ContextPaymentsTTL, err)
		}
	}
	destroy, err := str(ContextDestroyTables)
	if err != nil {
		return c, err
	}
	if destroy != "" {
		if c.DestroyTables, err = strconv.ParseBool(destroy); err != nil {
			return c, fmt.Errorf("context %q: %w", ContextDestroyTables, err)
		}
	}
	public, err := str(ContextPublicAPI)
	if err != nil {
		return c, err
	}
	if public != "" {
		if c.PublicAPI, err = strconv.ParseBool(public); err != nil {
			return c, fmt.Errorf("context %q: %w", ContextPublicAPI, err)
		}
	}
	if c.StackSuffix, err = str(ContextStackSuffix); err != nil {
		return c, err
	}
	if c.StackSuffix != "" && !stackSuffix.MatchString(c.StackSuffix) {
		return c, fmt.Errorf("context %q: %q: want a hyphen, then at most 23 letters, digits or hyphens", ContextStackSuffix, c.StackSuffix)
	}
	verify, err := str(ContextVerifyStack)
	if err != nil {
		return c, err
	}
	if verify != "" {
		if c.VerifyStack, err = strconv.ParseBool(verify); err != nil {
			return c, fmt.Errorf("context %q: %w", ContextVerifyStack, err)
		}
	}
	sealing, err := str(ContextSealing)
	if err != nil {
		return c, err
	}
	if sealing != "" {
		if c.Sealing, err = strconv.ParseBool(sealing); err != nil {
			return c, fmt.Errorf("context %q: %w", ContextSealing, err)
		}
	}
	httpAPI, err := str(ContextHTTPAPI)
	if err != nil {
		return c, err
	}
	if httpAPI != "" {
		if c.HTTPAPI, err = strconv.ParseBool(httpAPI); err != nil {
			return c, fmt.Errorf("context %q: %w", ContextHTTPAPI, err)
		}
	}
	return c, nil
}

// Build adds the payments and orders stacks to app (and, with
// [ContextLedgerZip], the ledger stack, with [ContextFunctionURLZip], the
// Function URL stack, with [ContextVerifyStack], the verify stack), configured from its context, each
// id followed by the [ContextStackSuffix]. It returns the first error.
func Build(app awscdk.App) error {
	c, err := ConfigFromContext(app.Node())
	if err != nil {
		return err
	}
	desc := "lambdaidem example: HTTP API payments with idempotency"
	if !c.HTTPAPI {
		desc = "lambdaidem example: payments with idempotency (no HTTP API: invoke the function)"
	}
	if _, err := NewPaymentsStack(app, PaymentsStackID+c.StackSuffix, PaymentsProps{
		StackProps:           awscdk.StackProps{Description: strPtr(desc)},
		CodeZip:              c.PaymentsZip,
		Arch:                 c.Arch,
		NoHTTPAPI:            !c.HTTPAPI,
		JWTIssuer:            c.JWTIssuer,
		JWTAudience:          c.JWTAudience,
		AllowUnauthenticated: c.PublicAPI,
		TTL:                  c.PaymentsTTL,
		DestroyTables:        c.DestroyTables,
		Sealing:              c.Sealing,
	}); err != nil {
		return err
	}
	if _, err = NewOrdersStack(app, OrdersStackID+c.StackSuffix, OrdersProps{
		StackProps:    awscdk.StackProps{Description: strPtr("lambdaidem example: SQS orders with idempotency")},
		CodeZip:       c.OrdersZip,
		RelayZip:      c.RelayZip,
		Arch:          c.Arch,
		DestroyTables: c.DestroyTables,
	}); err != nil {
		return err
	}
	if c.LedgerZip != "" {
		if _, err := NewLedgerStack(app, LedgerStackID+c.StackSuffix, LedgerProps{
			StackProps:    awscdk.StackProps{Description: strPtr("lambdaidem example: Kinesis and DynamoDB Streams ledger with idempotency")},
			CodeZip:       c.LedgerZip,
			Arch:          c.Arch,
			DestroyTables: c.DestroyTables,
		}); err != nil {
			return err
		}
	}
	if c.FunctionURLZip != "" {
		if _, err := NewFunctionURLStack(app, FunctionURLStackID+c.StackSuffix, FunctionURLProps{
			StackProps:    awscdk.StackProps{Description: strPtr("lambdaidem example: net/http payments on a Function URL with idempotency")},
			CodeZip:       c.FunctionURLZip,
			Arch:          c.Arch,
			TTL:           c.PaymentsTTL,
			DestroyTables: c.DestroyTables,
			Sealing:       c.Sealing,
		}); err != nil {
			return err
		}
	}
	if c.VerifyStack {
		_, err = NewVerifyStack(app, VerifyStackID+c.StackSuffix, awscdk.StackProps{Description: strPtr("lambdaidem aws-verify: the checks' tables (throwaway)")})
	}
	return err
}

func strPtr(s string) *string { return &s }
