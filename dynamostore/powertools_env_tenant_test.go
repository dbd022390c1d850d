package dynamostore_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/lambdaidem/lambdaidem/dynamostore"
	"github.com/lambdaidem/lambdaidem/lambdaidem"
)

// TestReadPowertoolsEnvRefusesTenants: a function that declares tenants
// (tenant isolation mode) cannot open a Powertools window, whose records
// name no tenant; the environment says so at start, naming both settings,
// rather than every invocation being refused later (ErrPowertoolsTenant).
func TestReadPowertoolsEnvRefusesTenants(t *testing.T) {
	env := map[string]string{
		dynamostore.EnvPowertoolsUntil:        "2027-01-15T10:00:00Z",
		dynamostore.EnvPowertoolsLanguage:     "python",
		dynamostore.EnvPowertoolsFunctionName: "orders",
		dynamostore.EnvPowertoolsHandler:      "app.handler",
		lambdaidem.TenantsEnv:                 lambdaidem.TenantsRequired,
	}
	_, err := dynamostore.ReadPowertoolsEnv(func(k string) string { return env[k] })
	if !errors.Is(err, dynamostore.ErrEnvironment) || !strings.Contains(err.Error(), lambdaidem.TenantsEnv) || !strings.Contains(err.Error(), dynamostore.EnvPowertoolsUntil) {
		t.Errorf("ReadPowertoolsEnv with tenants declared = %v; want ErrEnvironment naming %s and %s", err, lambdaidem.TenantsEnv, dynamostore.EnvPowertoolsUntil)
	}
}
