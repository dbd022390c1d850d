package lambdaidem_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/lambdaidem/lambdaidem/lambdaidem"
	"github.com/lambdaidem/lambdaidem/lambdaidem/memstore"
)

// mailProvider stands in for an email API: POST /send sends a message
// (deduplicated by its Idempotency-Key header), GET /messages?ref=… lists
// the messages sent with a client reference. It cannot be queried by
// idempotency key, only by reference. dropNext loses the response of the
// next send after sending, as a timeout does.
type mailProvider struct {
	mu         sync.Mutex
	sent       map[string]string // idempotency key → reference
	dropNext   bool
	refuseNext bool // answer the next send with 503, sending nothing
}

func (p *mailProvider) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	p.mu.Lock()
	defer p.mu.Unlock()
	switch {
	case r.Method == http.MethodPost && r.URL.Path == "/send" && p.refuseNext:
		p.refuseNext = false
		w.WriteHeader(http.StatusServiceUnavailable)
	case r.Method == http.MethodPost && r.URL.Path == "/send":
		if _, dup := p.sent[r.Header.Get("Idempotency-Key")]; !dup {
			p.sent[r.Header.Get("Idempotency-Key")] = r.FormValue("ref")
			fmt.Println("provider: email sent to", r.FormValue("to"))
		}
		if p.dropNext {
			p.dropNext = false
			conn, _, _ := w.(http.Hijacker).Hijack() // the response never arrives
			_ = conn.Close()
			return
		}
		_, _ = fmt.Fprint(w, `{"status":"queued"}`)
	case r.Method == http.MethodGet && r.URL.Path == "/messages":
		var refs []string
		for _, ref := range p.sent {
			if ref == r.URL.Query().Get("ref") {
				refs = append(refs, ref)
			}
		}
		_ = json.NewEncoder(w).Encode(refs)
	}
}

// An EventBridge consumer that sends a welcome email through an external
// API. BeginExternal marks the record before the email goes out, so an
// attempt that fails after sending (here: the provider's response is lost)
// leaves the record UNKNOWN instead of letting a retry send again. When
// EventBridge delivers the event again, Reconcile gets that event and asks
// the provider, by the event's id as client reference, whether the email
// went out: it did, so the outcome is committed without sending twice.
func ExampleSpec_reconcile() {
	provider := &mailProvider{sent: map[string]string{}, dropNext: true}
	srv := httptest.NewServer(provider)
	defer srv.Close()
	handler := welcomeConsumer(srv.URL)

	ev := events.EventBridgeEvent{
		Version: "0", ID: "1f6a5c1e-5e0b-4b8e-9a0c-0d9d1b6b2a11", DetailType: "UserSignedUp",
		Source: "com.example.accounts", Detail: json.RawMessage(`{"email":"ada@example.com"}`),
	}
	if _, err := handler(context.Background(), ev); err != nil {
		fmt.Println("first attempt failed after sending; the record is UNKNOWN")
	}
	out, err := handler(context.Background(), ev) // EventBridge delivers the event again
	fmt.Println(out, err)
	_, err = handler(context.Background(), ev)
	fmt.Println("a later duplicate:", err == nil, errors.Is(err, lambdaidem.ErrOutcomeUnknown))
	fmt.Println("emails sent:", len(provider.sent))
	// Output:
	// provider: email sent to ada@example.com
	// first attempt failed after sending; the record is UNKNOWN
	// welcome email sent <nil>
	// a later duplicate: true false
	// emails sent: 1
}

// welcomeConsumer is the example's EventBridge consumer over the provider
// at baseURL.
func welcomeConsumer(baseURL string) lambdaidem.Handler[events.EventBridgeEvent, string] {
	client := &http.Client{Timeout: 2 * time.Second}

	guard, _ := lambdaidem.New(memstore.New(), func(o *lambdaidem.Options) {
		o.RetryHorizon = 30 * time.Hour // EventBridge retries for 24 h, Lambda's queue up to 6 h more
	})
	welcome, _ := lambdaidem.NewWrapper(guard, lambdaidem.Spec[events.EventBridgeEvent, string]{
		Operation: "SendWelcomeEmail",
		Key:       func(_ context.Context, e events.EventBridgeEvent) (string, error) { return e.Source + "/" + e.ID, nil },
		Reconcile: func(ctx context.Context, e events.EventBridgeEvent, u lambdaidem.Unknown) (string, bool, error) {
			req, _ := http.NewRequestWithContext(ctx, http.MethodGet, baseURL+"/messages?ref="+url.QueryEscape(e.ID), nil)
			resp, err := client.Do(req)
			if err != nil {
				return "", false, err // cannot tell yet: the duplicate gets ErrOutcomeUnknown
			}
			defer resp.Body.Close()
			var refs []string
			if err := json.NewDecoder(resp.Body).Decode(&refs); err != nil {
				return "", false, err
			}
			if len(refs) == 0 {
				return "", false, nil // never sent: run the handler again
			}
			return "welcome email sent", true, nil
		},
	})
	return welcome.Wrap(func(ctx context.Context, e events.EventBridgeEvent) (string, error) {
		var d struct {
			Email string `json:"email"`
		}
		if err := json.Unmarshal(e.Detail, &d); err != nil {
			return "", lambdaidem.Terminal(err)
		}
		attempt, _ := lambdaidem.AttemptFrom(ctx)
		if err := attempt.BeginExternal(ctx); err != nil {
			return "", err // nothing sent
		}
		form := url.Values{"to": {d.Email}, "ref": {e.ID}}
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, baseURL+"/send", strings.NewReader(form.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("Idempotency-Key", attempt.OperationKey()) // the same for every attempt
		resp, err := client.Do(req)
		if err != nil {
			return "", fmt.Errorf("send welcome email: %w", err)
		}
		resp.Body.Close()
		if resp.StatusCode/100 != 2 {
			// Most likely not sent, but a failure after BeginExternal keeps
			// the record UNKNOWN: Reconcile decides.
			return "", fmt.Errorf("send welcome email: the provider answered %s", resp.Status)
		}
		return "welcome email sent", nil
	})
}

// When the provider never got the email (it refused the send), Reconcile
// finds nothing under the event's reference, the record is released, and
// the same delivery sends it: once.
func TestReconcileOfAnEmailNeverSentSendsIt(t *testing.T) {
	provider := &mailProvider{sent: map[string]string{}, refuseNext: true}
	srv := httptest.NewServer(provider)
	defer srv.Close()
	handler := welcomeConsumer(srv.URL)
	ev := events.EventBridgeEvent{ID: "e-2", Source: "com.example.accounts", Detail: json.RawMessage(`{"email":"bob@example.com"}`)}
	if _, err := handler(context.Background(), ev); err == nil {
		t.Fatal("first attempt succeeded against a refusing provider")
	}
	if out, err := handler(context.Background(), ev); err != nil || out != "welcome email sent" || len(provider.sent) != 1 {
		t.Fatalf("redelivery = %q, %v with %d emails sent; want the email sent once", out, err, len(provider.sent))
	}
}
