package lambdaidem

import (
	"strconv"
	"time"
)

// The gate: the one rule every path keeps.
//
// A record is never taken over, reconciled, settled by an operator,
// forgotten, or treated as expired while its owner may still be running
// or its external effect may still land. Two questions decide it, each
// answered by one function of the record and the clock, here and nowhere
// else:
//
//   - [OwnerMayRun]: may the owner of this record still be running, or its
//     effect still land?
//   - [Judge]: what may this caller do with the record now? One [Verdict].
//
// Every path asks them: the duplicate's existing/wait/reconcile (do.go),
// the renewer's writes (renew.go), memstore's conditions, dynamostore's
// condition expressions (which say the same predicate in DynamoDB's
// language, tied to these functions by an exhaustive test against the
// DynamoDB test endpoint), and the operator's dynamostore.Records and the
// lambdaidem command. The owner's writes take their times from
// [OwnerHold] and [ExpiryFor], so that what is written keeps the rule.
//
// # States
//
// absent (no record), INPROGRESS, COMPLETED and UNKNOWN ([Status]).
//
// # Inputs
//
//   - Status, LeaseUntil (the lease), External (the owner began an
//     external effect), ExpiresAt (the TTL), RenewedAt (the owner's last
//     renewal), Renews (the owner renews its lease, recorded at claim) and
//     HoldUntil (until when the owner may run, written at claim and at
//     every renewal) of the [Record];
//   - now, the caller's clock;
//   - window, the caller's Options.MaxRunTime, used only for a record
//     written before HoldUntil existed (it has none): such an owner is
//     assumed to renew, and to run for window after its last sign of life
//     (its last renewal, else its lease end).
//
// # The hold
//
// The owner may run until [HoldUntil]: its lease end for an owner that
// does not renew (standard Lambda stops a handler at its deadline, and the
// lease outlasts it by Options.LeaseMargin); for one that renews (Lambda
// Managed Instances, containers and local servers do not stop it), its
// last renewal (before any, its lease end) plus its MaxRunTime plus its
// LeaseMargin (the clock-skew slack the lease has: see [OwnerHold]), never
// before its lease end. That is the one assumption the renewing case
// needs: an owner silent for MaxRunTime has stopped. An INPROGRESS record
// is held ([OwnerMayRun]) while now is not past its hold. An UNKNOWN
// record was written by its owner when its handler returned, and on every
// platform a handler that has returned has no call of its own still in
// flight (the one assumption every platform needs, docs/guarantees.md; the
// context the handler ran in has ended, so a call it left under that
// context is cancelled): an UNKNOWN record whose owner never renewed is
// not held, whether the owner renews or not; one with a renewal on record
// is held until its hold, as [Call] promises for Reconcile (never while
// the owner renewed less than its MaxRunTime ago).
//
// # Actions
//
// [Judge] answers one of:
//
//	VerdictAbsent     no record                              claim (create)
//	VerdictExpired    past its TTL, not held, COMPLETED or   claim afresh (replace: attempts restart)
//	                  INPROGRESS without an external effect
//	VerdictTakeOver   INPROGRESS, lease lapsed, not held,    claim (take over: attempts + 1)
//	                  no external effect
//	VerdictReplay     COMPLETED, live                        replay; an operator may forget it
//	VerdictHeld       INPROGRESS, or UNKNOWN renewed, held   wait or refuse (duplicates: ErrInProgress,
//	                                                         or ErrOutcomeUnknown for UNKNOWN);
//	                                                         operators: refused (settle, forget)
//	VerdictReconcile  UNKNOWN, or INPROGRESS with an         reconcile (Call.Reconcile); an operator
//	                  external effect, lease lapsed, not held settles (resolve --done/--not-done) or forgets
//	VerdictWindowPassed as VerdictReconcile, and the downstream's  reconcile "done" only; "not done" (a
//	                  deduplication window has passed since the  redispatch) is refused: the record stays
//	                  first dispatch ([WindowPassed])            UNKNOWN for an operator
//
// UNKNOWN and external records never expire: their expiration is ignored
// (records written before this rule have one) and the owner's writes
// remove it. They are recovery obligations, not evidence that nothing
// happened. An INPROGRESS record never expires while held: the owner
// writes an expiration past its hold ([ExpiryFor]), and a record written
// before that rule, past its expiration but held, is still held.
// COMPLETED records expire at their TTL.

// Verdict is what a caller may do with a record now; see [Judge].
type Verdict int

