package dynamostore

import (
	"fmt"
	"strings"
	"time"

	"github.com/lambdaidem/lambdaidem/lambdaidem"
	"github.com/lambdaidem/lambdaidem/lambdaidem/powertools"
)

// The environment variables of a Powertools cutover window: the ones the
// CDK construct's BindPowertoolsWindow sets (package lambdaidemcdk, whose
// EnvPowertools* constants have the same names). [ReadPowertoolsEnv] reads
// them.
const (
	// EnvPowertoolsUntil holds when the window closes, RFC 3339. Unset (and
	// every other variable unset): no window.
	EnvPowertoolsUntil = "IDEMPOTENCY_POWERTOOLS_UNTIL"
	// EnvPowertoolsLanguage holds the old function's Powertools: python,
	// typescript, java or dotnet.
	EnvPowertoolsLanguage = "IDEMPOTENCY_POWERTOOLS_LANGUAGE"
	// EnvPowertoolsFunctionName holds the old function's
	// AWS_LAMBDA_FUNCTION_NAME (powertools.Config.FunctionName).
	EnvPowertoolsFunctionName = "IDEMPOTENCY_POWERTOOLS_FUNCTION_NAME"
	// EnvPowertoolsHandler holds the decorated function's name
	// (powertools.Config.Handler: Python "app.lambda_handler").
	EnvPowertoolsHandler = "IDEMPOTENCY_POWERTOOLS_HANDLER"
	// EnvPowertoolsKeyPrefix holds key_prefix / keyPrefix, if it was set.
	EnvPowertoolsKeyPrefix = "IDEMPOTENCY_POWERTOOLS_KEY_PREFIX"
	// EnvPowertoolsHashFunction holds hash_function / hashFunction; unset,
	// md5.
	EnvPowertoolsHashFunction = "IDEMPOTENCY_POWERTOOLS_HASH_FUNCTION"
	// EnvPowertoolsValidation is "true" when the old function set
	// payload_validation_jmespath (PowertoolsWindow.Validation).
	EnvPowertoolsValidation = "IDEMPOTENCY_POWERTOOLS_VALIDATION"
)

// ReadPowertoolsEnv reads a Powertools window through getenv, for
// Options.Powertools. With none of the variables set it returns the zero
// window (none). Every missing or invalid variable is reported at once, by
// name, in an error matching [ErrEnvironment].
func ReadPowertoolsEnv(getenv func(string) string) (PowertoolsWindow, error) {
	names := []string{EnvPowertoolsUntil, EnvPowertoolsLanguage, EnvPowertoolsFunctionName, EnvPowertoolsHandler,
		EnvPowertoolsKeyPrefix, EnvPowertoolsHashFunction, EnvPowertoolsValidation}
	set := false
	for _, n := range names {
		set = set || getenv(n) != ""
	}
	if !set {
		return PowertoolsWindow{}, nil
	}
	var problems []string
	var w PowertoolsWindow
	until, err := time.Parse(time.RFC3339, getenv(EnvPowertoolsUntil))
	if err != nil {
		problems = append(problems, fmt.Sprintf("%s is not an RFC 3339 time (%q)", EnvPowertoolsUntil, getenv(EnvPowertoolsUntil)))
	}
	w.Until = until
	switch lang := getenv(EnvPowertoolsLanguage); strings.ToLower(lang) {
	case "python":
		w.Config.Language = powertools.Python
	case "typescript":
		w.Config.Language = powertools.TypeScript
	case "java":
		w.Config.Language = powertools.Java
	case "dotnet", ".net":
		w.Config.Language = powertools.DotNet
	default:
		problems = append(problems, fmt.Sprintf("%s is not python, typescript, java or dotnet (%q)", EnvPowertoolsLanguage, lang))
	}
	w.Config.FunctionName = getenv(EnvPowertoolsFunctionName)
	w.Config.Handler = getenv(EnvPowertoolsHandler)
	w.Config.KeyPrefix = getenv(EnvPowertoolsKeyPrefix)
	w.Config.HashFunction = getenv(EnvPowertoolsHashFunction)
	if w.Config.FunctionName == "" && strings.TrimSpace(w.Config.KeyPrefix) == "" {
		// Powertools' prefix would be its default outside Lambda ("test-func",
		// ""), which no deployed function wrote: the window would find nothing.
		problems = append(problems, fmt.Sprintf("%s (the old function's AWS_LAMBDA_FUNCTION_NAME) or %s is required", EnvPowertoolsFunctionName, EnvPowertoolsKeyPrefix))
	}
	switch v := getenv(EnvPowertoolsValidation); v {
	case "", "false":
	case "true":
		w.Validation = true
	default:
		problems = append(problems, fmt.Sprintf("%s is not true or false (%q)", EnvPowertoolsValidation, v))
	}
	if w.Config.Language != 0 {
		if err := w.Config.Validate(); err != nil {
			problems = append(problems, fmt.Sprintf("%s: %v", EnvPowertoolsHashFunction, err))
		}
	}
	if tenants, _ := lambdaidem.TenantsDeclared(getenv); tenants {
		problems = append(problems, fmt.Sprintf("%s=%s (tenant isolation mode) with a Powertools window (%s): Powertools' record keys name no tenant, so every invocation would be refused (%v)",
			lambdaidem.TenantsEnv, lambdaidem.TenantsRequired, EnvPowertoolsUntil, ErrPowertoolsTenant))
	}
	if len(problems) > 0 {
		return PowertoolsWindow{}, fmt.Errorf("%w: %s", ErrEnvironment, strings.Join(problems, "; "))
	}
	return w, nil
}
