package ddbtest

import (
	"bytes"
	"io"
	"maps"
	"net/http"
	"strings"
	"sync"
	"time"
)

// ProxyOptions configure a [Proxy]. The zero value is valid.
type ProxyOptions struct {
	// Backend is what the proxy fronts: the proxy corrects only the
	// departures Backend.Departs lists. Default: [Minidyn].
	Backend Backend
	// Departures lists the emulator departures from DynamoDB the proxy
	// lets through. Default: none, the proxy behaves like DynamoDB.
	Departures Departures
	// Latency is added to every call before it is served, outside the
	// serialization, as a network round trip would be. Default 0.
	Latency time.Duration
	// Now is the proxy's clock, for the 10-minute ClientRequestToken window.
	// Default time.Now.
	Now func() time.Time
}

// Proxy is an http.Handler in front of a DynamoDB emulator. It serializes
// requests (a held write waits outside the serialization, in flight; see
// [Rule].Hold), counts calls by operation (the X-Amz-Target header), adds
// latency, injects faults by [Rule], and corrects the emulator's departures
// from DynamoDB (see the package documentation and [Departures]). Its
// methods are safe for concurrent use, also while requests are served.
type Proxy struct {
	next    http.Handler
	now     func() time.Time
	backend Backend

	serial sync.Mutex // held while a request is served

	mu         sync.Mutex // guards the fields below
	departures Departures
	latency    time.Duration
	calls      map[string]int
	rules      []*rule
	tokens     map[string]tokenUse   // ClientRequestToken → first success
	cancels    map[string]cancelUse  // ClientRequestToken → cancellation, when remembered (cancelmemory.go)
	ttl        map[string]ttlSetting // table → TTL setting
	schemas    map[string][]string   // table → key attribute names
	flights    []*flight             // writes in flight (see conflicts.go)
	ledger     ledger                // capacity charged (capacity.go)
	conflicts  int                   // writes refused for a transaction conflict
	fid        fidelityState         // tables and recording (fidelity hook, record.go)
}

// NewProxy returns a proxy in front of next, a DynamoDB emulator: by
// default minidyn ([NewEmulator]); another one through [Forward], with
// ProxyOptions.Backend saying which.
func NewProxy(next http.Handler, optFns ...func(*ProxyOptions)) *Proxy {
	var o ProxyOptions
	for _, fn := range optFns {
		fn(&o)
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Backend.Name == "" {
		o.Backend = Minidyn()
	}
	return &Proxy{
		next:       next,
		now:        o.Now,
		backend:    o.Backend,
		departures: o.Departures,
		latency:    o.Latency,
		calls:      map[string]int{},
		tokens:     map[string]tokenUse{},
		ttl:        map[string]ttlSetting{},
		schemas:    map[string][]string{},
	}
}

// Backend returns the backend the proxy fronts.
func (p *Proxy) Backend() Backend { return p.backend }

// SetDepartures changes which emulator departures the proxy lets through.
// A departure its backend does not have is never corrected (see
// [Backend]): letting it through changes nothing.
func (p *Proxy) SetDepartures(d Departures) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.departures = d
}

// SetLatency changes the latency added to every call.
func (p *Proxy) SetLatency(d time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.latency = d
}

// Calls returns how many calls the proxy received, by operation
// ("PutItem", "TransactWriteItems", …), SDK retries and faulted calls
// included, since it started or since the last ResetCalls. The proxy's own
// reads of the emulator are not counted.
func (p *Proxy) Calls() map[string]int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return maps.Clone(p.calls)
}

// Count returns how many calls of operation op the proxy received.
func (p *Proxy) Count(op string) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.calls[op]
}

// Total returns how many calls the proxy received, all operations together.
func (p *Proxy) Total() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := 0
	for _, c := range p.calls {
		n += c
	}
	return n
}

// ResetCalls sets every call count to zero.
func (p *Proxy) ResetCalls() {
	p.mu.Lock()
	defer p.mu.Unlock()
	clear(p.calls)
}

// ServeHTTP serves one DynamoDB JSON API request.
func (p *Proxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	op := operation(r)
	body, err := io.ReadAll(r.Body)
	if err != nil {
		writeError(w, http.StatusBadRequest, "SerializationException", "cannot read the request body")
		return
	}
	p.mu.Lock()
	p.calls[op]++
	latency, dep := p.latency, p.backend.effective(p.departures)
	p.mu.Unlock()
	if latency > 0 {
		t := time.NewTimer(latency)
		select {
		case <-r.Context().Done():
			t.Stop()
			return
		case <-t.C:
		}
	}

	token, canon := "", ""
	if op == "TransactWriteItems" {
		token, canon = transactToken(body)
		if resp, ok := p.rememberedCancellation(token, canon); ok {
			resp.write(w)
			return
		}
	}
	fault, hold := p.fault(op, body)
	if fault.refuses() {
		hold.wait()
		rec := &recorder{header: http.Header{}, status: http.StatusOK}
		fault.write(rec, body)
		resp := response{status: rec.status, header: rec.header, body: rec.body.Bytes()}
		p.rememberCancellation(token, canon, resp)
		resp.write(w)
		return
	}
	if op == "CreateTable" || op == "DeleteTable" {
		p.forgetSchema(body)
	}
	resp := p.apply(dep, op, r.Header, body, hold)
	p.rememberCancellation(token, canon, resp)
	if fault.loses() {
		fault.lose(w)
		return
	}
	resp.write(w)
}

// forgetSchema drops the remembered key schema of the table a CreateTable
// or DeleteTable names.
func (p *Proxy) forgetSchema(body []byte) {
	in, err := object(body)
	if err != nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.schemas, text(in["TableName"]))
}

// operation is the operation name from X-Amz-Target
// ("DynamoDB_20120810.PutItem" → "PutItem").
func operation(r *http.Request) string {
	target := r.Header.Get("X-Amz-Target")
	return target[strings.LastIndex(target, ".")+1:]
}

// response is an answer from the emulator, or made by the proxy.
type response struct {
	status int
	header http.Header
	body   []byte
}

func (r response) write(w http.ResponseWriter) {
	for k, v := range r.header {
		if k == "Content-Length" || k == crcHeader {
			continue
		}
		w.Header()[k] = v
	}
	w.Header().Set(crcHeader, bodyCRC(r.body))
	w.WriteHeader(r.status)
	_, _ = w.Write(r.body)
}

// call sends one request to the emulator, without counting it.
func (p *Proxy) call(op string, header http.Header, body []byte) response {
	req, _ := http.NewRequest(http.MethodPost, "/", bytes.NewReader(body))
	if header != nil {
		req.Header = header.Clone()
	}
	req.Header.Set("X-Amz-Target", "DynamoDB_20120810."+op)
	req.Header.Set("Content-Type", "application/x-amz-json-1.0")
	rec := &recorder{header: http.Header{}, status: http.StatusOK}
	p.next.ServeHTTP(rec, req)
	return response{status: rec.status, header: rec.header, body: rec.body.Bytes()}
}

// recorder is a minimal http.ResponseWriter that keeps the response.
type recorder struct {
	header      http.Header
	status      int
	wroteHeader bool
	body        bytes.Buffer
}

func (r *recorder) Header() http.Header { return r.header }

func (r *recorder) WriteHeader(status int) {
	if !r.wroteHeader {
		r.status, r.wroteHeader = status, true
	}
}

func (r *recorder) Write(b []byte) (int, error) {
	r.WriteHeader(http.StatusOK)
	return r.body.Write(b)
}
