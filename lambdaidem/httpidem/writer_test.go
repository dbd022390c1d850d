package httpidem_test

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lambdaidem/lambdaidem/lambdaidem"
	"github.com/lambdaidem/lambdaidem/lambdaidem/httpidem"
	"github.com/lambdaidem/lambdaidem/lambdaidem/memstore"
)

// newMiddleware returns the middleware for "CreatePayment" over store, in
// a container: the caller is the X-User header, as a test's stand-in for
// a verified identity.
func newMiddleware(t *testing.T, store lambdaidem.Store, guardOpts func(*lambdaidem.Options), optFns ...func(*httpidem.Options)) func(http.Handler) http.Handler {
	t.Helper()
	g, err := lambdaidem.New(store, func(o *lambdaidem.Options) {
		o.Logger = discard
		if guardOpts != nil {
			guardOpts(o)
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	mw, err := httpidem.New(g, "CreatePayment", append([]func(*httpidem.Options){func(o *httpidem.Options) {
		o.Scope = func(r *http.Request) (string, error) { return "user:" + r.Header.Get("X-User"), nil }
		o.Logger = discard
	}}, optFns...)...)
	if err != nil {
		t.Fatal(err)
	}
	return mw
}

// post is a keyed POST /payments from user alice.
func post(body string) *http.Request {
	r := httptest.NewRequest(http.MethodPost, "/payments", strings.NewReader(body))
	r.Header.Set("Idempotency-Key", "k-1")
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set("X-User", "alice")
	return r
}

func serve(h http.Handler, r *http.Request) *httptest.ResponseRecorder {
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, r)
	return rec
}

// What a keyed request's handler meets in its ResponseWriter, one
// behaviour per row: each is documented in the package doc.
func TestResponseWriterBehaviours(t *testing.T) {
	cases := []struct {
		name    string
		handler func(t *testing.T, w http.ResponseWriter, r *http.Request)
		// first and replay are the status and body of the first answer and
		// of the replay.
		status int
		body   string
		check  func(t *testing.T, first, replay *httptest.ResponseRecorder)
	}{
		{
			name: "Flush through http.ResponseController is deferred: the response is written whole after the commit",
			handler: func(t *testing.T, w http.ResponseWriter, r *http.Request) {
				w.WriteHeader(http.StatusCreated)
				_, _ = io.WriteString(w, "part 1;")
				if err := http.NewResponseController(w).Flush(); err != nil {
					t.Errorf("Flush: %v", err)
				}
				w.(http.Flusher).Flush()
				_, _ = io.WriteString(w, "part 2")
			},
			status: 201, body: "part 1;part 2",
			check: func(t *testing.T, first, _ *httptest.ResponseRecorder) {
				if first.Flushed {
					t.Error("the server's writer was flushed before the commit")
				}
			},
		},
		{
			name: "Hijack fails with ErrHijack, which matches http.ErrNotSupported",
			handler: func(t *testing.T, w http.ResponseWriter, r *http.Request) {
				_, _, err := http.NewResponseController(w).Hijack()
				if !errors.Is(err, httpidem.ErrHijack) || !errors.Is(err, http.ErrNotSupported) {
					t.Errorf("Hijack through ResponseController: %v, want ErrHijack", err)
				}
				if _, _, err := w.(http.Hijacker).Hijack(); !errors.Is(err, httpidem.ErrHijack) {
					t.Errorf("Hijack: %v, want ErrHijack", err)
				}
				w.WriteHeader(http.StatusCreated)
			},
			status: 201, body: "",
		},
		{
			name: "a 1xx status (103 Early Hints) is dropped: neither sent nor stored",
			handler: func(t *testing.T, w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Link", "</style.css>; rel=preload")
				w.WriteHeader(http.StatusEarlyHints)
				w.WriteHeader(http.StatusCreated)
				_, _ = io.WriteString(w, "done")
			},
			status: 201, body: "done",
		},
		{
			name: "headers changed after WriteHeader are ignored, as net/http ignores them",
			handler: func(t *testing.T, w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "text/plain")
				w.WriteHeader(http.StatusCreated)
				w.Header().Set("Content-Type", "application/json")
				w.Header().Set("Etag", `"late"`)
			},
			status: 201, body: "",
			check: func(t *testing.T, first, replay *httptest.ResponseRecorder) {
				for _, rec := range []*httptest.ResponseRecorder{first, replay} {
					if ct, et := rec.Header().Get("Content-Type"), rec.Header().Get("Etag"); ct != "text/plain" || et != "" {
						t.Errorf("Content-Type %q, ETag %q; want the headers as they were at WriteHeader", ct, et)
					}
				}
			},
		},
		{
			name:    "a handler that writes nothing answers 200, stored",
			handler: func(t *testing.T, w http.ResponseWriter, r *http.Request) {},
			status:  200, body: "",
		},
		{
			name: "a binary body is replayed byte for byte",
			handler: func(t *testing.T, w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "application/octet-stream")
				_, _ = w.Write([]byte{0xff, 0x00, 0xfe, 'a'})
			},
			status: 200, body: "\xff\x00\xfea",
		},
		{
			name: "read and write deadlines reach the server's writer through Unwrap",
			handler: func(t *testing.T, w http.ResponseWriter, r *http.Request) {
				// httptest's recorder has no deadlines: the call reaches it
				// (through Unwrap) and reports it cannot.
				if err := http.NewResponseController(w).SetWriteDeadline(timeZero); !errors.Is(err, http.ErrNotSupported) {
					t.Errorf("SetWriteDeadline: %v, want the recorder's ErrNotSupported", err)
				}
				w.WriteHeader(http.StatusAccepted)
			},
			status: 202, body: "",
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var runs atomic.Int32
			h := newMiddleware(t, memstore.New(), nil)(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				runs.Add(1)
				c.handler(t, w, r)
			}))
			first := serve(h, post(`{}`))
			replay := serve(h, post(`{}`))
			for i, rec := range []*httptest.ResponseRecorder{first, replay} {
				if rec.Code != c.status || rec.Body.String() != c.body {
					t.Errorf("answer %d: %d %q, want %d %q", i, rec.Code, rec.Body.String(), c.status, c.body)
				}
			}
			if replay.Header().Get("Idempotent-Replayed") != "true" || runs.Load() != 1 {
				t.Errorf("second answer not a replay (%v) after %d runs", replay.Header(), runs.Load())
			}
			if c.check != nil {
				c.check(t, first, replay)
			}
		})
	}
}

