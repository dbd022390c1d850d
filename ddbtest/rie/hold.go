package rie

import (
	"bytes"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"
)

// HoldRule chooses requests a [Hold] stalls.
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

// Hold is an http.Handler in front of a DynamoDB endpoint (a
// ddbtest.Proxy, for one) that stalls the requests a rule matches: a
// stalled request never reaches the endpoint behind it; it waits until its
// client goes away (a function cut off at its timeout) or the hold is
// released, then fails with 503 (ServiceUnavailable) without having been
// applied. It models a function stopped between two writes: the commit
// never lands.
//
// For the other case, a commit that lands after the function was cut off
// (DynamoDB finishes a write whose client went away), hold it in the
// ddbtest.Proxy instead: a ddbtest.Rule with Until (or Hold) delays the
// call and then applies it.
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

// heldAnswer is the DynamoDB error a released or timed-out stall answers.
const heldAnswer = `{"__type":"com.amazonaws.dynamodb.v20120810#ServiceUnavailable","message":"held by the test harness"}`

// ServeHTTP implements http.Handler.
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
	release, onHold, ok := h.match(op, body)
	if !ok {
		h.next.ServeHTTP(w, r)
		return
	}
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
	_, _ = io.WriteString(w, heldAnswer)
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
