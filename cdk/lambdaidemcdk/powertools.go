package lambdaidemcdk

import (
	"fmt"
	"strings"
	"time"

	"github.com/aws/aws-cdk-go/awscdk/v2/awslambda"
	"github.com/aws/jsii-runtime-go"
)

// Environment variables that [BindPowertoolsWindow] sets: a cutover window
// from Powertools for AWS Lambda, which dynamostore.ReadPowertoolsEnv reads
// into dynamostore.Options.Powertools (same names as its EnvPowertools*
// constants).
const (
	EnvPowertoolsUntil        = "IDEMPOTENCY_POWERTOOLS_UNTIL"
	EnvPowertoolsLanguage     = "IDEMPOTENCY_POWERTOOLS_LANGUAGE"
	EnvPowertoolsFunctionName = "IDEMPOTENCY_POWERTOOLS_FUNCTION_NAME"
	EnvPowertoolsHandler      = "IDEMPOTENCY_POWERTOOLS_HANDLER"
	EnvPowertoolsKeyPrefix    = "IDEMPOTENCY_POWERTOOLS_KEY_PREFIX"
	EnvPowertoolsHashFunction = "IDEMPOTENCY_POWERTOOLS_HASH_FUNCTION"
	EnvPowertoolsValidation   = "IDEMPOTENCY_POWERTOOLS_VALIDATION"
)

// PowertoolsWindowProps describe the Powertools function a service moves
// from, on the same table (adopt it with FromTableName), and how long the
// new version honours its records.
type PowertoolsWindowProps struct {
	// Language is the old function's Powertools: "python", "typescript",
	// "java" or "dotnet". Required.
	Language string
	// FunctionName is the old function's name (its
	// AWS_LAMBDA_FUNCTION_NAME), the prefix of its keys. Required unless
	// KeyPrefix is set.
	FunctionName string
	// Handler is the decorated function as Powertools names it: Python
	// "<module>.<qualname>" ("app.lambda_handler"), Java and .NET the
	// method name. TypeScript 2.x does not use it.
	Handler string
	// KeyPrefix is the old key_prefix / keyPrefix, if it was set.
	KeyPrefix string
	// HashFunction is the old hash_function / hashFunction; default md5.
	HashFunction string
	// Validation says the old function set payload_validation_jmespath.
	Validation bool
	// Until closes the window: no earlier than [PowertoolsWindowCloses] of
	// the moment the old version stops serving. Required.
	Until time.Time
}

// PowertoolsWindowCloses is the earliest a window may close: when the
// old version stops serving (the end of the weighted alias's or
// CodeDeploy's shift), plus its expires_after_seconds (its last record
// stays live that long), plus its timeout (a record it claimed just before
// stopping is in progress that long).
func PowertoolsWindowCloses(oldStopsServing time.Time, expiresAfterSeconds int, oldTimeout time.Duration) time.Time {
	return oldStopsServing.Add(time.Duration(expiresAfterSeconds)*time.Second + oldTimeout)
}

// BindPowertoolsWindow sets on fn the variables of a Powertools cutover
// window (the EnvPowertools* constants). A variable fn already sets to
// another value is an error matching ErrEnvironmentConflict; for a
// function not defined in this app it returns an [*EnvironmentNotSetError]
// with the variables. Bad props are an error matching ErrInvalidProps.
func BindPowertoolsWindow(fn awslambda.IFunction, props PowertoolsWindowProps) error {
	b, err := resolveFunction(fn)
	if err != nil {
		return fmt.Errorf("%w: BindPowertoolsWindow needs a function", err)
	}
	switch strings.ToLower(props.Language) {
	case "python", "typescript", "java", "dotnet":
	default:
		return fmt.Errorf("%w: Language %q is not python, typescript, java or dotnet", ErrInvalidProps, props.Language)
	}
	if props.Until.IsZero() {
		return fmt.Errorf("%w: a Powertools window needs Until (see PowertoolsWindowCloses)", ErrInvalidProps)
	}
	if props.FunctionName == "" && props.KeyPrefix == "" {
		return fmt.Errorf("%w: a Powertools window needs the old FunctionName (or its KeyPrefix)", ErrInvalidProps)
	}
	env := map[string]*string{
		EnvPowertoolsUntil:    jsii.String(props.Until.UTC().Format(time.RFC3339)),
		EnvPowertoolsLanguage: jsii.String(strings.ToLower(props.Language)),
	}
	for name, v := range map[string]string{
		EnvPowertoolsFunctionName: props.FunctionName,
		EnvPowertoolsHandler:      props.Handler,
		EnvPowertoolsKeyPrefix:    props.KeyPrefix,
		EnvPowertoolsHashFunction: props.HashFunction,
	} {
		if v != "" {
			env[name] = jsii.String(v)
		}
	}
	if props.Validation {
		env[EnvPowertoolsValidation] = jsii.String("true")
	}
	if b.local == nil {
		return &EnvironmentNotSetError{Function: b.path, Environment: env}
	}
	if err := checkEnvironment(b.local, env); err != nil {
		return err
	}
	setEnvironment(b.local, env, "BindPowertoolsWindow")
	return nil
}