// The handler gets the body the client sent, byte for byte, once the
// middleware has read it to fingerprint it; a request that passes through
// is not read at all.
func TestBodyReadOnceAndHandedOnIntact(t *testing.T) {
	body := "\x00binary\xff" + strings.Repeat("x", 70_000)
	var got []byte
	var gotLength int64
	h := newMiddleware(t, memstore.New(), nil)(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got, _ = io.ReadAll(r.Body)
		gotLength = r.ContentLength
		w.WriteHeader(http.StatusCreated)
	}))
	r := post(body)
	r.Header.Set("Content-Type", "application/octet-stream")
	if rec := serve(h, r); rec.Code != 201 || !bytes.Equal(got, []byte(body)) || gotLength != int64(len(body)) {
		t.Fatalf("%d: handler got %d bytes (length %d), want the %d sent", rec.Code, len(got), gotLength, len(body))
	}

	// Passing through: the handler reads the client's own reader.
	reader := &countingReader{r: strings.NewReader("streamed")}
	pass := httptest.NewRequest(http.MethodPut, "/payments", reader)
	var read int
	h = newMiddleware(t, memstore.New(), nil)(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if reader.n.Load() != 0 {
			t.Error("the middleware read a body it does not fingerprint")
		}
		b, _ := io.ReadAll(r.Body)
		read = len(b)
	}))
	serve(h, pass)
	if read != len("streamed") {
		t.Fatalf("handler read %d bytes, want %d", read, len("streamed"))
	}
}

type countingReader struct {
	r io.Reader
	n atomic.Int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n.Add(int64(n))
	return n, err
}

// A keyed body above MaxBodySize is refused with 413 before the handler
// runs, read no further than the cap, whether its length is declared or
// not.
func TestBodyAboveMaxBodySize(t *testing.T) {
	var runs atomic.Int32
	h := newMiddleware(t, memstore.New(), nil, func(o *httpidem.Options) { o.MaxBodySize = 100 })(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		runs.Add(1)
	}))
	declared := post(strings.Repeat("x", 101))
	undeclared := post("")
	reader := &countingReader{r: strings.NewReader(strings.Repeat("x", 10_000))}
	undeclared.Body, undeclared.ContentLength = io.NopCloser(reader), -1
	for name, r := range map[string]*http.Request{"declared": declared, "undeclared": undeclared} {
		rec := serve(h, r)
		if rec.Code != http.StatusRequestEntityTooLarge || !strings.Contains(rec.Body.String(), httpidem.ProblemRequestTooLarge) {
			t.Errorf("%s: %d %s, want 413 %s", name, rec.Code, rec.Body.String(), httpidem.ProblemRequestTooLarge)
		}
	}
	if n := reader.n.Load(); n > 101+512 {
		t.Errorf("read %d bytes of an undeclared body; the cap is 100", n)
	}
	if exact := serve(h, post(strings.Repeat("x", 100))); exact.Code != http.StatusOK {
		t.Errorf("a body of exactly MaxBodySize: %d, want it run", exact.Code)
	}
	if runs.Load() != 1 {
		t.Errorf("%d runs, want 1", runs.Load())
	}
}

