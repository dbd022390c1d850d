package ddbtest

import (
	"crypto/rand"
	"encoding/hex"
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/truora/minidyn/server"
)

// EnvEndpoint names the environment variable that points the tests at an
// external DynamoDB-compatible endpoint instead of the in-process emulator.
const EnvEndpoint = "AWS_ENDPOINT_URL_DYNAMODB"

// Endpoint is a DynamoDB-compatible HTTP endpoint for one test.
type Endpoint struct {
	// URL is the endpoint's base URL.
	URL string
	// Proxy is the proxy in front of the in-process emulator; nil for an
	// external endpoint.
	Proxy *Proxy
}

// Start returns an endpoint for tb: the endpoint named by
// $AWS_ENDPOINT_URL_DYNAMODB if set, else a fresh minidyn emulator behind a
// [Proxy] configured by optFns, served by an httptest.Server that is closed
// when tb ends.
func Start(tb testing.TB, optFns ...func(*ProxyOptions)) *Endpoint {
	tb.Helper()
	if url := os.Getenv(EnvEndpoint); url != "" {
		return &Endpoint{URL: url}
	}
	p := NewProxy(NewEmulator(), optFns...)
	srv := httptest.NewServer(p)
	tb.Cleanup(srv.Close)
	return &Endpoint{URL: srv.URL, Proxy: p}
}

// NewEmulator returns a fresh, empty in-process DynamoDB emulator (minidyn)
// as an http.Handler. Put a [Proxy] in front of it.
func NewEmulator() http.Handler { return server.NewServer() }

// External reports whether the endpoint is not the in-process emulator.
func (e *Endpoint) External() bool { return e.Proxy == nil }

// RequireProxy returns the endpoint's proxy, or skips tb when the endpoint
// is external: faults, call counts and fidelity switches need the proxy.
func (e *Endpoint) RequireProxy(tb testing.TB) *Proxy {
	tb.Helper()
	if e.Proxy == nil {
		tb.Skipf("needs the in-process proxy (faults, call counts, fidelity switches); %s=%s points at an external endpoint", EnvEndpoint, e.URL)
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
