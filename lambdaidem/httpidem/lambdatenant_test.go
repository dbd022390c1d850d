package httpidem_test

import (
	"context"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/aws/aws-lambda-go/lambdaurl"

	"github.com/lambdaidem/lambdaidem/internal/tenanttest"
	"github.com/lambdaidem/lambdaidem/lambdaidem"
	"github.com/lambdaidem/lambdaidem/lambdaidem/httpidem"
	"github.com/lambdaidem/lambdaidem/lambdaidem/memstore"
)

// sendThroughLambdaURL sends urlEvent through lambdaurl.Wrap to the middleware around h.
func sendThroughLambdaURL(t *testing.T, mw func(http.Handler) http.Handler, ctx context.Context, h http.HandlerFunc) (int, string) {
	t.Helper()
	resp, err := lambdaurl.Wrap(mw(h))(ctx, urlEvent("arn:aws:iam::123456789012:user/alice", `{"amount":100}`))
	if err != nil {
		t.Error(err)
		return 0, ""
	}
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Error(err)
	}
	return resp.StatusCode, string(b)
}

// Under lambdaurl, the same caller, key and body as two Lambda tenants:
// each tenant gets its own run, never the other's stored response.
func TestLambdaTenantsNeverShareAResponse(t *testing.T) {
	mw, err := httpidem.New(guard(t, memstore.New()), "Pay", func(o *httpidem.Options) { o.Logger = discard })
	if err != nil {
		t.Fatal(err)
	}
	for _, tenant := range []string{"blue", "green", "blue"} {
		status, body := sendThroughLambdaURL(t, mw, tenanttest.Context(tenant), func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(http.StatusCreated)
			_, _ = io.WriteString(w, "paid for "+lambdaidem.Tenant(r.Context()))
		})
		if status != http.StatusCreated || body != "paid for "+tenant {
			t.Fatalf("tenant %s: %d %q; want its own response", tenant, status, body)
		}
	}
}

// Synchronized contenders of two tenants on one key both run.
func TestLambdaTenantsContendingBothRun(t *testing.T) {
	mw, err := httpidem.New(guard(t, memstore.New()), "Pay", func(o *httpidem.Options) { o.Logger = discard })
	if err != nil {
		t.Fatal(err)
	}
	rv := tenanttest.NewRendezvous(2)
	h := func(w http.ResponseWriter, r *http.Request) {
		if err := rv.Arrive(); err != nil {
			w.WriteHeader(http.StatusInternalServerError)
			return
		}
		w.WriteHeader(http.StatusCreated)
		_, _ = io.WriteString(w, lambdaidem.Tenant(r.Context()))
	}
	var wg sync.WaitGroup
	bodies, statuses := make([]string, 2), make([]int, 2)
	for i, tenant := range []string{"blue", "green"} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			statuses[i], bodies[i] = sendThroughLambdaURL(t, mw, tenanttest.Context(tenant), h)
		}()
	}
	wg.Wait()
	for i, tenant := range []string{"blue", "green"} {
		if statuses[i] != http.StatusCreated || bodies[i] != tenant {
			t.Errorf("tenant %s: %d %q; want its own run", tenant, statuses[i], bodies[i])
		}
	}
}

// A function that declares tenants refuses a request without one.
func TestDeclaredTenantsRefuseARequestWithoutOne(t *testing.T) {
	g, err := lambdaidem.New(memstore.New(), func(o *lambdaidem.Options) { o.Getenv = tenanttest.Declared })
	if err != nil {
		t.Fatal(err)
	}
	mw, err := httpidem.New(g, "Pay", func(o *httpidem.Options) { o.Logger = discard })
	if err != nil {
		t.Fatal(err)
	}
	status, body := sendThroughLambdaURL(t, mw, context.Background(), func(w http.ResponseWriter, r *http.Request) {
		t.Error("ran without a tenant")
	})
	if status != http.StatusInternalServerError || !strings.Contains(body, "unidentified-caller") {
		t.Fatalf("%d %q; want 500 unidentified-caller", status, body)
	}
}
