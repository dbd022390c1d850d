//go:build e2e

package e2e

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/lambdaidem/lambdaidem/ddbtest/rie"
)

// TestTenantsUnderTheEmulator: the pinned emulator passes the invoke's
// X-Amz-Tenant-Id on to the runtime (Lambda-Runtime-Aws-Tenant-Id), and
// the wrapper scopes the record by it: tenant green sending tenant blue's
// key and body runs for green instead of getting blue's outcome, blue's
// duplicate replays, and an invoke without a tenant is refused by a
// function that declares tenants.
func TestTenantsUnderTheEmulator(t *testing.T) {
	ctx := t.Context()
	bin := rie.BuildBootstrap(t, ".", "./tenants")
	fn := rie.Run(t, rie.Options{Bootstrap: bin, Name: "tenants", Timeout: 10 * time.Second,
		Env: map[string]string{"IDEMPOTENCY_TENANTS": "required"}})

	type result struct {
		Tenant string `json:"tenant"`
		Run    int    `json:"run"`
	}
	invoke := func(tenant string) (rie.Invocation, result) {
		t.Helper()
		c := ctx
		if tenant != "" {
			c = rie.WithTenant(ctx, tenant)
		}
		inv, err := fn.Invoke(c, []byte(`{"key":"k-1","amount":5}`))
		if err != nil {
			t.Fatal(err)
		}
		var r result
		if inv.FunctionError == "" {
			if err := json.Unmarshal(inv.Payload, &r); err != nil {
				t.Fatalf("payload %s: %v", inv.Payload, err)
			}
		}
		return inv, r
	}
	for _, step := range []struct {
		tenant string
		want   result
	}{
		{"blue", result{"blue", 1}},
		{"green", result{"green", 2}}, // green's own run, not blue's outcome
		{"blue", result{"blue", 1}},   // blue's duplicate replays
		{"green", result{"green", 2}},
	} {
		inv, got := invoke(step.tenant)
		if inv.FunctionError != "" || got != step.want {
			t.Fatalf("tenant %s: %s %s; want %+v", step.tenant, inv.FunctionError, inv.Payload, step.want)
		}
	}
	inv, _ := invoke("")
	if inv.FunctionError == "" || !strings.Contains(string(inv.Payload), "IDEMPOTENCY_TENANTS") {
		t.Fatalf("without a tenant: %q %s; want a function error naming IDEMPOTENCY_TENANTS", inv.FunctionError, inv.Payload)
	}
}
