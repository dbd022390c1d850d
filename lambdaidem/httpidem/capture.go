package httpidem

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"errors"
	"fmt"
	"net"
	"net/http"
	"unicode/utf8"

	"github.com/lambdaidem/lambdaidem/lambdaidem/internal/httpengine"
)

// The errors a keyed request's handler may get from its ResponseWriter.
var (
	// ErrResponseTooLarge is what Write returns once the response body has
	// passed the Guard's MaxOutcomeSize: it could not be stored for replay.
	// The request is answered with 500, [ProblemResponseTooLarge]; nothing
	// is committed and the claim is released.
	ErrResponseTooLarge = errors.New("httpidem: response larger than the outcome the Guard stores (MaxOutcomeSize)")
	// ErrHijack is what Hijack returns (through http.ResponseController,
	// too): a keyed request's response is stored and replayed, which a
	// hijacked connection cannot be. It matches http.ErrNotSupported.
	ErrHijack = fmt.Errorf("httpidem: a keyed request's connection cannot be hijacked: %w", http.ErrNotSupported)
)

// capture is the ResponseWriter a keyed request's handler writes to: it
// holds the status, the headers and up to limit bytes of body, for the
// middleware to store and then write.
//
//   - WriteHeader with a 1xx status (103 Early Hints, 100 Continue) is
//     dropped: informational responses are neither sent nor stored.
//   - Flush (http.Flusher, and http.ResponseController's FlushError) does
//     nothing: the response is written whole once it is committed.
//   - Hijack fails with [ErrHijack].
//   - Write past limit fails with [ErrResponseTooLarge].
//   - Anything else http.ResponseController asks for (read and write
//     deadlines, full duplex) goes to the server's writer, by Unwrap.
type capture struct {
	under  http.ResponseWriter
	header http.Header // the handler's, until the status is written
	sent   http.Header // header as it was when the status was written
	status int
	body   bytes.Buffer
	limit  int
	over   bool
}

func (c *capture) Header() http.Header { return c.header }

func (c *capture) WriteHeader(status int) {
	if c.status != 0 || status >= 100 && status < 200 {
		return
	}
	c.status = status
	// As net/http: changing the header map after WriteHeader has no effect.
	c.sent = c.header.Clone()
}

func (c *capture) Write(p []byte) (int, error) {
	if c.status == 0 {
		c.WriteHeader(http.StatusOK)
	}
	if c.over || c.body.Len()+len(p) > c.limit {
		c.over = true
		return 0, ErrResponseTooLarge
	}
	return c.body.Write(p)
}

// Flush does nothing: see [capture].
func (c *capture) Flush() {}

// FlushError does nothing: see [capture].
func (c *capture) FlushError() error { return nil }

// Hijack fails: see [capture].
func (c *capture) Hijack() (net.Conn, *bufio.ReadWriter, error) { return nil, nil, ErrHijack }

// Unwrap returns the server's writer, for http.ResponseController.
func (c *capture) Unwrap() http.ResponseWriter { return c.under }

// response is what the handler wrote, as the engine stores it: the body as
// a string if it is UTF-8, base64-encoded otherwise.
func (c *capture) response() httpengine.Response {
	c.finish()
	b := c.body.Bytes()
	if utf8.Valid(b) {
		return httpengine.Response{Status: c.status, Header: c.sent, Body: string(b)}
	}
	return httpengine.Response{Status: c.status, Header: c.sent, Body: base64.StdEncoding.EncodeToString(b), Base64: true}
}

// finish writes the status a handler that wrote nothing answers with, as
// net/http does: 200.
func (c *capture) finish() {
	if c.status == 0 {
		c.WriteHeader(http.StatusOK)
	}
}

// writeTo writes what the handler wrote to w, headers and all.
func (c *capture) writeTo(w http.ResponseWriter) {
	c.finish()
	h := w.Header()
	for name, values := range c.sent {
		h[name] = values
	}
	w.WriteHeader(c.status)
	_, _ = w.Write(c.body.Bytes()) // a client gone away cannot be written to; the outcome is stored
}

// writeResponse writes a rendered response (a replay, a problem) to w.
func writeResponse(w http.ResponseWriter, r httpengine.Response) {
	h := w.Header()
	for name, values := range r.Header {
		h[name] = values
	}
	body := []byte(r.Body)
	if r.Base64 {
		if b, err := base64.StdEncoding.DecodeString(r.Body); err == nil {
			body = b
		}
	}
	w.WriteHeader(r.Status)
	_, _ = w.Write(body)
}
