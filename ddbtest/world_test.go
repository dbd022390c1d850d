package ddbtest_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/lambdaidem/lambdaidem/ddbtest"
)

// requireDynoxide skips t when no Dynoxide binary is installed.
func requireDynoxide(t *testing.T) {
	t.Helper()
	if _, err := ddbtest.DynoxideBinary(); err != nil {
		t.Skipf("the second world is skipped: %v", err)
	}
}

// TestSelectedWorld: LAMBDAIDEM_WORLD names the world; a value it does not
// know is an error naming the two it does, and Start fails on it.
func TestSelectedWorld(t *testing.T) {
	for v, want := range map[string]ddbtest.World{"": ddbtest.WorldEmbedded, "embedded": ddbtest.WorldEmbedded, "dynoxide": ddbtest.WorldDynoxide} {
		t.Setenv(ddbtest.EnvWorld, v)
		if got, err := ddbtest.SelectedWorld(); got != want || err != nil {
			t.Errorf("%s=%q: %q, %v; want %q", ddbtest.EnvWorld, v, got, err, want)
		}
	}
	t.Setenv(ddbtest.EnvWorld, "localstack")
	if _, err := ddbtest.SelectedWorld(); err == nil || !strings.Contains(err.Error(), `"embedded" or "dynoxide"`) {
		t.Errorf("an unknown world: %v; want an error naming the two worlds", err)
	}
	t.Setenv(ddbtest.EnvEndpoint, "")
	if ep, err := ddbtest.Open(context.Background()); err == nil {
		ep.Close()
		t.Error("Open in an unknown world succeeded")
	}
}

// TestNoDynoxide: without $DYNOXIDE and without dynoxide on PATH, the
// launcher says how to install it; a $DYNOXIDE that names nothing is named.
func TestNoDynoxide(t *testing.T) {
	t.Setenv(ddbtest.EnvDynoxide, "")
	t.Setenv("PATH", t.TempDir())
	if _, err := ddbtest.LaunchDynoxide(context.Background()); !errors.Is(err, ddbtest.ErrNoDynoxide) {
		t.Fatalf("LaunchDynoxide = %v; want ErrNoDynoxide", err)
	}
	missing := filepath.Join(t.TempDir(), "dynoxide")
	t.Setenv(ddbtest.EnvDynoxide, missing)
	if _, err := ddbtest.LaunchDynoxide(context.Background()); err == nil || !strings.Contains(err.Error(), missing) {
		t.Fatalf("LaunchDynoxide with %s=%s: %v; want an error naming the path", ddbtest.EnvDynoxide, missing, err)
	}
	notServer := filepath.Join(t.TempDir(), "dynoxide")
	if err := os.WriteFile(notServer, []byte("#!/bin/sh\necho not a server >&2\nexit 3\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv(ddbtest.EnvDynoxide, notServer)
	if _, err := ddbtest.LaunchDynoxide(context.Background()); err == nil || !strings.Contains(err.Error(), "not a server") {
		t.Fatalf("LaunchDynoxide of a binary that exits: %v; want an error with its output", err)
	}
}

// TestDynoxideWorld: with LAMBDAIDEM_WORLD=dynoxide, Start gives a Dynoxide
// process behind the proxy, which counts and faults its calls; Close stops
// the process.
func TestDynoxideWorld(t *testing.T) {
	requireDynoxide(t)
	t.Setenv(ddbtest.EnvEndpoint, "")
	t.Setenv(ddbtest.EnvWorld, "dynoxide")
	ep, err := ddbtest.Open(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer ep.Close()
	if ep.World != ddbtest.WorldDynoxide || ep.Proxy == nil || ep.Proxy.Backend().Name != "dynoxide" {
		t.Fatalf("Open = world %q, proxy %v; want Dynoxide behind the proxy", ep.World, ep.Proxy)
	}
	c := ep.Client()
	table := newTable(t, c)
	put(t, c, table, item("x", "1"))
	if v := value(get(t, c, table, "x"), "v"); v != "1" {
		t.Fatalf("GetItem after PutItem: v = %q", v)
	}
	ep.Proxy.Inject(ddbtest.Rule{Op: "GetItem", Fault: ddbtest.InternalServerError, Times: 1})
	get(t, c, table, "x") // the SDK retries the injected 500
	if n := ep.Proxy.Count("GetItem"); n != 3 {
		t.Fatalf("GetItem calls = %d; want 3 (two reads, one retried)", n)
	}
	ep.Close()
	ep.Close()
	if _, err := ddbtest.NewClient(ep.URL, func(o *ddbtest.ClientOptions) { o.MaxAttempts = 1 }).ListTables(context.Background(), &dynamodb.ListTablesInput{}); err == nil {
		t.Fatal("the endpoint answered after Close")
	}
}

// TestDynoxideServerClose: each server is a fresh, empty process on its
// own port; Close stops it.
func TestDynoxideServerClose(t *testing.T) {
	requireDynoxide(t)
	a, b := ddbtest.StartDynoxide(t), ddbtest.StartDynoxide(t)
	if a.URL == b.URL {
		t.Fatalf("two servers on %s", a.URL)
	}
	ca, cb := ddbtest.NewClient(a.URL), ddbtest.NewClient(b.URL)
	newTable(t, ca)
	out, err := cb.ListTables(context.Background(), &dynamodb.ListTablesInput{})
	if err != nil || len(out.TableNames) != 0 {
		t.Fatalf("ListTables on the second server = %v, %v; want an empty server", out, err)
	}
	a.Close()
	a.Close()
	ca = ddbtest.NewClient(a.URL, func(o *ddbtest.ClientOptions) { o.MaxAttempts = 1 })
	if _, err := ca.ListTables(context.Background(), &dynamodb.ListTablesInput{}); err == nil {
		t.Fatal("the server answered after Close")
	}
}

// TestForwardUnreachable: a forwarded request to an endpoint that does not
// answer is a 500 the SDK retries and then reports, not a hang or a panic.
func TestForwardUnreachable(t *testing.T) {
	dead := httptest.NewServer(http.NotFoundHandler())
	url := dead.URL
	dead.Close()
	srv := httptest.NewServer(ddbtest.Forward(url))
	defer srv.Close()
	c := ddbtest.NewClient(srv.URL, func(o *ddbtest.ClientOptions) { o.MaxAttempts = 2 })
	_, err := c.ListTables(context.Background(), &dynamodb.ListTablesInput{Limit: aws.Int32(1)})
	if apiCode(err) != "InternalServerError" || !strings.Contains(err.Error(), "ddbtest: forward") {
		t.Fatalf("ListTables through Forward to a closed port: %v; want InternalServerError from ddbtest: forward", err)
	}
}