const (
	// VerdictAbsent: there is no record; a claim creates it.
	VerdictAbsent Verdict = iota
	// VerdictExpired: the record's expiration has passed and nobody may
	// still run under it: it is treated as absent, and a claim replaces it
	// (the operation starts afresh).
	VerdictExpired
	// VerdictTakeOver: an INPROGRESS record without an external effect
	// whose owner's lease lapsed and who cannot be running any more: a
	// claim takes it over (one more attempt).
	VerdictTakeOver
	// VerdictReplay: a live COMPLETED record: duplicates replay it.
	VerdictReplay
	// VerdictHeld: its owner may still be running, or its effect still
	// land: nobody takes it over, reconciles, settles, forgets or expires
	// it. Duplicates wait or are refused.
	VerdictHeld
	// VerdictReconcile: the outcome is uncertain and nobody runs under the
	// record any more: an UNKNOWN record, or an INPROGRESS one whose owner
	// began an external effect and lapsed. A reconcile function or an
	// operator settles it.
	VerdictReconcile
	// VerdictWindowPassed: as VerdictReconcile, but the downstream's
	// deduplication window (Attempt.BeginExternalWithin) has passed since
	// the first dispatch: the downstream may no longer remember the
	// operation key, so a redispatch could repeat the effect. A reconcile
	// may settle it as done, never as not done; an operator decides.
	VerdictWindowPassed
)

// String names the verdict: "absent", "expired", "take over", "replay",
// "held" or "reconcile".
func (v Verdict) String() string {
	switch v {
	case VerdictAbsent:
		return "absent"
	case VerdictExpired:
		return "expired"
	case VerdictTakeOver:
		return "take over"
	case VerdictReplay:
		return "replay"
	case VerdictHeld:
		return "held"
	case VerdictReconcile:
		return "reconcile"
	case VerdictWindowPassed:
		return "window passed"
	}
	return "Verdict(" + strconv.Itoa(int(v)) + ")"
}

// Claimable reports whether a claim may take the record: absent, expired
// or taken over. It is the condition of Store.Claim and of a commit that
// claims (Commit.Claim).
func (v Verdict) Claimable() bool {
	return v == VerdictAbsent || v == VerdictExpired || v == VerdictTakeOver
}

// Settleable reports whether a reconcile function or an operator may
// settle the record (done: COMPLETED; not done: released).
func (v Verdict) Settleable() bool { return v == VerdictReconcile || v == VerdictWindowPassed }

// Redispatchable reports whether a reconcile function may settle the
// record as not done, releasing it so that the next attempt dispatches the
// external effect again: only while the downstream's deduplication window
// has not passed.
func (v Verdict) Redispatchable() bool { return v == VerdictReconcile }

// Forgettable reports whether an operator may delete the record: it
// exists and is not held.
func (v Verdict) Forgettable() bool { return v != VerdictAbsent && v != VerdictHeld }

// Judge says what a caller may do now with rec, a record as stored
// (expired or not); window is the caller's MaxRunTime, for records written
// without a hold (see [HoldUntil]). A record of a status it does not know
// is held: nothing may touch it.
func Judge(rec Record, now time.Time, window time.Duration) Verdict {
	switch {
	case !rec.Exists():
		return VerdictAbsent
	case OwnerMayRun(rec, now, window):
		return VerdictHeld
	}
	switch rec.Status {
	case StatusCompleted:
		if rec.ExpiresAt.Before(now) {
			return VerdictExpired
		}
		return VerdictReplay
	case StatusUnknown:
		return reconcile(rec, now)
	case StatusInProgress:
		switch {
		case rec.External:
			return reconcile(rec, now)
		case rec.ExpiresAt.Before(now):
			return VerdictExpired
		}
		return VerdictTakeOver
	}
	return VerdictHeld
}

// reconcile is the verdict on an uncertain record nobody runs under.
func reconcile(rec Record, now time.Time) Verdict {
	if WindowPassed(rec.DispatchedAt, rec.DispatchWindow, now) {
		return VerdictWindowPassed
	}
	return VerdictReconcile
}

// WindowPassed reports whether a downstream that deduplicates for window
// may have forgotten a dispatch first made at first: a window was given,
// there was a dispatch, and now is not before first + window (at the
// window's last instant the downstream may already have forgotten). It is
// [WithinWindow] with no margin: what [Judge] says of a record now.
func WindowPassed(first time.Time, window time.Duration, now time.Time) bool {
	return !WithinWindow(first, window, now, 0)
}

