package apigw_test

import (
	"context"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/lambdaidem/lambdaidem/internal/tenanttest"
	"github.com/lambdaidem/lambdaidem/lambdaidem"
	"github.com/lambdaidem/lambdaidem/lambdaidem/apigw"
	"github.com/lambdaidem/lambdaidem/lambdaidem/memstore"
)

// The same caller, key and body sent as two Lambda tenants: each tenant
// gets its own run, never the other's stored response; on every event kind.
func TestLambdaTenantsNeverShareAResponse(t *testing.T) {
	forEachKind(t, func(t *testing.T, k kind) {
		a := newAdapter(t, memstore.New(), nil)
		handle := func(ctx context.Context, body []byte) (reply, error) {
			return reply{Status: http.StatusCreated, Body: "paid for " + lambdaidem.Tenant(ctx)}, nil
		}
		for _, tenant := range []string{"blue", "green", "blue"} {
			r, err := k.send(t, a, tenanttest.Context(tenant), edit{}, handle)
			if err != nil || r.Status != http.StatusCreated || r.Body != "paid for "+tenant {
				t.Fatalf("tenant %s: %d %q %v; want its own response", tenant, r.Status, r.Body, err)
			}
		}
	})
}

// Synchronized contenders of two tenants on one key both run.
func TestLambdaTenantsContendingBothRun(t *testing.T) {
	forEachKind(t, func(t *testing.T, k kind) {
		a := newAdapter(t, memstore.New(), nil)
		rv := tenanttest.NewRendezvous(2)
		handle := func(ctx context.Context, body []byte) (reply, error) {
			if err := rv.Arrive(); err != nil {
				return reply{}, err
			}
			return reply{Status: http.StatusCreated, Body: lambdaidem.Tenant(ctx)}, nil
		}
		var wg sync.WaitGroup
		replies := make([]reply, 2)
		for i, tenant := range []string{"blue", "green"} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				replies[i], _ = k.send(t, a, tenanttest.Context(tenant), edit{}, handle)
			}()
		}
		wg.Wait()
		for i, tenant := range []string{"blue", "green"} {
			if replies[i].Status != http.StatusCreated || replies[i].Body != tenant {
				t.Errorf("tenant %s: %d %q; want its own run", tenant, replies[i].Status, replies[i].Body)
			}
		}
	})
}

// A function that declares tenants answers an invocation without one with
// 500 unidentified-caller, and runs nothing.
func TestDeclaredTenantsRefuseARequestWithoutOne(t *testing.T) {
	forEachKind(t, func(t *testing.T, k kind) {
		a := newAdapter(t, memstore.New(), func(o *lambdaidem.Options) { o.Getenv = tenanttest.Declared }, func(o *apigw.Options) { o.Logger = slog.New(slog.DiscardHandler) })
		r, err := k.send(t, a, context.Background(), edit{}, func(context.Context, []byte) (reply, error) {
			t.Error("ran without a tenant")
			return reply{Status: http.StatusCreated}, nil
		})
		if err != nil || r.Status != http.StatusInternalServerError || !strings.Contains(r.Body, "unidentified-caller") || !strings.Contains(r.Body, "tenant") {
			t.Fatalf("%d %q %v; want 500 unidentified-caller naming the tenant", r.Status, r.Body, err)
		}
	})
}
