package lambdaidem_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/lambdaidem/lambdaidem/internal/tenanttest"
	"github.com/lambdaidem/lambdaidem/lambdaidem"
)

// Tenant B sending tenant A's key and body never gets A's outcome, through
// Do and through Wrap.
func TestTenantsNeverShareARecord(t *testing.T) {
	t.Run("Do", func(t *testing.T) {
		f := newFixture(t)
		for _, tenant := range []string{"blue", "green"} {
			out, err := lambdaidem.Do(tenanttest.Context(tenant), f.guard, call("k1", "same body"), func(ctx context.Context) (string, error) {
				return "paid for " + tenant, nil
			})
			if err != nil || out != "paid for "+tenant {
				t.Fatalf("tenant %s: got %q, %v; want its own run", tenant, out, err)
			}
		}
		if n := len(f.store.Records()); n != 2 {
			t.Fatalf("%d records; want one per tenant", n)
		}
		// A's duplicate still replays A's outcome.
		out, err := lambdaidem.Do(tenanttest.Context("blue"), f.guard, call("k1", "same body"), func(ctx context.Context) (string, error) {
			t.Error("blue's duplicate ran")
			return "", nil
		})
		if err != nil || out != "paid for blue" {
			t.Fatalf("blue's duplicate: %q, %v", out, err)
		}
	})
	t.Run("Wrap with the same user scope", func(t *testing.T) {
		f := newFixture(t)
		w, err := lambdaidem.NewWrapper(f.guard, lambdaidem.Spec[string, string]{
			Operation: "Pay",
			Key:       func(context.Context, string) (string, error) { return "k1", nil },
			Scope:     func(context.Context, string) (string, error) { return "shared-scope", nil },
		})
		if err != nil {
			t.Fatal(err)
		}
		var runs atomic.Int32
		h := w.Wrap(func(ctx context.Context, in string) (string, error) {
			runs.Add(1)
			return "for " + lambdaidem.Tenant(ctx), nil
		})
		a, errA := h(tenanttest.Context("blue"), "body")
		b, errB := h(tenanttest.Context("green"), "body")
		if errA != nil || errB != nil || a != "for blue" || b != "for green" || runs.Load() != 2 {
			t.Fatalf("blue %q %v, green %q %v, %d runs; want each tenant its own run", a, errA, b, errB, runs.Load())
		}
	})
}

// Synchronized contenders from two tenants on one key both run: neither is
// told the other's attempt is in progress.
func TestTenantsContendingOnOneKeyBothRun(t *testing.T) {
	f := newFixture(t)
	rv := tenanttest.NewRendezvous(2)
	var wg sync.WaitGroup
	errs := make([]error, 2)
	for i, tenant := range []string{"blue", "green"} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, errs[i] = lambdaidem.Do(tenanttest.Context(tenant), f.guard, call("k1", "same body"), func(ctx context.Context) (string, error) {
				return tenant, rv.Arrive()
			})
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("contender %d: %v; want both tenants to run", i, err)
		}
	}
}

// Records of functions without tenants keep the keys v0.2.0 wrote.
func TestKeysWithoutATenantAreUnchanged(t *testing.T) {
	// Computed by v0.2.0's RecordKey (git show v0.2.0:lambdaidem/key.go).
	const v020 = "lambdaidem#" + "_-gcKBOug7zYoD8Q7brPvTe-S8gjZPCEqErNxypcDAU"
	if got := lambdaidem.RecordKey("lambdaidem", "scope", "Pay", "k1"); got != v020 {
		t.Fatalf("RecordKey = %q; v0.2.0 wrote %q", got, v020)
	}
	if got := lambdaidem.TenantRecordKey("lambdaidem", "", "scope", "Pay", "k1"); got != v020 {
		t.Fatalf("TenantRecordKey without a tenant = %q; want %q", got, v020)
	}
	f := newFixture(t)
	if _, err := lambdaidem.Do(tenanttest.Context(""), f.guard, lambdaidem.Call[string]{Operation: "Pay", Scope: "scope", Key: "k1", Fingerprint: "fp"},
		func(context.Context) (string, error) { return "ok", nil }); err != nil {
		t.Fatal(err)
	}
	if rec := f.onlyRecord(t); rec.Key != v020 {
		t.Fatalf("record key %q; want %q", rec.Key, v020)
	}
}

