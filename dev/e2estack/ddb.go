package e2estack

import (
	"bytes"
	"context"
	"fmt"
	"hash/crc32"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/lambdaidem/lambdaidem/ddbtest"
)

// DynamoDB is the in-process DynamoDB-compatible endpoint: the minidyn
// emulator behind ddbtest's fidelity proxy, behind a [Hold],
// served on a loopback port that function processes reach through
// AWS_ENDPOINT_URL_DYNAMODB.
type DynamoDB struct {
	// URL is the endpoint's base URL.
	URL string
	// Proxy counts calls and injects faults (see ddbtest).
	Proxy *ddbtest.Proxy
	// Hold stalls chosen requests before they reach the proxy.
	Hold *Hold
	// Client is an SDK client for the endpoint, with explicit options.
	Client *dynamodb.Client

	srv *http.Server
}

// StartDynamoDB serves a fresh emulator on 127.0.0.1. Stop it with Close.
func StartDynamoDB(ctx context.Context) (*DynamoDB, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("e2estack: listen for DynamoDB: %w", err)
	}
	p := ddbtest.NewProxy(ddbtest.NewEmulator())
	h := NewHold(p)
	d := &DynamoDB{
		URL:   "http://" + l.Addr().String(),
		Proxy: p,
		Hold:  h,
		srv:   &http.Server{Handler: h, ReadHeaderTimeout: 5 * time.Second},
	}
	d.Client = ddbtest.NewClient(d.URL)
	go func() { _ = d.srv.Serve(l) }()
	return d, nil
}

// Close stops the server; held requests are dropped.
func (d *DynamoDB) Close() {
	d.Hold.ReleaseAll()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	_ = d.srv.Shutdown(ctx)
	_ = d.srv.Close()
}

// HoldRule chooses requests to stall.
type HoldRule struct {
	// Op is the DynamoDB operation ("TransactWriteItems"); "" matches all.
	Op string
	// Contains, if set, must occur in the request body (DynamoDB JSON), for
	// example a business item's id.
	Contains string
	// Times is how many requests the rule stalls; 0 means 1.
	Times int
	// OnHold, if set, is called in its own goroutine when a request is
	// stalled: for example to crash the function that sent it.
	OnHold func()
}

// Hold is an http.Handler that stalls the requests a rule matches: a
// stalled request never reaches the endpoint behind it; it waits until its
// client goes away (a function cut off at its timeout) or the hold is
// released, then fails with 503 without having been applied. It models a
// function that stops between two writes. Stalled requests are kept apart
// from the proxy's serialization, so other requests flow meanwhile.
type Hold struct {
	next http.Handler

	mu      sync.Mutex
	rules   []*holdRule
	release chan struct{}
	held    int
	dropped int
}

type holdRule struct {
	HoldRule
	left int
}

// NewHold returns a Hold in front of next.
func NewHold(next http.Handler) *Hold {
	return &Hold{next: next, release: make(chan struct{})}
}

// Add installs a rule.
func (h *Hold) Add(r HoldRule) {
	if r.Times <= 0 {
		r.Times = 1
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.rules = append(h.rules, &holdRule{HoldRule: r, left: r.Times})
}

// ReleaseAll removes every rule and fails every stalled request.
func (h *Hold) ReleaseAll() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.rules = nil
	close(h.release)
	h.release = make(chan struct{})
}

// Stats returns how many requests were stalled, and how many of those
// were abandoned by their client while stalled.
func (h *Hold) Stats() (held, abandoned int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.held, h.dropped
}

// maxHold bounds a stall, so that nothing waits forever.
const maxHold = 2 * time.Minute

func (h *Hold) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(io.LimitReader(r.Body, 16<<20))
	if err != nil {
		http.Error(w, "read body", http.StatusBadRequest)
		return
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	op := r.Header.Get("X-Amz-Target")
	if i := strings.LastIndexByte(op, '.'); i >= 0 {
		op = op[i+1:]
	}
	if release, onHold, ok := h.match(op, body); ok {
		if onHold != nil {
			go onHold()
		}
		t := time.NewTimer(maxHold)
		defer t.Stop()
		select {
		case <-r.Context().Done():
			h.mu.Lock()
			h.dropped++
			h.mu.Unlock()
			return
		case <-release:
		case <-t.C:
		}
		w.Header().Set("Content-Type", "application/x-amz-json-1.0")
		w.WriteHeader(http.StatusServiceUnavailable)
		_, _ = io.WriteString(w, `{"__type":"com.amazonaws.dynamodb.v20120810#ServiceUnavailable","message":"held by the e2e harness"}`)
		return
	}
	// DynamoDB signs every response body with X-Amz-Crc32, which the SDK
	// checks on close (and, absent the header, checks against 0 and logs a
	// warning): the emulator sends none, so add it.
	rec := &bufferedResponse{header: http.Header{}}
	h.next.ServeHTTP(rec, r)
	for k, v := range rec.header {
		w.Header()[k] = v
	}
	if w.Header().Get("X-Amz-Crc32") == "" {
		w.Header().Set("X-Amz-Crc32", strconv.FormatUint(uint64(crc32.ChecksumIEEE(rec.body.Bytes())), 10))
	}
	if rec.status == 0 {
		rec.status = http.StatusOK
	}
	w.WriteHeader(rec.status)
	_, _ = w.Write(rec.body.Bytes())
}

// bufferedResponse records a response to complete it before sending.
type bufferedResponse struct {
	header http.Header
	status int
	body   bytes.Buffer
}

func (b *bufferedResponse) Header() http.Header { return b.header }

func (b *bufferedResponse) WriteHeader(status int) {
	if b.status == 0 {
		b.status = status
	}
}

func (b *bufferedResponse) Write(p []byte) (int, error) {
	if b.status == 0 {
		b.status = http.StatusOK
	}
	return b.body.Write(p)
}

func (h *Hold) match(op string, body []byte) (<-chan struct{}, func(), bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for i, r := range h.rules {
		if r.Op != "" && r.Op != op {
			continue
		}
		if r.Contains != "" && !bytes.Contains(body, []byte(r.Contains)) {
			continue
		}
		r.left--
		if r.left <= 0 {
			h.rules = append(h.rules[:i], h.rules[i+1:]...)
		}
		h.held++
		return h.release, r.OnHold, true
	}
	return nil, nil, false
}
