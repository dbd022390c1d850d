package lambdaidem

import (
	"errors"
	"fmt"
	"time"
)

// Conditions a caller tests with [errors.Is].
var (
	// ErrInProgress: another attempt at the same operation holds the record.
	// Retry later.
	ErrInProgress = errors.New("lambdaidem: operation in progress")
	// ErrKeyReused: the idempotency key was used before with a different
	// payload. The stored outcome is never revealed.
	ErrKeyReused = errors.New("lambdaidem: idempotency key reused with a different payload")
	// ErrMissingKey: the request carries no idempotency key.
	ErrMissingKey = errors.New("lambdaidem: missing idempotency key")
	// ErrInvalidKey: the idempotency key is malformed or too long.
	ErrInvalidKey = errors.New("lambdaidem: invalid idempotency key")
	// ErrOutcomeUnknown: an earlier attempt began an external side effect and
	// failed; the outcome is being reconciled.
	ErrOutcomeUnknown = errors.New("lambdaidem: outcome unknown")
	// ErrWindowPassed: a reconcile function said an external effect did not
	// happen, but the downstream's deduplication window
	// (Attempt.BeginExternalWithin) has passed since its first dispatch: a
	// redispatch could repeat it. The record stays UNKNOWN for an operator.
	// It comes with ErrOutcomeUnknown.
	ErrWindowPassed = errors.New("lambdaidem: the downstream's deduplication window has passed since the first dispatch")
	// ErrStoreUnavailable: the store could not be reached or refused service.
	ErrStoreUnavailable = errors.New("lambdaidem: store unavailable")
	// ErrLeaseLost: the attempt's lease lapsed and another attempt took the
	// record over; this attempt's outcome and effects were not committed.
	ErrLeaseLost = errors.New("lambdaidem: lease lost")
	// ErrOutcomeTooLarge: the serialized outcome exceeds Options.MaxOutcomeSize.
	// Nothing was committed.
	ErrOutcomeTooLarge = errors.New("lambdaidem: outcome too large")
	// ErrEffectRejected: the store refused the staged effects (a business
	// condition failed, or the writes were invalid); nothing was written.
	ErrEffectRejected = errors.New("lambdaidem: staged effects rejected")
	// ErrConditionFailed: a business condition of a staged write failed at
	// commit (the item to update does not exist, the balance is too low):
	// nothing was written, and retrying the same request will fail the same
	// way. It matches ErrEffectRejected too.
	ErrConditionFailed = fmt.Errorf("%w: a business condition failed", ErrEffectRejected)
	// ErrKeyUnavailable: a stored record is sealed (Options.Sealer) and the
	// key service that opens its outcome, or the key of its fingerprint,
	// failed for now: throttled, unavailable, timed out. The record stays
	// as it is (nothing ran, nothing was released); a retry answers from
	// it (replays its outcome) once the key service answers.
	ErrKeyUnavailable = errors.New("lambdaidem: key service unavailable; the stored record cannot be read now")
	// ErrKeyRefused: a stored record is sealed and the key service refused
	// its key: access denied, the key disabled, pending deletion or
	// deleted, or not the key that sealed it. The record stays as it is
	// but cannot be read (its outcome replayed, its fingerprint compared)
	// until the key is usable again; retrying will not help. The error
	// wraps a [*KeyServiceError] naming the key and the action.
	ErrKeyRefused = errors.New("lambdaidem: key service refused the key of a stored record")
	// ErrSealerMissing: a stored record is sealed (its fingerprint keyed or
	// its outcome sealed by lambdaidem/seal) and this Guard has no
	// Options.Sealer: the function was deployed without the sealing the
	// table's other functions use (the CDK construct's BindSealing, which
	// sets IDEMPOTENCY_SEAL_KEY for kmsseal.ReadEnv). Nothing ran and the
	// record stays as it is; retrying will not help until the function is
	// deployed with the Sealer. Never reported as ErrKeyReused.
	ErrSealerMissing = errors.New("lambdaidem: the stored record is sealed and this function has no Sealer: deploy it as the table's other functions are, with lambdaidemcdk.BindSealing (IDEMPOTENCY_SEAL_KEY, read by kmsseal.ReadEnv, set as Options.Sealer)")
	// ErrNoTenant: the deployment declares tenants ([TenantsEnv]) and the
	// invocation names none: it was refused, never run under a record
	// shared by every tenant-less invocation.
	ErrNoTenant = errors.New("lambdaidem: no tenant named for a function in tenant isolation mode")
	// ErrNoAttempt: a write was staged, or an external effect begun, outside a
	// wrapped invocation, or after its attempt finished.
	ErrNoAttempt = errors.New("lambdaidem: no idempotent attempt in context")
)

// RecordError reports a condition of a record: its Err is one of the
// sentinels above, and it carries what is known of the record. It never
// carries the stored outcome.
type RecordError struct {
	// Err is the condition, e.g. ErrInProgress.
	Err error
	// Key is the record key (a hash, never the raw idempotency key).
	Key string
	// Status is the record's state when the condition was seen.
	Status Status
	// Attempts is the record's claim count.
	Attempts int
	// LeaseUntil ends the owner's lease for an in-progress record.
	LeaseUntil time.Time
	// ExpiresAt is when the record will be forgotten.
	ExpiresAt time.Time
}

// Error names the condition and the record key, and the lease of an
// in-progress record.
func (e *RecordError) Error() string {
	switch {
	case e.Status == StatusInProgress && !e.LeaseUntil.IsZero():
		return fmt.Sprintf("%v: key %s, lease until %s", e.Err, e.Key, e.LeaseUntil.UTC().Format(time.RFC3339Nano))
	default:
		return fmt.Sprintf("%v: key %s", e.Err, e.Key)
	}
}

