package ddbtest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// Fault is what the proxy does to a call a [Rule] matches.
type Fault int

// The faults the proxy injects. The first five never reach the emulator;
// the lost ones are applied by the emulator and then lose their answer.
const (
	// NoFault serves the call normally.
	NoFault Fault = iota
	// ProvisionedThroughputExceeded answers 400
	// ProvisionedThroughputExceededException, which the SDK retries.
	ProvisionedThroughputExceeded
	// Throttling answers 400 ThrottlingException, which the SDK retries.
	Throttling
	// InternalServerError answers 500 InternalServerError, which the SDK
	// retries.
	InternalServerError
	// ServiceUnavailable answers 503 ServiceUnavailable, which the SDK
	// retries.
	ServiceUnavailable
	// TransactionConflict answers a TransactWriteItems with 400
	// TransactionCanceledException, every cancellation reason
	// TransactionConflict (the SDK does not retry it).
	TransactionConflict
	// LostResponse applies the call, then answers 500 InternalServerError
	// instead of the real answer: the SDK retries a call that succeeded.
	LostResponse
	// LostConnection applies the call, then closes the connection without
	// an answer: the SDK sees a connection error and retries.
	LostConnection
	// TransactionThrottled answers a TransactWriteItems with 400
	// TransactionCanceledException, the first item's cancellation reason
	// ThrottlingError (None on the others): "There is insufficient
	// provisioned capacity for the transaction to be completed" (DynamoDB
	// API Reference, TransactWriteItems). The SDK does not retry it, unlike
	// the ThrottlingException a single-item write gets.
	TransactionThrottled
	// IdempotentParameterMismatch answers a TransactWriteItems with 400
	// IdempotentParameterMismatchException, as DynamoDB answers a request
	// whose ClientRequestToken an earlier request with other parameters
	// used within 10 minutes. The call is not applied.
	IdempotentParameterMismatch
)

// String returns the fault's name, e.g. "LostResponse".
func (f Fault) String() string {
	names := []string{"NoFault", "ProvisionedThroughputExceeded", "Throttling", "InternalServerError",
		"ServiceUnavailable", "TransactionConflict", "LostResponse", "LostConnection", "TransactionThrottled",
		"IdempotentParameterMismatch"}
	if f >= 0 && int(f) < len(names) {
		return names[f]
	}
	return fmt.Sprintf("Fault(%d)", int(f))
}

// Rule injects a fault into the calls it matches.
type Rule struct {
	// Op is the operation to fault ("TransactWriteItems"); "" matches every
	// operation.
	Op string
	// Fault is what happens to a matched call.
	Fault Fault
	// After lets this many matched calls through before the first fault.
	After int
	// Times is how many matched calls are faulted, after which the rule is
	// spent; 0 faults every matched call until the rule is removed.
	Times int
	// Match, if set, must also accept the request body (DynamoDB JSON).
	Match func(body []byte) bool
	// Hold keeps a matched call waiting this long before it is served.
	// A write held this way is in flight on its items for the whole hold,
	// as a slow DynamoDB write is: other writes on those items meet a
	// transaction conflict (see [Departures].NoTransactionConflicts).
	// Requests on other items are not blocked. A refused call is answered
	// after the hold; a lost one is applied after it. Default 0.
	Hold time.Duration
	// Until, if set, extends the hold until it is closed: a test holds a
	// write in flight for exactly as long as it needs, whatever the
	// scheduler's pace. Default nil.
	Until <-chan struct{}
}

// hold is how long a matched call is held: d, then until until is closed.
type hold struct {
	d     time.Duration
	until <-chan struct{}
}

// wait holds the call, whatever happens to its request: DynamoDB finishes
// a write whose client went away.
func (h hold) wait() {
	if h.d > 0 {
		time.Sleep(h.d)
	}
	if h.until != nil {
		<-h.until
	}
}

// some reports whether the call is held at all.
func (h hold) some() bool { return h.d > 0 || h.until != nil }

type rule struct {
	Rule
	seen, fired int
}

// Inject adds a fault rule; the first rule that matches a call decides it.
// It returns a function that removes the rule.
func (p *Proxy) Inject(r Rule) (remove func()) {
	p.mu.Lock()
	defer p.mu.Unlock()
	rr := &rule{Rule: r}
	p.rules = append(p.rules, rr)
	return func() {
		p.mu.Lock()
		defer p.mu.Unlock()
		p.rules = slices.DeleteFunc(p.rules, func(x *rule) bool { return x == rr })
	}
}

