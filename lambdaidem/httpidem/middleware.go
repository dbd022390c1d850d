package httpidem

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"

	"github.com/aws/aws-lambda-go/lambdaurl"

	"github.com/lambdaidem/lambdaidem/lambdaidem"
	"github.com/lambdaidem/lambdaidem/lambdaidem/internal/httpengine"
)

// New returns a middleware that makes the handlers it wraps idempotent for
// operation (say "CreatePayment") with g, under the semantics of apigw (see
// the package documentation). It returns an error if g is nil, operation
// is empty, or an option is invalid; the middleware itself cannot fail.
func New(g *lambdaidem.Guard, operation string, optFns ...func(*Options)) (func(http.Handler) http.Handler, error) {
	var o Options
	for _, fn := range optFns {
		fn(&o)
	}
	switch {
	case o.MaxBodySize < 0:
		return nil, fmt.Errorf("httpidem: MaxBodySize must not be negative, got %d", o.MaxBodySize)
	case o.MaxBodySize == 0:
		o.MaxBodySize = defaultMaxBody
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	e, err := httpengine.New(g, operation, o.config())
	if err != nil {
		return nil, err
	}
	m := &middleware{engine: e, opts: o, maxOutcome: g.Options().MaxOutcomeSize}
	return func(next http.Handler) http.Handler {
		if next == nil {
			next = http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
				http.Error(w, "httpidem: nil handler", http.StatusInternalServerError)
			})
		}
		return &handler{m: m, next: next}
	}, nil
}

// middleware is what New built: the engine and the options.
type middleware struct {
	engine     *httpengine.Engine
	opts       Options
	maxOutcome int
}

// handler is one wrapped http.Handler.
type handler struct {
	m    *middleware
	next http.Handler
}

func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	m := h.m
	req := &httpengine.Request{Method: strings.ToUpper(r.Method), Header: r.Header, Source: r}
	key, pass, p := m.engine.Admit(r.Context(), req)
	switch {
	case p != nil:
		writeResponse(w, p.Response())
		return
	case pass:
		h.next.ServeHTTP(w, r)
		return
	}
	body, p := m.readBody(r)
	if p != nil {
		writeResponse(w, p.Response())
		return
	}
	m.mapRequest(req, r, body)

	ctx, cancel := detach(r.Context())
	defer cancel()
	if _, ok := lambdaurl.RequestFromContext(ctx); ok {
		// lambdaurl.Wrap runs the handler in a goroutine without a
		// recover: a panic would end the process and every invocation in
		// it. The claim is released by then (Do releases it on the way up).
		defer func() {
			if v := recover(); v != nil {
				m.opts.Logger.LogAttrs(ctx, slog.LevelError, "httpidem: handler panicked; key released, answered 500",
					slog.String("route", req.Route), slog.Any("panic", v))
				writeResponse(w, m.engine.Refusal(errPanicked).Response())
			}
		}()
	}
	var c *capture
	out, outcome, err := m.engine.Serve(ctx, req, key, func(ctx context.Context) (httpengine.Response, error) {
		c = &capture{under: w, header: http.Header{}, limit: m.maxOutcome}
		r2 := r.WithContext(ctx)
		r2.Body = io.NopCloser(bytes.NewReader(body))
		r2.ContentLength = int64(len(body))
		h.next.ServeHTTP(c, r2)
		if c.over {
			// Answered as a response too large to store is answered
			// (ErrOutcomeTooLarge); nothing is committed, the claim released.
			return httpengine.Response{}, m.engine.Refusal(lambdaidem.ErrOutcomeTooLarge)
		}
		return c.response(), nil
	})
	switch outcome {
	case httpengine.Fresh:
		c.writeTo(w)
		return
	case httpengine.Replayed:
		if on := m.opts.OnReplay; on != nil {
			on(r, out.Header)
		}
	case httpengine.ConditionFailed:
		if cf := m.opts.ConditionFailed; cf != nil {
			if p := cf(r, err); p != nil {
				out = p.Response()
			}
		}
	}
	writeResponse(w, out)
}

// errPanicked stands for a recovered panic in the problem it is answered
// with (500, internal: nothing stored, a retry runs again).
var errPanicked = fmt.Errorf("httpidem: handler panicked")

// readBody reads a keyed request's body, up to Options.MaxBodySize, or
// returns the problem that refuses it.
func (m *middleware) readBody(r *http.Request) ([]byte, *Problem) {
	if r.Body == nil || r.Body == http.NoBody {
		return nil, nil
	}
	max := m.opts.MaxBodySize
	if r.ContentLength > max {
		return nil, bodyTooLarge(max)
	}
	size := r.ContentLength
	if size <= 0 {
		size = 512
	}
	buf := bytes.NewBuffer(make([]byte, 0, min(size, max)+1))
	n, err := buf.ReadFrom(io.LimitReader(r.Body, max+1))
	switch {
	case err != nil:
		return nil, httpengine.NewProblem(http.StatusBadRequest, ProblemMalformedRequest, "Malformed request", "the request body could not be read")
	case n > max:
		return nil, bodyTooLarge(max)
	}
	return buf.Bytes(), nil
}

func bodyTooLarge(max int64) *Problem {
	return httpengine.NewProblem(http.StatusRequestEntityTooLarge, ProblemRequestTooLarge, "Request too large",
		fmt.Sprintf("the request body is larger than %d bytes, the most this service reads for an idempotent request; it was not processed", max))
}

// detach is the context a keyed request runs on: r's values and deadline,
// without the cancellation net/http sends when the client disconnects. A
// client gone away must not undo an attempt that may already have had its
// effect: the handler runs on, the outcome is stored, and the retry that
// follows replays it.
func detach(ctx context.Context) (context.Context, context.CancelFunc) {
	d := context.WithoutCancel(ctx)
	if deadline, ok := ctx.Deadline(); ok {
		return context.WithDeadline(d, deadline)
	}
	return d, func() {}
}