// Outer middleware's headers (CORS for this origin, say) are written with
// a replay, and OnReplay may add more.
func TestReplayKeepsOuterHeadersAndOnReplay(t *testing.T) {
	mw := newMiddleware(t, memstore.New(), nil, func(o *httpidem.Options) {
		o.OnReplay = func(r *http.Request, h http.Header) { h.Set("X-Replay-Of", r.Header.Get("Idempotency-Key")) }
	})
	inner := mw(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Access-Control-Allow-Origin", "https://first.example")
		w.WriteHeader(http.StatusCreated)
	}))
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Vary", "Origin")
		inner.ServeHTTP(w, r)
	})
	serve(h, post(`{}`))
	replay := serve(h, post(`{}`))
	if replay.Header().Get("Vary") != "Origin" || replay.Header().Get("X-Replay-Of") != "k-1" || replay.Header().Get("Access-Control-Allow-Origin") != "" {
		t.Fatalf("replay headers %v: want the outer Vary, OnReplay's header, and no stored CORS header", replay.Header())
	}
}

// New validates its options; the middleware it returns cannot fail.
func TestNewValidates(t *testing.T) {
	g, _ := lambdaidem.New(memstore.New())
	cases := map[string]struct {
		g   *lambdaidem.Guard
		op  string
		opt func(*httpidem.Options)
	}{
		"nil guard":         {nil, "Op", nil},
		"empty operation":   {g, "", nil},
		"negative body cap": {g, "Op", func(o *httpidem.Options) { o.MaxBodySize = -1 }},
		"bad header name":   {g, "Op", func(o *httpidem.Options) { o.Header = "Idempotency Key" }},
		"bad method":        {g, "Op", func(o *httpidem.Options) { o.RequireKey = []string{"PO ST"} }},
		"negative key cap":  {g, "Op", func(o *httpidem.Options) { o.MaxKeyLength = -1 }},
		"unknown parts":     {g, "Op", func(o *httpidem.Options) { o.Parts = 1 << 7 }},
		"empty claim name":  {g, "Op", func(o *httpidem.Options) { o.IdentityClaims = []string{""} }},
	}
	for name, c := range cases {
		opts := []func(*httpidem.Options){}
		if c.opt != nil {
			opts = append(opts, c.opt)
		}
		if mw, err := httpidem.New(c.g, c.op, opts...); err == nil || mw != nil || !strings.HasPrefix(err.Error(), "httpidem: ") {
			t.Errorf("%s: New = %v, %v; want an httpidem error", name, mw != nil, err)
		}
	}
	mw, err := httpidem.New(g, "Op")
	if err != nil {
		t.Fatal(err)
	}
	if rec := serve(mw(nil), httptest.NewRequest(http.MethodGet, "/", nil)); rec.Code != http.StatusInternalServerError {
		t.Fatalf("a nil handler answers %d, want 500", rec.Code)
	}
}

var timeZero time.Time

// A body past the Guard's MaxOutcomeSize fails the handler's Write with
// ErrResponseTooLarge, so the capture stays bounded and a streaming
// handler can stop; the request is answered 500 response-too-large and
// nothing is stored.
func TestResponseAboveTheOutcomeCap(t *testing.T) {
	var writeErr error
	var written int
	var runs atomic.Int32
	h := newMiddleware(t, memstore.New(), func(o *lambdaidem.Options) { o.MaxOutcomeSize = 1000 })(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		runs.Add(1)
		chunk := []byte(strings.Repeat("x", 400))
		for range 10 {
			n, err := w.Write(chunk)
			written += n
			if err != nil {
				writeErr = err
				return
			}
		}
	}))
	rec := serve(h, post(`{}`))
	if !errors.Is(writeErr, httpidem.ErrResponseTooLarge) || written > 1000 {
		t.Fatalf("Write: %v after %d bytes; want ErrResponseTooLarge within the cap", writeErr, written)
	}
	if rec.Code != 500 || !strings.Contains(rec.Body.String(), httpidem.ProblemResponseTooLarge) {
		t.Fatalf("%d %s, want 500 %s", rec.Code, rec.Body.String(), httpidem.ProblemResponseTooLarge)
	}
	if serve(h, post(`{}`)); runs.Load() != 2 {
		t.Fatalf("%d runs: the retry must run again", runs.Load())
	}
}
