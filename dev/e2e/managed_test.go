//go:build e2e

package e2e

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	ddbtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/lambdaidem/lambdaidem/dev/e2estack"

	"github.com/lambdaidem/lambdaidem/ddbtest/rie"
)

// chargeProvider is a card provider on loopback whose charge call is held
// until the test releases it. It notices a caller that goes away (the
// function's process killed) and answers a status query naively: "none"
// while a charge is still in flight.
type chargeProvider struct {
	mu          sync.Mutex
	calls       int
	charged     map[string]int
	dropped     int           // charge calls whose caller went away
	entered     chan struct{} // one value per charge call
	release     chan struct{}
	chargedAt   time.Time
	statusCalls int
}

func (p *chargeProvider) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	key := r.URL.Query().Get("key")
	switch r.URL.Path {
	case "/charge":
		p.mu.Lock()
		p.calls++
		p.mu.Unlock()
		p.entered <- struct{}{}
		select {
		case <-p.release:
		case <-r.Context().Done():
			p.mu.Lock()
			p.dropped++
			p.mu.Unlock()
			return
		}
		p.mu.Lock()
		p.charged[key]++
		p.chargedAt = time.Now()
		p.mu.Unlock()
	case "/status":
		p.mu.Lock()
		p.statusCalls++
		n := p.charged[key]
		p.mu.Unlock()
		if n > 0 {
			w.Write([]byte("charged"))
		} else {
			w.Write([]byte("none"))
		}
	default:
		http.NotFound(w, r)
	}
}

