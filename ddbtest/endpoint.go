package ddbtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/truora/minidyn/server"
)

// EnvEndpoint names the environment variable that points the tests at an
// external DynamoDB-compatible endpoint instead of the in-process emulator.
const EnvEndpoint = "AWS_ENDPOINT_URL_DYNAMODB"

// EnvWorld names the environment variable that chooses the DynamoDB world
// [Start], [NewKit] and [OpenKit] give when $AWS_ENDPOINT_URL_DYNAMODB is
// not set: "embedded" (the default) or "dynoxide".
const EnvWorld = "LAMBDAIDEM_WORLD"

// World is a DynamoDB implementation the tests run on, behind the [Proxy].
type World string

// The worlds.
const (
	// WorldEmbedded is the in-process minidyn emulator ([NewEmulator]).
	WorldEmbedded World = "embedded"
	// WorldDynoxide is a Dynoxide process ([LaunchDynoxide]), one per
	// endpoint.
	WorldDynoxide World = "dynoxide"
)

// SelectedWorld returns the world $LAMBDAIDEM_WORLD names, WorldEmbedded
// when it is empty, or an error naming the value it does not know.
func SelectedWorld() (World, error) {
	switch w := World(os.Getenv(EnvWorld)); w {
	case "", WorldEmbedded:
		return WorldEmbedded, nil
	case WorldDynoxide:
		return w, nil
	default:
		return "", fmt.Errorf("ddbtest: %s=%q: want %q or %q", EnvWorld, string(w), WorldEmbedded, WorldDynoxide)
	}
}

// Endpoint is a DynamoDB-compatible HTTP endpoint for one test.
type Endpoint struct {
	// URL is the endpoint's base URL.
	URL string
	// Proxy is the proxy in front of the world's backend; nil for an
	// external endpoint.
	Proxy *Proxy
	// World is the world behind Proxy; empty for an external endpoint.
	World World

	stop func()
	once sync.Once
}

// Start returns an endpoint for tb: the endpoint named by
// $AWS_ENDPOINT_URL_DYNAMODB if set, else a fresh backend of the world
// $LAMBDAIDEM_WORLD selects (an in-process minidyn emulator by default, or
// a Dynoxide process) behind a [Proxy] configured by optFns, served by an
// httptest.Server. Everything it starts stops when tb ends. It fails tb
// if the world cannot be started.
func Start(tb testing.TB, optFns ...func(*ProxyOptions)) *Endpoint {
	tb.Helper()
	ep, err := Open(context.Background(), optFns...)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(ep.Close)
	return ep
}

// Open is [Start] outside a test (a command, a benchmark, a local server):
// the endpoint named by $AWS_ENDPOINT_URL_DYNAMODB if set, else a fresh
// backend of the world $LAMBDAIDEM_WORLD selects behind a [Proxy]
// configured by optFns. Close the endpoint to stop what Open started.
func Open(ctx context.Context, optFns ...func(*ProxyOptions)) (*Endpoint, error) {
	if url := os.Getenv(EnvEndpoint); url != "" {
		return &Endpoint{URL: url, stop: func() {}}, nil
	}
	world, err := SelectedWorld()
	if err != nil {
		return nil, err
	}
	backend, next, stopBackend := Minidyn(), NewEmulator(), func() {}
	if world == WorldDynoxide {
		dx, err := LaunchDynoxide(ctx)
		if err != nil {
			return nil, err
		}
		backend, next, stopBackend = Dynoxide(), Forward(dx.URL), dx.Close
	}
	p := NewProxy(next, append([]func(*ProxyOptions){func(o *ProxyOptions) { o.Backend = backend }}, optFns...)...)
	srv := httptest.NewServer(p)
	return &Endpoint{URL: srv.URL, Proxy: p, World: world, stop: func() { srv.Close(); stopBackend() }}, nil
}

// Close stops the endpoint's server and backend process, if [Start] or
// [Open] started them; an external endpoint is left alone. It is safe to
// call more than once.
func (e *Endpoint) Close() {
	e.once.Do(func() {
		if e.stop != nil {
			e.stop()
		}
	})
}

// NewEmulator returns a fresh, empty in-process DynamoDB emulator (minidyn)
// as an http.Handler. Put a [Proxy] in front of it.
func NewEmulator() http.Handler { return server.NewServer() }

// External reports whether the endpoint has no proxy in front
// ($AWS_ENDPOINT_URL_DYNAMODB).
func (e *Endpoint) External() bool { return e.Proxy == nil }

// RequireProxy returns the endpoint's proxy, or skips tb when the endpoint
// is external: faults, call counts and fidelity switches need the proxy.
func (e *Endpoint) RequireProxy(tb testing.TB) *Proxy {
	tb.Helper()
	if e.Proxy == nil {
		tb.Skipf("needs the proxy (faults, call counts, fidelity switches); %s=%s points at an external endpoint", EnvEndpoint, e.URL)
	}
	return e.Proxy
}

// Client returns a DynamoDB client for the endpoint; see [NewClient].
func (e *Endpoint) Client(optFns ...func(*ClientOptions)) *dynamodb.Client {
	return NewClient(e.URL, optFns...)
}

var unsafeName = regexp.MustCompile(`[^a-zA-Z0-9_.-]+`)

// TableName returns a table name unique to this call, built from prefix
// and the test's name, valid for DynamoDB (at most 255 characters of
// [a-zA-Z0-9_.-]), so that tests may share an external endpoint.
func TableName(tb testing.TB, prefix string) string {
	var b [4]byte
	_, _ = rand.Read(b[:])
	name := unsafeName.ReplaceAllString(prefix+"-"+tb.Name(), "-")
	if len(name) > 200 {
		name = name[:200]
	}
	return name + "-" + hex.EncodeToString(b[:])
}
