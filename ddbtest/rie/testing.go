package rie

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"sync"
	"testing"
)

// Binary returns the aws-lambda-rie binary for tb, or skips tb with a
// one-line reason when there is none (see [Find]).
func Binary(tb testing.TB) string {
	tb.Helper()
	p, err := Find(tb.Context())
	if errors.Is(err, ErrNotFound) {
		tb.Skip(err.Error())
	}
	if err != nil {
		tb.Fatal(err)
	}
	return p
}

// BuildBootstrap builds the main package pkg (as `go build` takes it, run
// in dir) into a temporary folder of tb, see [Build], and returns the
// bootstrap's path. It fails tb when the build fails.
func BuildBootstrap(tb testing.TB, dir, pkg string, tags ...string) string {
	tb.Helper()
	p, err := Build(tb.Context(), BuildOptions{Dir: dir, Package: pkg, Out: tb.TempDir(), Tags: tags})
	if err != nil {
		tb.Fatal(err)
	}
	return p
}

// Run starts the function under the emulator for tb (see [Start]) and
// stops it when tb ends. Without an aws-lambda-rie binary it skips tb
// with a one-line reason. Unless o.Log is set, the emulator's and the
// function's output is written to tb's log when tb fails.
func Run(tb testing.TB, o Options) *Function {
	tb.Helper()
	o = forTest(tb, o)
	f, err := Start(tb.Context(), o)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(f.Close)
	return f
}

// RunPool starts n instances of the function for tb (see [StartPool]),
// each on its own ports, and stops them when tb ends.
func RunPool(tb testing.TB, n int, o Options) *Pool {
	tb.Helper()
	o = forTest(tb, o)
	p, err := StartPool(tb.Context(), n, o)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(p.Close)
	return p
}

func forTest(tb testing.TB, o Options) Options {
	tb.Helper()
	if o.RIE == "" {
		o.RIE = Binary(tb)
	}
	if o.Log == nil {
		l := &testLog{}
		o.Log = l
		tb.Cleanup(func() {
			if tb.Failed() {
				tb.Logf("output of %s under the emulator:\n%s", o.Name, l.String())
			}
		})
	}
	return o
}

// testLog collects output for a failing test's log.
type testLog struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *testLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *testLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

// InvokeJSON sends in, encoded as JSON, to the function and decodes its
// response into out (unless out is nil). A function error, a timeout
// included, is returned as a [*FunctionError]: errors.Is(err, [ErrTimeout])
// tells a timeout, errors.As reads its type and message.
func InvokeJSON(ctx context.Context, f Invoker, in, out any) error {
	payload, err := json.Marshal(in)
	if err != nil {
		return fmt.Errorf("rie: encode the event: %w", err)
	}
	inv, err := f.Invoke(ctx, payload)
	if err != nil {
		return err
	}
	if err := inv.Err(); err != nil {
		return err
	}
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(inv.Payload, out); err != nil {
		return fmt.Errorf("rie: decode the response %q: %w", inv.Payload, err)
	}
	return nil
}

// HoldEndpoint serves a [Hold] in front of the DynamoDB endpoint at
// endpoint (any: the in-process one, Dynoxide, ...) on a loopback port
// for tb, and returns the Hold and the URL to give the function as
// Options.DynamoDBEndpoint. Held requests are released when tb ends.
func HoldEndpoint(tb testing.TB, endpoint string) (*Hold, string) {
	tb.Helper()
	u, err := url.Parse(endpoint)
	if err != nil {
		tb.Fatalf("rie: endpoint %q: %v", endpoint, err)
	}
	h := NewHold(httputil.NewSingleHostReverseProxy(u))
	srv := httptest.NewServer(h)
	tb.Cleanup(srv.Close)
	tb.Cleanup(h.ReleaseAll)
	return h, srv.URL
}
