// Package batchfail is what the batch adapters (sqsbatch, streambatch)
// share about a failed item: a handler's panic turned into an error, a
// scope that could not be derived, and why an item failed, with how loudly
// to log it.
package batchfail

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/lambdaidem/lambdaidem/lambdaidem"
)

// PanicError is a handler's panic, recovered so that it fails one item of
// a batch and not the process with the rest of the batch.
type PanicError struct {
	// Adapter names the package, for the message ("sqsbatch").
	Adapter string
	// Value is what the handler panicked with.
	Value any
}

// Error says which adapter's handler panicked, and with what.
func (e *PanicError) Error() string {
	return fmt.Sprintf("%s: handler panicked: %v", e.Adapter, e.Value)
}

// Recover runs fn and returns its error, or a [*PanicError] if it panicked.
func Recover(adapter string, fn func() error) (err error) {
	defer func() {
		if v := recover(); v != nil {
			err = &PanicError{Adapter: adapter, Value: v}
		}
	}()
	return fn()
}

// ScopeError says why the scope of an item could not be derived. The item
// is reported as a batch item failure, so that Lambda delivers it again
// once the scope function can answer (or sends it to the dead-letter queue
// or on-failure destination), and is never run in a scope others share.
type ScopeError struct{ Err error }

func (e *ScopeError) Error() string { return "scope: " + e.Err.Error() }
func (e *ScopeError) Unwrap() error { return e.Err }

// Scope derives an item's scope with fn. A panic, an error, or an empty
// scope (reported as empty, the adapter's sentinel) is a [*ScopeError]:
// where scoping is required, running the item in the scope every unscoped
// item shares could mix tenants, so it fails closed instead.
func Scope[T any](ctx context.Context, fn func(context.Context, T) (string, error), v T, empty error) (scope string, err error) {
	func() {
		defer func() {
			if p := recover(); p != nil {
				err = fmt.Errorf("panicked: %v", p)
			}
		}()
		scope, err = fn(ctx, v)
	}()
	if err == nil && scope == "" {
		err = empty
	}
	if err != nil {
		return "", &ScopeError{Err: err}
	}
	return scope, nil
}

// Words are an adapter's names in its log lines.
type Words struct {
	// Item is what a batch holds: "message", "record".
	Item string
	// Payload is what a fingerprint covers: "body", "payload".
	Payload string
	// Attempt is an earlier try of the item: "delivery", "attempt".
	Attempt string
	// Retry says what happens to a failed item: "will be redelivered".
	Retry string
	// Dead says where an item that fails every try ends: "it will reach the
	// dead-letter queue".
	Dead string
}

// Classify names why an item failed with err, and the level to log it at:
// Error for what needs a person (a panic, a handler error, a store failure,
// staged writes the store refused, a key reused by another item, which
// fails every try until it is dead-lettered, a sealed outcome whose key the
// key service refuses), Warn for uncertainty and a key service unavailable
// for now, Info for an item in progress elsewhere.
func Classify(err error, w Words) (slog.Level, string) {
	var replayed *lambdaidem.ReplayedError
	var store *lambdaidem.StoreError
	var p *PanicError
	switch {
	case errors.As(err, &p):
		return slog.LevelError, "handler panicked; claim released"
	case errors.As(err, &replayed):
		return slog.LevelWarn, "terminal error replayed from an earlier " + w.Attempt + "; not run again"
	case errors.Is(err, lambdaidem.ErrSealerMissing):
		return slog.LevelError, "stored record is sealed and this function has no Sealer (deploy it with lambdaidemcdk.BindSealing: IDEMPOTENCY_SEAL_KEY); it fails every " + w.Attempt + " until then, and " + w.Dead
	case errors.Is(err, lambdaidem.ErrNoTenant):
		return slog.LevelError, "not run: the function declares tenants (" + lambdaidem.TenantsEnv + ") and the invocation names none; it fails every " + w.Attempt + " and " + w.Dead
	case errors.Is(err, lambdaidem.ErrKeyReused):
		return slog.LevelError, "key reused with a different " + w.Payload + "; not processed: it fails every " + w.Attempt + " and " + w.Dead
	case errors.Is(err, lambdaidem.ErrKeyUnavailable):
		return slog.LevelWarn, "stored record cannot be opened now: the key service is unavailable; " + w.Retry + " and answered from the record"
	case errors.Is(err, lambdaidem.ErrKeyRefused):
		return slog.LevelError, "stored record cannot be opened: the key service refused its key; it fails every " + w.Attempt + " until the key or the role's permission is restored, and " + w.Dead
	case errors.Is(err, lambdaidem.ErrInProgress):
		return slog.LevelInfo, "in progress in another invocation; " + w.Retry
	case errors.Is(err, lambdaidem.ErrOutcomeUnknown):
		return slog.LevelWarn, "outcome unknown after an earlier external effect; awaiting reconcile"
	case errors.Is(err, lambdaidem.ErrLeaseLost):
		return slog.LevelWarn, "lease lost to another attempt; nothing committed"
	case errors.Is(err, lambdaidem.ErrMissingKey), errors.Is(err, lambdaidem.ErrInvalidKey):
		return slog.LevelWarn, "malformed " + w.Item + "; not processed"
	case errors.Is(err, lambdaidem.ErrConditionFailed):
		return slog.LevelWarn, "a business condition of a staged write failed; nothing committed"
	case errors.Is(err, lambdaidem.ErrEffectRejected):
		return slog.LevelError, "staged writes rejected; nothing committed"
	case errors.As(err, &store):
		return slog.LevelError, "idempotency store failed; " + w.Retry
	}
	return slog.LevelError, "handler failed; claim released"
}