func TestTenantRecordKey(t *testing.T) {
	k := lambdaidem.TenantRecordKey("ns", "blue", "scope", "Pay", "k1")
	ns, tenant, hash, ok := lambdaidem.SplitRecordKey(k)
	if !ok || ns != "ns" || tenant != "blue" || len(hash) != 43 || !strings.HasPrefix(k, lambdaidem.TenantKeyPrefix("ns", "blue")) {
		t.Fatalf("SplitRecordKey(%q) = %q, %q, %q, %v", k, ns, tenant, hash, ok)
	}
	// The tenant is hashed too, and comes before the scope: no scope of
	// another tenant (or of none) reaches the same key.
	for _, other := range []string{
		lambdaidem.TenantRecordKey("ns", "green", "scope", "Pay", "k1"),
		lambdaidem.TenantRecordKey("ns", "blue", "scope2", "Pay", "k1"),
		lambdaidem.RecordKey("ns", "blue\nscope", "Pay", "k1"),
		lambdaidem.RecordKey("ns", "scope", "Pay", "k1"),
	} {
		if other == k {
			t.Fatalf("%q collides", k)
		}
	}
	if _, tenant, _, ok := lambdaidem.SplitRecordKey(lambdaidem.RecordKey("ns", "s", "op", "k")); !ok || tenant != "" {
		t.Fatalf("a key without a tenant: %q, %v", tenant, ok)
	}
	for _, bad := range []string{"", "ns", "#" + strings.Repeat("a", 43), "ns#" + strings.Repeat("a", 42), "ns##" + strings.Repeat("a", 43), "ns#!!#" + strings.Repeat("a", 43)} {
		if _, _, _, ok := lambdaidem.SplitRecordKey(bad); ok {
			t.Errorf("SplitRecordKey(%q) accepted", bad)
		}
	}
}

// A deployment that declares tenants refuses an invocation without one,
// never running it under the record every tenant-less invocation shares.
func TestDeclaredTenantsRefuseAnInvocationWithoutOne(t *testing.T) {
	env := func(o *lambdaidem.Options) { o.Getenv = tenanttest.Declared }
	f := newFixture(t, env)
	for _, ctx := range []context.Context{context.Background(), tenanttest.Context("")} {
		_, err := lambdaidem.Do(ctx, f.guard, call("k1", "body"), func(context.Context) (string, error) {
			t.Error("ran without a tenant")
			return "", nil
		})
		if !errors.Is(err, lambdaidem.ErrNoTenant) || !strings.Contains(err.Error(), lambdaidem.TenantsEnv) {
			t.Fatalf("got %v; want ErrNoTenant naming %s", err, lambdaidem.TenantsEnv)
		}
	}
	f.noRecords(t)
	if out, err := lambdaidem.Do(tenanttest.Context("blue"), f.guard, call("k1", "body"), func(context.Context) (string, error) { return "ok", nil }); err != nil || out != "ok" {
		t.Fatalf("with a tenant: %q, %v", out, err)
	}
	_, err := lambdaidem.New(f.store, func(o *lambdaidem.Options) {
		o.Getenv = func(k string) string {
			if k == lambdaidem.TenantsEnv {
				return "yes"
			}
			return ""
		}
	})
	if err == nil || !strings.Contains(err.Error(), lambdaidem.TenantsEnv) {
		t.Fatalf("New with %s=yes: %v; want an error naming it", lambdaidem.TenantsEnv, err)
	}
}