// Unwrap returns the condition, so that errors.Is matches the sentinel.
func (e *RecordError) Unwrap() error { return e.Err }

// RetryAfter is how long a caller should wait before retrying: the time left
// on the lease of an in-progress record, at least one second.
func (e *RecordError) RetryAfter(now time.Time) time.Duration {
	d := e.LeaseUntil.Sub(now)
	if d < time.Second {
		return time.Second
	}
	return d
}

func recordError(err error, r Record) *RecordError {
	return &RecordError{Err: err, Key: r.Key, Status: r.Status, Attempts: r.Attempts, LeaseUntil: r.LeaseUntil, ExpiresAt: r.ExpiresAt}
}

// StoreError reports a store call that failed. It matches
// [ErrStoreUnavailable] when the store said so.
type StoreError struct {
	// Op is the store method: "claim", "commit", "release", "mark unknown", "get".
	Op string
	// Key is the record key.
	Key string
	// Err is what the store returned.
	Err error
}

// Error names the store call, the record key and the store's error.
func (e *StoreError) Error() string {
	return fmt.Sprintf("lambdaidem: %s %s: %v", e.Op, e.Key, e.Err)
}

// Unwrap returns the store's error.
func (e *StoreError) Unwrap() error { return e.Err }

// RejectedError reports that the store refused the writes a handler staged,
// at commit: nothing was written and the claim was released, so the record
// is absent again. It matches [ErrEffectRejected]; it matches
// [ErrConditionFailed] when a business condition of a staged write failed,
// and errors.As then reaches the store's own error naming the write (for
// dynamostore, a *dynamostore.ConditionFailedError). Adapters map it to an
// answer of its own: retrying the same request cannot succeed.
type RejectedError struct {
	// Key is the record key.
	Key string
	// Err is the store's error.
	Err error
}

// Error names the record key and the store's reason.
func (e *RejectedError) Error() string {
	return fmt.Sprintf("lambdaidem: commit %s: staged writes rejected: %v", e.Key, e.Err)
}

// Unwrap returns the store's error.
func (e *RejectedError) Unwrap() error { return e.Err }

// Is makes the error match [ErrEffectRejected] even when the store's error
// does not.
func (e *RejectedError) Is(target error) bool { return target == ErrEffectRejected }

// KeyServiceError reports a key service call of a Sealer that failed (for
// the seal package, AWS KMS's GenerateDataKey or Decrypt). Key services
// return it, naming their key and action; the seal package wraps any other
// key service error in one that is not Permanent. Opening a stored outcome
// with it fails with [ErrKeyRefused] when Permanent, [ErrKeyUnavailable]
// otherwise.
type KeyServiceError struct {
	// Key names the master key, for a KMS key its ARN.
	Key string
	// Action is the call, as IAM names it: "kms:Decrypt".
	Action string
	// Permanent is set when retrying cannot succeed until an operator
	// acts: access denied, the key disabled or deleted, the wrong key.
	Permanent bool
	// Err is the key service's error.
	Err error
}

// Error names the action, the key and the key service's error.
func (e *KeyServiceError) Error() string {
	return fmt.Sprintf("lambdaidem: key service: %s on %s: %v", e.Action, e.Key, e.Err)
}

// Unwrap returns the key service's error.
func (e *KeyServiceError) Unwrap() error { return e.Err }

// OpenFailure is the error of a stored record that a Sealer could not
// open (what names the step): err, a key service failure
// ([*KeyServiceError]), matched with [ErrKeyRefused] when permanent and
// [ErrKeyUnavailable] otherwise; any other err is only wrapped. Tools that
// open outcomes outside a Guard (dynamostore.Records) answer as the Guard
// does.
func OpenFailure(what string, err error) error {
	var kse *KeyServiceError
	switch {
	case !errors.As(err, &kse):
		return fmt.Errorf("lambdaidem: %s: %w", what, err)
	case kse.Permanent:
		return fmt.Errorf("%w: %s: %w", ErrKeyRefused, what, err)
	}
	return fmt.Errorf("%w: %s: %w", ErrKeyUnavailable, what, err)
}

// ReplayedError is a terminal error stored by an earlier attempt and returned
// to a duplicate. Type is the original error's type name (as the Lambda
// runtime names it, the errorType), Message its text.
//
// [Do] and a handler from [Wrapper.Wrap] return it as it is, so errors.As
// finds it; [Handler.Invoke] hands it to the Lambda runtime with the same
// errorType and errorMessage the first attempt reported.
type ReplayedError struct {
	Type    string
	Message string
}

// Error is the original error's message.
func (e *ReplayedError) Error() string { return e.Message }

// Terminal marks err as a decided outcome of the operation: it is stored and
// replayed to every duplicate instead of releasing the claim. A handler whose
// error types already have a method Terminal() bool returning true need not
// call it. Terminal(nil) is nil.
func Terminal(err error) error {
	if err == nil {
		return nil
	}
	return &terminalError{err}
}

type terminalError struct{ err error }

func (e *terminalError) Error() string  { return e.err.Error() }
func (e *terminalError) Unwrap() error  { return e.err }
func (e *terminalError) Terminal() bool { return true }

// isTerminal reports whether err, or an error it wraps, says it is terminal.
func isTerminal(err error) bool {
	var t interface{ Terminal() bool }
	return errors.As(err, &t) && t.Terminal()
}