// managedChargeOutlivesTimeout: one Lambda Managed Instances process (the
// emulator's Managed Instances mode, 4 concurrent invocations), a function
// timeout of 2s and a lease margin of 1s. The first invocation's charge is
// held past the timeout; the emulator reports the invocation timed out but,
// as on Lambda Managed Instances, does not stop the code (checked here: the
// provider sees its caller stay, and the payment commits after the
// timeout). Retries after the deadline plus margin get "in progress" (the
// owner renews its lease) instead of a reconcile that would answer "not
// done" and charge again; after the charge completes they replay. One
// charge, one payment.
func managedChargeOutlivesTimeout(t *testing.T, s *stack) {
	emb := s.needFaults(t)
	if ok, why := rie.ManagedInstancesSupported(); !ok {
		t.Skip(why)
	}
	ctx := t.Context()
	rieBin, err := rie.Find(ctx)
	if err != nil {
		t.Fatal(err)
	}
	root, err := e2estack.ModuleRoot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	bin, err := e2estack.Build(ctx, e2estack.BuildOptions{ModuleRoot: root, Package: "./dev/e2e/slowcharge", Out: filepath.Join(t.TempDir(), "slowcharge")})
	if err != nil {
		t.Fatal(err)
	}
	p := &chargeProvider{charged: map[string]int{}, entered: make(chan struct{}, 8), release: make(chan struct{})}
	srv := httptest.NewServer(p)
	t.Cleanup(srv.Close)
	released := false
	t.Cleanup(func() {
		if !released {
			close(p.release)
		}
	})
	var log bytes.Buffer
	var logMu sync.Mutex
	const timeout, margin = 2 * time.Second, time.Second
	fo := rie.Options{
		RIE: rieBin, Bootstrap: bin, Name: "slowcharge", Timeout: timeout, MaxConcurrency: 4,
		Log: lockedWriter{&logMu, &log}, DynamoDBEndpoint: emb.DynamoDB.URL,
		Env: map[string]string{
			"IDEMPOTENCY_TABLE": emb.PaymentsIdempotencyTable, "PAYMENTS_TABLE": emb.PaymentsTable,
			"PROVIDER_URL": srv.URL, "LEASE_MARGIN": margin.String(),
		},
	}
	fn, err := rie.Start(ctx, fo)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { fn.Close() })
	t.Cleanup(func() {
		if t.Failed() {
			logMu.Lock()
			t.Logf("function log:\n%s", log.String())
			logMu.Unlock()
		}
	})

	key := unique("slow")
	payload, _ := json.Marshal(map[string]any{"key": key, "amount": 700})
	invoke := func() (rie.Invocation, map[string]string) {
		t.Helper()
		inv, err := fn.Invoke(ctx, payload)
		if err != nil {
			t.Fatal(err)
		}
		var out map[string]string
		if inv.FunctionError == "" {
			if err := json.Unmarshal(inv.Payload, &out); err != nil {
				t.Fatalf("result %s: %v", inv.Payload, err)
			}
		}
		return inv, out
	}

	began := time.Now()
	first := make(chan rie.Invocation, 1)
	go func() {
		inv, err := fn.Invoke(ctx, payload)
		if err != nil {
			t.Error(err)
		}
		first <- inv
	}()
	select {
	case <-p.entered:
	case <-time.After(30 * time.Second):
		t.Fatal("the first invocation never reached the provider")
	}
	// The invocation began before its charge reached the provider, so its
	// deadline plus the margin (the lease it claimed with) ends before
	// charging+timeout+margin, however late the machine ran it.
	charging := time.Now()
	inv := <-first
	if !inv.TimedOut {
		t.Fatalf("first invocation: want a timeout, got %d %s (%s)", inv.Status, inv.Payload, inv.FunctionError)
	}
	timedOutAt := time.Since(began)
	t.Logf("first invocation reported %s after %v", inv.FunctionError, timedOutAt.Round(time.Millisecond))

	// Past the deadline plus the margin, three times over: each retry finds
	// the owner's lease renewed. A loaded machine only makes them later.
	for i, at := range []time.Duration{timeout + margin + time.Second, timeout + margin + 3*time.Second, timeout + margin + 5*time.Second} {
		time.Sleep(time.Until(charging.Add(at)))
		inv, out := invoke()
		if inv.FunctionError != "" || out["status"] != "in-progress" {
			t.Fatalf("retry %d at %v: want in-progress, got %d %s (%s)", i+1, time.Since(began).Round(time.Millisecond), inv.Status, inv.Payload, inv.FunctionError)
		}
	}
	p.mu.Lock()
	calls, dropped, statusCalls := p.calls, p.dropped, p.statusCalls
	p.mu.Unlock()
	if dropped != 0 {
		t.Fatal("the provider lost its caller: the emulator stopped the timed-out invocation (Managed Instances do not)")
	}
	if calls != 1 || statusCalls != 0 {
		t.Fatalf("provider: %d charge calls, %d status queries while the owner ran; want 1 and 0", calls, statusCalls)
	}

	// The charge completes; the timed-out invocation, still running, commits.
	close(p.release)
	released = true
	eventually(t, 15*time.Second, 50*time.Millisecond, "the payment committed by the timed-out invocation", func() bool {
		return paymentExists(t, s.ddb, emb.PaymentsTable, key)
	})
	t.Logf("payment committed %v after the emulator reported the timeout", time.Since(began.Add(timedOutAt)).Round(time.Millisecond))
	// The timed-out invocation then returns, and the Runtime API refuses
	// its late response (410, "response is too late for timed out
	// invoke"); aws-lambda-go (v1.55.1) ends the whole process on that
	// error, every concurrent invocation with it, and the emulator shuts
	// down. That happens after the commit, at a moment the test cannot
	// see from outside: an invocation sent between the refusal and the
	// exit is lost with the process (Runtime.Unknown), so the test waits
	// for the environment to end (the bound is only a failure limit) and
	// then starts a new one, as Lambda would.
	select {
	case <-fn.Exited():
	case <-time.After(30 * time.Second):
		t.Fatal("the execution environment outlived the timed-out invocation's late response: aws-lambda-go no longer ends the process when the Runtime API refuses a response; drop the restart below")
	}
	logMu.Lock()
	refused := strings.Contains(log.String(), "response is too late for timed out invoke")
	logMu.Unlock()
	if !refused {
		t.Fatal("the execution environment ended, but not because the emulator refused the timed-out invocation's late response")
	}
	t.Logf("the execution environment ended %v after the emulator reported the timeout (late response refused); starting a new one", time.Since(began.Add(timedOutAt)).Round(time.Millisecond))
	fn.Close()
	if fn, err = rie.Start(ctx, fo); err != nil {
		t.Fatal(err)
	}
	inv, out := invoke()
	if inv.FunctionError != "" || out["status"] != "paid" || out["payment"] != key {
		t.Fatalf("retry after the commit: want the payment replayed, got %d %s (%s)", inv.Status, inv.Payload, inv.FunctionError)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	charges := 0
	for _, n := range p.charged { // by operation key
		charges += n
	}
	if p.calls != 1 || charges != 1 || p.statusCalls != 0 {
		t.Fatalf("provider: %d charge calls, %d charges, %d status queries; want 1, 1, 0", p.calls, charges, p.statusCalls)
	}
}

func paymentExists(t *testing.T, c *dynamodb.Client, table, id string) bool {
	t.Helper()
	out, err := c.GetItem(t.Context(), &dynamodb.GetItemInput{
		TableName: aws.String(table), ConsistentRead: aws.Bool(true),
		Key: map[string]ddbtypes.AttributeValue{"id": &ddbtypes.AttributeValueMemberS{Value: id}},
	})
	if err != nil {
		t.Fatal(err)
	}
	return len(out.Item) > 0
}

type lockedWriter struct {
	mu *sync.Mutex
	b  *bytes.Buffer
}

func (w lockedWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.Write(p)
}
