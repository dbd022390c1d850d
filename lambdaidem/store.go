package lambdaidem

import (
	"context"
	"time"
)

// Status is the state of an idempotency record.
type Status string

// The states a record can be in. A record that does not exist, or whose
// expiration has passed, is absent: it has no Status.
const (
	// StatusInProgress: an attempt holds the record until its lease ends.
	StatusInProgress Status = "INPROGRESS"
	// StatusCompleted: the outcome is stored and is replayed to duplicates.
	StatusCompleted Status = "COMPLETED"
	// StatusUnknown: an attempt began an external side effect and then failed
	// in a way that does not prove the effect did not happen. The record is kept
	// until a reconcile function resolves it or the retry horizon passes.
	StatusUnknown Status = "UNKNOWN"
)

// Record is the stored state of one operation.
type Record struct {
	// Key is the record key, "<namespace>#<hash>"; see [RecordKey].
	Key string
	// Status is the record's state; empty for an absent record.
	Status Status
	// Fingerprint identifies the request parameters that define the intent.
	Fingerprint string
	// Outcome is the serialized outcome of a completed operation.
	Outcome []byte
	// Token is the attempt token of the current owner (fencing).
	Token string
	// Attempts counts the claims this operation has seen.
	Attempts int
	// LeaseUntil ends the current owner's lease while the record is in progress.
	LeaseUntil time.Time
	// ExpiresAt is when the record is forgotten: the TTL.
	ExpiresAt time.Time
	// CreatedAt is when the record was first claimed.
	CreatedAt time.Time
	// CompletedAt is when the outcome was committed.
	CompletedAt time.Time
	// External is set while the record is in progress once its owner has
	// declared an external effect (see [Attempt.BeginExternal]). Such a
	// record is never taken over when its lease lapses: the owner may have
	// died after the effect began, so the record is as good as UNKNOWN.
	External bool
	// RenewedAt is when an owner of the in-progress record last renewed its
	// lease (see [Store.Renew]); zero if none did. It is kept by a takeover
	// (a former owner that renewed may still be running) and when the
	// record becomes UNKNOWN.
	RenewedAt time.Time
}

// Exists reports whether r is a record at all (the zero Record is absent).
func (r Record) Exists() bool { return r.Status != "" }

// Live reports whether r exists and has not expired at now. Stores delete
// expired records late, so an expired record is treated as absent.
func (r Record) Live(now time.Time) bool {
	return r.Exists() && !r.ExpiresAt.Before(now)
}

// Claim asks a store to make an attempt the owner of a record.
type Claim struct {
	Key         string
	Token       string
	Fingerprint string
	// Now is the claimant's clock; the store compares expirations against it.
	Now time.Time
	// LeaseUntil is when the new owner's lease ends.
	LeaseUntil time.Time
	// ExpiresAt is the record's TTL should the attempt never finish.
	ExpiresAt time.Time
}

// Commit asks a store to complete a record with an outcome.
type Commit struct {
	Key         string
	Token       string
	Fingerprint string
	Outcome     []byte
	Now         time.Time
	// ExpiresAt is the completed record's TTL: Now plus the retry horizon.
	ExpiresAt time.Time
	// Attempts is written back to the record; it is the claim count.
	Attempts int
	// CreatedAt is kept from the claim.
	CreatedAt time.Time
	// Claim makes the commit its own claim (optimistic mode): instead of being
	// fenced on Token, it succeeds only where a claim would, when the record is
	// absent, expired, or in progress with a lapsed lease.
	Claim bool
	// Effects are the business writes the handler staged, in order. A store
	// commits them in the same atomic write as the record, or fails. A store
	// that does not know an effect's type must fail the commit.
	Effects []any
}

// Renewal asks a store to extend the lease of an attempt that is still
// running.
type Renewal struct {
	Key   string
	Token string
	// Now is the owner's clock: the renewal is refused if the lease already
	// ended before Now, and Now becomes the record's RenewedAt.
	Now time.Time
	// LeaseUntil is the new end of the lease.
	LeaseUntil time.Time
	// ExpiresAt is the record's new TTL, which must outlast the lease.
	ExpiresAt time.Time
}

// Fence names a record and the attempt that must still own it.
type Fence struct {
	Key   string
	Token string
}

// Store persists idempotency records. Every method must be safe for
// concurrent use; every write is one conditional, atomic operation.
//
// A failed condition is a result, not an error: the methods report it with
// a false boolean and, where the store can tell, the record that made it
// fail. Errors are for everything else. A store wraps errors that mean the
// store could not be reached or refused service (throttling, 5xx, timeouts)
// with [ErrStoreUnavailable], and errors that mean the staged effects were
// refused, with nothing written, with [ErrEffectRejected].
type Store interface {
	// Claim makes c.Token the owner of c.Key if the record is absent,
	// expired at c.Now, or in progress with a lease that ended before c.Now
	// and no external effect marked (see MarkExternal).
	// A takeover increments the attempt count and keeps the creation time
	// and RenewedAt (the former owner may still be running).
	// It returns the new record and true, or the record in the way and false.
	Claim(ctx context.Context, c Claim) (Record, bool, error)

	// Commit writes the completed record and the staged effects atomically.
	// Unless c.Claim is set, it is fenced: it succeeds only while the record is
	// in progress or unknown with c.Token. On a failed condition it returns the
	// current record (zero if absent) and false, and writes none of the effects.
	Commit(ctx context.Context, c Commit) (Record, bool, error)

	// MarkExternal records, fenced on f.Token while the record is in
	// progress, that its owner is about to start an external effect: it sets
	// Record.External, after which the record is never taken over when its
	// lease lapses (and an optimistic commit does not claim it).
	MarkExternal(ctx context.Context, f Fence) (bool, error)

	// Renew extends the lease of a running attempt, fenced: it succeeds only
	// while the record is in progress, owned by r.Token, and its lease has
	// not ended before r.Now (a lapsed lease may already be in a
	// contender's hands, so it is never revived). It sets the lease to
	// r.LeaseUntil, the expiration to r.ExpiresAt and RenewedAt to r.Now,
	// and keeps every other attribute (the external-effect mark included).
	// It returns false, and no error, when the condition fails.
	Renew(ctx context.Context, r Renewal) (bool, error)

	// Release deletes the record if it is still in progress or unknown with
	// f.Token, so that a retry runs the operation again.
	Release(ctx context.Context, f Fence) (bool, error)

	// MarkUnknown moves the record from in progress to unknown, fenced on
	// f.Token, and sets its expiration.
	MarkUnknown(ctx context.Context, f Fence, expiresAt time.Time) (bool, error)

	// Get reads the record with a strongly consistent read. An expired record
	// is reported as absent.
	Get(ctx context.Context, key string, now time.Time) (Record, error)
}
