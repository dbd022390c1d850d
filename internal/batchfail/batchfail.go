// Package batchfail is what the batch adapters (sqsbatch, streambatch)
// share about a failed item: a handler's panic turned into an error, and
// why an item failed, with how loudly to log it.
package batchfail

import (
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
}

// Classify names why an item failed with err, and the level to log it at:
// Error for what needs a person (a panic, a handler error, a store failure,
// staged writes the store refused), Warn for refusals and uncertainty, Info
// for an item in progress elsewhere.
func Classify(err error, w Words) (slog.Level, string) {
	var replayed *lambdaidem.ReplayedError
	var store *lambdaidem.StoreError
	var p *PanicError
	switch {
	case errors.As(err, &p):
		return slog.LevelError, "handler panicked; claim released"
	case errors.As(err, &replayed):
		return slog.LevelWarn, "terminal error replayed from an earlier " + w.Attempt + "; not run again"
	case errors.Is(err, lambdaidem.ErrKeyReused):
		return slog.LevelWarn, "key reused with a different " + w.Payload + "; not processed"
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
