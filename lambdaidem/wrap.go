package lambdaidem

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"

	"github.com/aws/aws-lambda-go/lambda/messages"
)

// Spec says how to make one handler idempotent.
type Spec[In, Out any] struct {
	// Operation names what the handler does ("CreateOrder"). Required.
	Operation string

	// Key returns the caller's idempotency key for an event. Required. An
	// empty key fails the invocation with [ErrMissingKey].
	Key func(context.Context, In) (string, error)

	// Scope returns the tenant or principal an event acts for; records of
	// different scopes never meet. Optional: no scope.
	Scope func(context.Context, In) (string, error)

	// Fingerprint returns the part of an event that defines the intent; its
	// [Fingerprint] is stored and compared on every duplicate. Optional: the
	// whole event.
	Fingerprint func(context.Context, In) (any, error)

	// Reconcile resolves a record left UNKNOWN by an earlier attempt, given
	// the duplicate's event (the same intent: its fingerprint matched); see
	// [Call]. Optional: such a record is answered with [ErrOutcomeUnknown]
	// until the horizon passes.
	Reconcile func(context.Context, In, Unknown) (Out, bool, error)
}

// Wrapper makes handlers idempotent under one [Spec]. Build it with
// [NewWrapper], which validates the Spec; its Wrap method cannot fail.
type Wrapper[In, Out any] struct {
	g    *Guard
	spec Spec[In, Out]
}

// NewWrapper returns a Wrapper of handlers by g under spec. It returns an
// error if g or spec.Key is nil or spec.Operation is empty.
func NewWrapper[In, Out any](g *Guard, spec Spec[In, Out]) (*Wrapper[In, Out], error) {
	switch {
	case g == nil:
		return nil, errors.New("lambdaidem: nil Guard")
	case spec.Key == nil:
		return nil, errors.New("lambdaidem: Spec.Key is nil")
	case spec.Operation == "":
		return nil, errors.New("lambdaidem: Spec.Operation is empty")
	}
	return &Wrapper[In, Out]{g: g, spec: spec}, nil
}

// Handler is a wrapped handler. It has the handler's own signature, so it
// can be called, tested and passed on like the original; it also
// implements aws-lambda-go's lambda.Handler, so that lambda.Start(h) reports
// a replayed error with the errorType the first attempt reported (see
// [Handler.Invoke]).
type Handler[In, Out any] func(context.Context, In) (Out, error)

// Wrap returns h made idempotent: each invocation derives the key, scope
// and fingerprint from its event and runs h through [Do]. Errors are
// returned as [Do] returns them: the handler's own errors unchanged, a
// replayed terminal error as a [*ReplayedError]. A handler error is logged
// at level Error, saying whether the claim was released or, after
// [Attempt.BeginExternal], the record kept UNKNOWN.
//
// Wrap cannot fail: a nil h gives a Handler whose every call returns an
// error.
func (w *Wrapper[In, Out]) Wrap(h func(context.Context, In) (Out, error)) Handler[In, Out] {
	spec := w.spec
	g := w.g
	return func(ctx context.Context, in In) (Out, error) {
		var zero Out
		if h == nil {
			return zero, fmt.Errorf("lambdaidem: %s: nil handler", spec.Operation)
		}
		call, err := spec.call(ctx, in)
		if err != nil {
			return zero, err
		}
		failed, external := false, false
		out, err := Do(ctx, g, call, func(ctx context.Context) (Out, error) {
			out, err := h(ctx, in)
			failed = err != nil && !isTerminal(err)
			if a, ok := AttemptFrom(ctx); ok {
				external = a.external
			}
			return out, err
		})
		switch {
		case failed && external:
			g.log(ctx, slog.LevelError, "handler failed after BeginExternal; nothing committed, the record is kept UNKNOWN: the external effect may have happened. "+
				"A duplicate resolves it through Spec.Reconcile, or an operator with lambdaidem resolve --done or --not-done",
				slog.String("operation", spec.Operation), slog.Any("error", err))
		case failed:
			g.log(ctx, slog.LevelError, "handler failed; nothing committed, claim released", slog.String("operation", spec.Operation), slog.Any("error", err))
		}
		return out, err
	}
}

// Invoke implements aws-lambda-go's lambda.Handler, which lambda.Start
// prefers to reflection: it decodes the event from JSON, calls h, and
// encodes the result as aws-lambda-go does by default (no HTML escaping).
// A replayed terminal error is handed to the runtime as a
// messages.InvokeResponse_Error with the stored type name and message, so
// the caller (and a Step Functions retry rule) sees the same errorType and
// errorMessage as the first time. Because the runtime calls Invoke, the
// JSON options of lambda.StartWithOptions (WithSetEscapeHTML, WithUseNumber,
// WithDisallowUnknownFields, WithSetIndent) do not apply to a wrapped
// handler; its other options (WithContext, WithEnableSIGTERM) do.
func (h Handler[In, Out]) Invoke(ctx context.Context, payload []byte) ([]byte, error) {
	var in In
	if err := json.NewDecoder(bytes.NewReader(payload)).Decode(&in); err != nil {
		return nil, err
	}
	out, err := h(ctx, in)
	if err != nil {
		var re *ReplayedError
		if errors.As(err, &re) {
			return nil, messages.InvokeResponse_Error{Type: re.Type, Message: re.Message}
		}
		return nil, err
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(out); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// call derives the Call for one event.
func (s *Spec[In, Out]) call(ctx context.Context, in In) (Call[Out], error) {
	c := Call[Out]{Operation: s.Operation}
	if s.Reconcile != nil {
		rec := s.Reconcile
		c.Reconcile = func(ctx context.Context, u Unknown) (Out, bool, error) { return rec(ctx, in, u) }
	}
	var err error
	if c.Key, err = s.Key(ctx, in); err != nil {
		if errors.Is(err, ErrMissingKey) || errors.Is(err, ErrInvalidKey) {
			return c, err
		}
		return c, fmt.Errorf("%w: %w", ErrInvalidKey, err)
	}
	if s.Scope != nil {
		if c.Scope, err = s.Scope(ctx, in); err != nil {
			return c, fmt.Errorf("lambdaidem: scope: %w", err)
		}
	}
	var subject any = in
	if s.Fingerprint != nil {
		if subject, err = s.Fingerprint(ctx, in); err != nil {
			return c, fmt.Errorf("lambdaidem: fingerprint: %w", err)
		}
	}
	c.Fingerprint, err = Fingerprint(subject)
	return c, err
}
