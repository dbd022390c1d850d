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
	// in a way that does not prove the effect did not happen. The record is kept,
	// with no expiration, until a reconcile function or an operator resolves it.
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
	// RenewedAt is when the owner of the in-progress record last renewed its
	// lease (see [Store.Renew]); zero if it did not. A takeover clears it
	// (the new owner has not renewed; the former one can no longer be
	// running, or the record would be held), and it is kept when the record
	// becomes UNKNOWN.
	RenewedAt time.Time
	// Renews records, at claim, whether the owner renews its lease while
	// its handler runs (Options.Renew): such an owner runs where deadlines
	// are not enforced. False on records written before it was recorded.
	Renews bool
	// HoldUntil is until when the owner may still be running (see
	// [HoldUntil] and [Judge]), written at claim and at every renewal;
	// zero on records written before it was recorded.
	HoldUntil time.Time
	// DispatchedAt is when the owner first began its external effect
	// (Attempt.BeginExternal), and DispatchWindow how long the downstream
	// deduplicates the operation key (Attempt.BeginExternalWithin; zero:
	// no bound given). Past it, a reconcile may not redispatch
	// ([VerdictWindowPassed]). Both kept across UNKNOWN.
	DispatchedAt   time.Time
	DispatchWindow time.Duration
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
	// ExpiresAt is the record's TTL should the attempt never finish; past
	// HoldUntil (see [ExpiryFor]).
	ExpiresAt time.Time
	// Renews says whether the new owner renews its lease; it is recorded.
	Renews bool
	// HoldUntil is until when the new owner may run (see [OwnerHold]).
	HoldUntil time.Time
	// Window is the claimant's Options.MaxRunTime: how long the owner of
	// a record written without a hold is assumed to run after its last
	// sign of life (see [HoldUntil]).
	Window time.Duration
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
	// fenced on Token, it succeeds only where a claim would: where [Judge]
	// says the record is [Verdict.Claimable].
	Claim bool
	// Window is the committer's Options.MaxRunTime, for a Claim commit; see
	// [Claim].Window.
	Window time.Duration
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
	// ExpiresAt is the record's new TTL, past HoldUntil (see [ExpiryFor]);
	// ignored when External is set.
	ExpiresAt time.Time
	// HoldUntil is until when the owner may now run (see [OwnerHold]).
	HoldUntil time.Time
	// External says the attempt has marked an external effect: the record
	// keeps no expiration.
	External bool
}

// Fence names a record and the attempt that must still own it.
type Fence struct {
	Key   string
	Token string
	// Now and Window are for MarkExternal only: when the external effect
	// begins, recorded as Record.DispatchedAt by the first mark, and the
	// downstream's deduplication window, Record.DispatchWindow.
	Now    time.Time
	Window time.Duration
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
	// Claim makes c.Token the owner of c.Key where the record is
	// [Verdict.Claimable] by [Judge] at c.Now with c.Window: absent or
	// expired (a fresh record: one attempt, created now), or taken over (an
	// in-progress record without an external effect whose owner cannot be
	// running any more: the attempt count goes up by one, the creation time
	// is kept and RenewedAt cleared). It writes c's lease, expiration, Renews
	// and HoldUntil. It returns the new record and true, or the record in the
	// way and false.
	Claim(ctx context.Context, c Claim) (Record, bool, error)

	// Commit writes the completed record and the staged effects atomically.
	// Unless c.Claim is set, it is fenced: it succeeds only while the record is
	// in progress or unknown with c.Token. On a failed condition it returns the
	// current record (zero if absent) and false, and writes none of the effects.
	Commit(ctx context.Context, c Commit) (Record, bool, error)

	// MarkExternal records, fenced on f.Token while the record is in
	// progress, that its owner is about to start an external effect: it sets
	// Record.External, after which the record is never taken over when its
	// lease lapses (and an optimistic commit does not claim it), and
	// removes its expiration: an external record never expires.
	MarkExternal(ctx context.Context, f Fence) (bool, error)

	// Renew extends the lease of a running attempt, fenced: it succeeds only
	// while the record is in progress, owned by r.Token, and its lease has
	// not ended before r.Now (a lapsed lease may already be in a
	// contender's hands, so it is never revived), and its RenewedAt is not
	// after r.Now (a renewal applied after a later one of the same attempt
	// never moves the last renewal, lease and hold back). It sets the lease to
	// r.LeaseUntil, HoldUntil to r.HoldUntil, RenewedAt to r.Now and the
	// expiration to r.ExpiresAt (or, with r.External, removes it), and
	// keeps every other attribute (the external-effect mark included).
	// It returns false, and no error, when the condition fails.
	Renew(ctx context.Context, r Renewal) (bool, error)

	// Release deletes the record if it is still in progress or unknown with
	// f.Token, so that a retry runs the operation again.
	Release(ctx context.Context, f Fence) (bool, error)

	// MarkUnknown moves the record from in progress to unknown, fenced on
	// f.Token, and removes its expiration: an UNKNOWN record is kept until
	// it is resolved.
	MarkUnknown(ctx context.Context, f Fence) (bool, error)

	// Get reads the record with a strongly consistent read. An expired record
	// is reported as absent.
	Get(ctx context.Context, key string, now time.Time) (Record, error)
}