// HoldNext holds the next call of op (every operation for "") until the
// returned release is called, at the latest when the test ends: a
// [Rule] with Until, spent after one call. release may be called more
// than once.
func (p *Proxy) HoldNext(t testing.TB, op string) (release func()) {
	until := make(chan struct{})
	var once sync.Once
	release = func() { once.Do(func() { close(until) }) }
	t.Cleanup(release)
	p.Inject(Rule{Op: op, Until: until, Times: 1})
	return release
}

// ClearFaults removes every fault rule.
func (p *Proxy) ClearFaults() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.rules = nil
}

// fault decides the fault and the hold for one call, spending the
// matching rule.
func (p *Proxy) fault(op string, body []byte) (Fault, hold) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, r := range p.rules {
		if (r.Op != "" && r.Op != op) || (r.Times > 0 && r.fired >= r.Times) {
			continue
		}
		if r.Match != nil && !r.Match(body) {
			continue
		}
		r.seen++
		if r.seen <= r.After {
			return NoFault, hold{}
		}
		r.fired++
		return r.Fault, hold{r.Hold, r.Until}
	}
	return NoFault, hold{}
}

// refuses reports whether f answers without applying the call.
func (f Fault) refuses() bool {
	return f >= ProvisionedThroughputExceeded && f <= TransactionConflict || f == TransactionThrottled || f == IdempotentParameterMismatch
}

// loses reports whether f applies the call and loses its answer.
func (f Fault) loses() bool { return f == LostResponse || f == LostConnection }

// write answers a refused call.
func (f Fault) write(w http.ResponseWriter, body []byte) {
	switch f {
	case ProvisionedThroughputExceeded:
		writeError(w, http.StatusBadRequest, "ProvisionedThroughputExceededException", "injected: the level of configured provisioned throughput for the table was exceeded")
	case Throttling:
		writeError(w, http.StatusBadRequest, "ThrottlingException", "injected: rate of requests exceeds the allowed throughput")
	case InternalServerError:
		writeError(w, http.StatusInternalServerError, "InternalServerError", "injected: internal server error")
	case ServiceUnavailable:
		writeError(w, http.StatusServiceUnavailable, "ServiceUnavailable", "injected: service unavailable")
	case TransactionConflict:
		var in struct{ TransactItems []json.RawMessage }
		_ = json.Unmarshal(body, &in)
		reasons := make([]map[string]any, len(in.TransactItems))
		for i := range reasons {
			reasons[i] = map[string]any{"Code": "TransactionConflict", "Message": "Transaction is ongoing for the item"}
		}
		writeJSON(w, http.StatusBadRequest, map[string]any{
			"__type":              "com.amazonaws.dynamodb.v20120810#TransactionCanceledException",
			"message":             "injected: Transaction cancelled, please refer cancellation reasons for specific reasons [TransactionConflict]",
			"CancellationReasons": reasons,
		})
	case IdempotentParameterMismatch:
		writeError(w, http.StatusBadRequest, "IdempotentParameterMismatchException", "injected: The request uses the same client token as a previous, but non-identical request.")
	case TransactionThrottled:
		var in struct{ TransactItems []json.RawMessage }
		_ = json.Unmarshal(body, &in)
		reasons := make([]map[string]any, len(in.TransactItems))
		codes := make([]string, len(reasons))
		for i := range reasons {
			reasons[i], codes[i] = map[string]any{"Code": "None"}, "None"
		}
		if len(reasons) > 0 {
			reasons[0] = map[string]any{"Code": "ThrottlingError", "Message": "Throughput exceeds the current capacity of your table or index. DynamoDB is automatically scaling your table or index so please try again shortly."}
			codes[0] = "ThrottlingError"
		}
		writeJSON(w, http.StatusBadRequest, map[string]any{
			"__type":              "com.amazonaws.dynamodb.v20120810#TransactionCanceledException",
			"message":             "injected: Transaction cancelled, please refer cancellation reasons for specific reasons [" + strings.Join(codes, ", ") + "]",
			"CancellationReasons": reasons,
		})
	}
}

// lose drops the answer of a call that was applied.
func (f Fault) lose(w http.ResponseWriter) {
	if f == LostConnection {
		if hj, ok := w.(http.Hijacker); ok {
			if conn, _, err := hj.Hijack(); err == nil {
				_ = conn.Close()
				return
			}
		}
	}
	writeError(w, http.StatusInternalServerError, "InternalServerError", "injected: the response was lost")
}

// writeError writes a DynamoDB JSON error.
func writeError(w http.ResponseWriter, status int, code, msg string) {
	writeJSON(w, status, map[string]any{"__type": "com.amazonaws.dynamodb.v20120810#" + code, "message": msg})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	b, _ := json.Marshal(v)
	w.Header().Set("Content-Type", "application/x-amz-json-1.0")
	w.WriteHeader(status)
	_, _ = w.Write(b)
}
