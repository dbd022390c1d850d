package lambdaidem

import (
	"context"
	"errors"
	"fmt"

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

	// Reconcile resolves records left UNKNOWN; see [Call]. Optional: such a
	// record is answered with [ErrOutcomeUnknown] until the horizon passes.
	Reconcile func(context.Context, Unknown) (Out, bool, error)
}

// Wrap returns h made idempotent by g, with h's own signature, so that
// lambda.Start(Wrap(g, spec, h)) just works. Each invocation derives the key,
// scope and fingerprint from its event and runs h through [Do].
//
// A terminal error replayed to a duplicate reaches the Lambda runtime as a
// [messages.InvokeResponse_Error] carrying the original error's type name
// and message, so the caller sees the same errorType and errorMessage as the
// first time.
//
// Wrap panics if g, h or spec.Key is nil or spec.Operation is empty: those
// are mistakes in the program, not in an event.
func Wrap[In, Out any](g *Guard, spec Spec[In, Out], h func(context.Context, In) (Out, error)) func(context.Context, In) (Out, error) {
	switch {
	case g == nil:
		panic("lambdaidem.Wrap: nil Guard")
	case h == nil:
		panic("lambdaidem.Wrap: nil handler")
	case spec.Key == nil:
		panic("lambdaidem.Wrap: Spec.Key is nil")
	case spec.Operation == "":
		panic("lambdaidem.Wrap: Spec.Operation is empty")
	}
	return func(ctx context.Context, in In) (Out, error) {
		var zero Out
		call, err := spec.call(ctx, in)
		if err != nil {
			return zero, err
		}
		out, err := Do(ctx, g, call, func(ctx context.Context) (Out, error) { return h(ctx, in) })
		if re, ok := err.(*ReplayedError); ok {
			return out, messages.InvokeResponse_Error{Type: re.Type, Message: re.Message}
		}
		return out, err
	}
}

// call derives the Call for one event.
func (s *Spec[In, Out]) call(ctx context.Context, in In) (Call[Out], error) {
	c := Call[Out]{Operation: s.Operation, Reconcile: s.Reconcile}
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