// WithinWindow reports whether an effect on a downstream that deduplicates
// for window, first dispatched at first, still lands inside that window
// when it is judged at now on this clock and may take margin
// ([WindowMargin]) to land: no window was given, there was no dispatch, or
// now + margin < first + window. It is the one rule for going back to such
// a downstream: the core asks it when a reconcile function answers "not
// done" (the answer is worth something only while the downstream still
// remembers the operation key), with Options.LeaseMargin as the margin;
// the outbox relay asks it before every resend (outbox.Lands), with its
// clock skew and its publish's bound.
func WithinWindow(first time.Time, window time.Duration, now time.Time, margin time.Duration) bool {
	return window <= 0 || first.IsZero() || now.Add(margin).Before(first.Add(window))
}

// WindowMargin is the margin a dispatch to a downstream with a
// deduplication window keeps before the window's end ([WithinWindow]):
// skew, the clock-skew slack between the clock that recorded the first
// dispatch and the one judging now (as Options.LeaseMargin is for holds),
// plus took, the longest the dispatch itself may take to land (its timeout
// with its retries; zero for an answer already in hand).
func WindowMargin(skew, took time.Duration) time.Duration { return skew + took }

// OwnerMayRun reports whether the owner of rec may still be running, or
// its effect still land, at now: rec is INPROGRESS, or UNKNOWN with a
// renewal on record, and now is not past [HoldUntil]. window is the
// caller's MaxRunTime, for records written without a hold.
func OwnerMayRun(rec Record, now time.Time, window time.Duration) bool {
	switch rec.Status {
	case StatusInProgress:
	case StatusUnknown:
		if rec.RenewedAt.IsZero() {
			return false
		}
	default:
		return false
	}
	return !now.After(HoldUntil(rec, window))
}

// HoldUntil is until when the owner of rec may be running: the later of
// its lease end and its recorded hold (Record.HoldUntil). A record written
// before holds were recorded has none: its owner is assumed to renew, and
// to run for window after its last renewal (before any, its lease end).
func HoldUntil(rec Record, window time.Duration) time.Time {
	if !rec.HoldUntil.IsZero() {
		return maxTime(rec.LeaseUntil, rec.HoldUntil)
	}
	last := rec.RenewedAt
	if last.IsZero() {
		last = rec.LeaseUntil
	}
	return maxTime(rec.LeaseUntil, last.Add(window))
}

// OwnerHold is the hold an owner writes with a lease ending at lease, its
// last sign of life being last (the claim's lease end, or a renewal's
// time): lease for an owner that does not renew; for one that does, last
// plus maxRunTime plus margin, never before lease. margin is the owner's
// Options.LeaseMargin: the hold is written on the owner's clock and judged
// on the reader's, so it needs the clock-skew slack the lease has (with
// the owner's clock ε behind and the reader's ε ahead, a hold of last +
// maxRunTime would end 2ε before the owner has been silent for
// maxRunTime; LeaseMargin exceeds 2ε).
func OwnerHold(lease, last time.Time, renews bool, maxRunTime, margin time.Duration) time.Time {
	if !renews {
		return lease
	}
	return maxTime(lease, last.Add(maxRunTime+margin))
}

// HoldFor is [OwnerHold] without the clock-skew margin: its hold can end
// up to twice the clock skew before the owner has been silent for
// maxRunTime.
//
// Deprecated: use [OwnerHold] with the owner's Options.LeaseMargin, which
// the Guard writes.
func HoldFor(lease, last time.Time, renews bool, maxRunTime time.Duration) time.Time {
	return OwnerHold(lease, last, renews, maxRunTime, 0)
}

// ExpiryFor is the expiration an owner writes on an INPROGRESS record
// without an external effect at now, with hold: the retry horizon from
// now, and never before the hold has ended (a second more, for stores
// that keep the expiration in whole seconds), so that the record never
// expires while its owner may run.
func ExpiryFor(now, hold time.Time, horizon time.Duration) time.Time {
	return maxTime(now.Add(horizon), hold.Add(time.Second))
}

// Exists reports whether r is a record at all (the zero Record is absent).
func (r Record) Exists() bool { return r.Status != "" }

// Live reports whether r exists and has not passed its expiration at now.
// UNKNOWN records and INPROGRESS records with an external effect never
// expire, whatever their expiration says. Stores delete expired records
// late, so a record past its expiration is treated as absent, unless it
// is held: see [Judge], which is what decides.
func (r Record) Live(now time.Time) bool {
	switch {
	case !r.Exists():
		return false
	case r.Status == StatusUnknown, r.Status == StatusInProgress && r.External:
		return true
	}
	return !r.ExpiresAt.Before(now)
}
