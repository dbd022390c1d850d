package lambdaidem

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"
)

// Attempt is one run of a handler under a claim. The handler reaches it
// through [AttemptFrom]; it is safe for concurrent use by the handler's
// goroutines.
type Attempt struct {
	operationKey string
	since        time.Time
	number       int
	mode         Mode

	// markExternal persists the external-effect mark on the record; nil
	// when there is no record to mark (failing open).
	markExternal func(ctx context.Context, window time.Duration) error

	mu       sync.Mutex
	closed   bool
	external bool
	effects  []any
}

type attemptKey struct{}

// AttemptFrom returns the attempt that ctx belongs to, if ctx comes from a
// wrapped invocation.
func AttemptFrom(ctx context.Context) (*Attempt, bool) {
	a, ok := ctx.Value(attemptKey{}).(*Attempt)
	return a, ok
}

func withAttempt(ctx context.Context, a *Attempt) context.Context {
	return context.WithValue(ctx, attemptKey{}, a)
}

// OperationKey is a stable key for this operation, the same for every
// attempt at it: pass it as the idempotency key of a downstream API (a
// payment provider, an email service) so that the downstream call is
// deduplicated too. It does not reveal the caller's key.
func (a *Attempt) OperationKey() string { return a.operationKey }

// Since is when the operation was first claimed: the record's creation
// time, which a takeover keeps, so it is the same for every attempt under
// one record, and differs for a new operation under a key reused after its
// record expired (or was released). outbox.Stage derives message ids from
// it and the operation key. Optimistic mode and a Guard failing open or
// disabled use the attempt's start.
func (a *Attempt) Since() time.Time { return a.since }

// Number is the attempt's ordinal among the claims of one record: 1 for
// the first claim, 2 after a takeover of a lapsed lease, and so on. A
// released failure deletes the record, so the retry after it is 1 again.
// In optimistic mode it is 1.
func (a *Attempt) Number() int { return a.number }

// BeginExternal declares that the handler is about to start a side effect
// outside the store's transaction (an email, a card charge), and must be
// called, and succeed, before the effect starts. It marks the record in
// the store (one fenced write, the first time only), so that from then on
// the record is never handed to another attempt as if nothing had
// happened: a failure that does not prove the effect did not happen
// leaves the record UNKNOWN, and so does a crash, once the lease lapses.
// Such records are answered with [ErrOutcomeUnknown] until a reconcile
// function resolves them.
//
// Make the effect's call under the handler's context, or wait for it
// before the handler returns: the context ends when the handler returns,
// and the record a handler leaves UNKNOWN may be reconciled at once, so a
// call still in flight after the handler returned could land after a
// reconcile's "not done" and repeat the effect (the assumption "a handler
// that has returned has no call of its own still in flight",
// docs/guarantees.md).
//
// It fails, and the handler must not start the effect, when the store
// cannot be written, when the attempt's lease was lost or has lapsed
// ([ErrLeaseLost]: a handler still running past its lease, as on Lambda
// Managed Instances, may no longer own the record),
// after the attempt finished ([ErrNoAttempt]), and in optimistic mode,
// where an external effect could run once per concurrent duplicate.
func (a *Attempt) BeginExternal(ctx context.Context) error { return a.BeginExternalWithin(ctx, 0) }

// BeginExternalWithin is [Attempt.BeginExternal] for a downstream that
// deduplicates the operation key for window only (a payment API that keeps
// idempotency keys for 24 hours; SQS FIFO's five minutes). The record keeps
// the time of this first dispatch and the window; once the window has
// passed since it, the core never dispatches the effect again on its own:
// a reconcile function's "not done" is refused with an error matching
// [ErrOutcomeUnknown] and [ErrWindowPassed], and the record stays UNKNOWN
// for an operator (the lambdaidem command says why). A window of zero is
// BeginExternal: no bound. A later call in the same attempt changes
// nothing; a negative window is an error.
func (a *Attempt) BeginExternalWithin(ctx context.Context, window time.Duration) error {
	if window < 0 {
		return errors.New("lambdaidem: negative deduplication window")
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	switch {
	case a.closed:
		return fmt.Errorf("begin external effect: %w", ErrNoAttempt)
	case a.mode == Optimistic:
		return errors.New("lambdaidem: external effects need ClaimFirst mode")
	case a.external:
		return nil
	}
	if a.markExternal != nil {
		if err := a.markExternal(ctx, window); err != nil {
			return err
		}
	}
	a.external = true
	return nil
}

// Stage adds a store write to be committed atomically with the outcome.
// Stores offer typed verbs over it (dynamostore.Stage, memstore.Stage); the effect's
// type must be one the Guard's store knows, or the commit fails. Stage
// fails with [ErrNoAttempt] once the attempt has finished.
func (a *Attempt) Stage(effect any) error {
	if effect == nil {
		return errors.New("lambdaidem: nil effect")
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.closed {
		return fmt.Errorf("stage effect: %w", ErrNoAttempt)
	}
	a.effects = append(a.effects, effect)
	return nil
}

// StageWith stages the effect that build returns, given the effects
// staged before it (which it must not change), in one step: no other
// goroutine of the handler stages in between. A typed verb that numbers
// its effects (outbox.Stage gives each message its position) builds them
// this way. An error from build stages nothing and is returned as it is;
// StageWith fails with [ErrNoAttempt] once the attempt has finished.
func (a *Attempt) StageWith(build func(staged []any) (any, error)) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.closed {
		return fmt.Errorf("stage effect: %w", ErrNoAttempt)
	}
	effect, err := build(a.effects[:len(a.effects):len(a.effects)])
	if err != nil {
		return err
	}
	if effect == nil {
		return errors.New("lambdaidem: nil effect")
	}
	a.effects = append(a.effects, effect)
	return nil
}

// Stage adds a store write to the attempt in ctx. Outside a wrapped
// invocation it fails with [ErrNoAttempt]: a write is never silently lost.
func Stage(ctx context.Context, effect any) error {
	a, ok := AttemptFrom(ctx)
	if !ok {
		return fmt.Errorf("stage effect: %w", ErrNoAttempt)
	}
	return a.Stage(effect)
}

// close ends the attempt: later Stage and BeginExternal calls fail. It
// returns the staged effects and whether an external effect began.
func (a *Attempt) close() (effects []any, external bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.closed = true
	return a.effects, a.external
}
