package main

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/aws/aws-lambda-go/lambdacontext"

	"github.com/lambdaidem/lambdaidem/lambdaidem"
)

// The command shows a record's Lambda tenant, filters the list by tenant,
// and derives a tenant's record key.
func TestTenantsShownAndFiltered(t *testing.T) {
	w := newWorld(t)
	for _, tenant := range []string{"blue", "green", ""} {
		ctx := lambdacontext.NewContext(context.Background(), &lambdacontext.LambdaContext{AwsRequestID: "r", TenantID: tenant})
		if _, err := lambdaidem.Do(ctx, w.guard, payCall("k1"), func(context.Context) (string, error) { return "paid " + tenant, nil }); err != nil {
			t.Fatal(err)
		}
	}
	blue := lambdaidem.TenantRecordKey("lambdaidem", "blue", "", "CreatePayment", "k1")

	r := w.cli(t, "", "key", "--operation", "CreatePayment", "--tenant", "blue", "k1")
	r.expect(t, 0, blue+"\n", "")

	r = w.cli(t, "", "show", blue)
	r.expect(t, 0, "tenant         blue\n", "")
	if r = w.cli(t, "", "show", recordKey("k1")); strings.Contains(r.out, "tenant") {
		t.Fatalf("a record without a tenant shows one:\n%s", r.out)
	}

	r = w.cli(t, "", "list", "--tenant", "blue", "--json")
	r.expect(t, 0, "", "1 records listed")
	var v struct{ Key, Tenant string }
	if err := json.Unmarshal([]byte(r.out), &v); err != nil || v.Key != blue || v.Tenant != "blue" {
		t.Fatalf("list --tenant blue --json: %q (%v)", r.out, err)
	}
	w.cli(t, "", "list").expect(t, 0, "", "3 records listed")
	w.cli(t, "", "list", "--tenant", "red").expect(t, 0, "", "0 records listed")
}
