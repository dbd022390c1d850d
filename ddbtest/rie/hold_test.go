package rie

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestHoldStallsMatchingRequestsUntilTheClientGoesAway: a matched request
// never reaches the endpoint; it waits until its client goes away, and
// counts as abandoned; unmatched requests and those after the rule is
// spent are served.
func TestHoldStallsMatchingRequestsUntilTheClientGoesAway(t *testing.T) {
	var served sync.Map
	next := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		served.Store(r.Header.Get("X-Amz-Target"), true)
		_, _ = io.WriteString(w, `{}`)
	})
	h := NewHold(next)
	fired := make(chan struct{})
	h.Add(HoldRule{Op: "TransactWriteItems", Contains: "pay-7", OnHold: func() { close(fired) }})
	srv := httptest.NewServer(h)
	defer srv.Close()

	send := func(ctx context.Context, op, body string) (*http.Response, error) {
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL, strings.NewReader(body))
		req.Header.Set("X-Amz-Target", "DynamoDB_20120810."+op)
		return http.DefaultClient.Do(req)
	}
	// Not matched: served.
	resp, err := send(t.Context(), "TransactWriteItems", `{"id":"pay-8"}`)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if _, ok := served.Load("DynamoDB_20120810.TransactWriteItems"); !ok || resp.StatusCode != 200 {
		t.Fatalf("an unmatched request was not served: %d", resp.StatusCode)
	}
	served.Delete("DynamoDB_20120810.TransactWriteItems")
	// Matched: stalled, never served; the client gives up.
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() {
		_, err := send(ctx, "TransactWriteItems", `{"id":"pay-7"}`)
		done <- err
	}()
	select {
	case <-fired:
	case <-time.After(5 * time.Second):
		t.Fatal("OnHold not called")
	}
	cancel()
	if err := <-done; err == nil {
		t.Fatal("the stalled request answered")
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		if held, abandoned := h.Stats(); held == 1 && abandoned == 1 {
			break
		}
		if time.Now().After(deadline) {
			held, abandoned := h.Stats()
			t.Fatalf("stats: held %d abandoned %d, want 1 1", held, abandoned)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if _, ok := served.Load("DynamoDB_20120810.TransactWriteItems"); ok {
		t.Fatal("the stalled request reached the endpoint")
	}
	// The rule is spent: the same request now goes through.
	resp, err = send(t.Context(), "TransactWriteItems", `{"id":"pay-7"}`)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("after the rule was spent: %v %v", resp, err)
	}
	resp.Body.Close()
}
