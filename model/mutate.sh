#!/bin/sh
# mutate.sh [GUARD...]: switch off each guard of model/record.pml in turn
# (-DMUT_<GUARD>) and require spin to find a counterexample; fails if any
# mutant passes. Without arguments, every guard in the list below.
#
# Each guard is checked at its own bound (the cheapest at which spin finds
# the counterexample, model/check.sh's syntax: small,NAME=VALUE,...): the
# search stops at the first error, so the whole list takes a few minutes.
# MUTATE_BOUND=full (or any bound) checks every guard at that bound instead.
# Figures (state counts, depths, seconds) are in model/README.md.
#
# Each line: the guard, its bound, and the Go and DynamoDB text it stands for.
#
# Not listed, each with the reason spin finds no counterexample when it is
# off (checked at the bounds named, model/README.md "Guards without a
# counterexample"):
# - held's `#lease >= :nowMs` (-DMUT_HELD_LEASE): a record with a hold never
#   needs it (the hold is never before the lease); it covers records written
#   before the hold existed, which the model does not write.
# - claimCondition's `#expiration >= :nowSec` (-DMUT_CLAIM_LIVE): it keeps the
#   attempt count right (an update cannot restart it), not a property.
# - optimisticCommitCondition's `#status = :completed` for an expired record
#   (-DMUT_OPT_EXPIRED): every record the model (and the code since the gate)
#   writes that is not COMPLETED either has no expiration (UNKNOWN, external)
#   or one past its hold (INPROGRESS: ExpiryFor), so an expired one is
#   takeable anyway; the conjunct guards UNKNOWN and external records written
#   with an expiration by earlier versions, which the model does not write.
# - Attempt.BeginExternal's holdsLease (-DMUT_HOLDS_LEASE) and
#   renewCondition's `#lease >= :nowMs` (-DMUT_RENEW_LEASE): redundant with the
#   hold. A renewing owner's record is held until OwnerHold (>= its lease, and
#   >= its last renewal + MaxRunTime + LeaseMargin) from its claim on, so a
#   lapsed lease exposes nothing while the owner may run; an owner that does
#   not renew is stopped by its platform before its lease ends; a renewal or
#   mark fenced out (another token, another status) is refused by
#   runningCondition. Both fail fast in the code; neither is needed for a
#   property under the assumptions.
# - UnchangedCondition's hold_until and renewed_at (-DMUT_UNCHANGED_HOLD, the
#   condition of v0.2.0): spin finds its counterexample ((b)notdone, depth 99)
#   at small,TMAX=9,MAXRUN=5,FAULTS=2,LATES=2,REUSE=0,ROUNDS=1,RESENDS=1,NOFINAL
#   after 44,905,099 states (1,080 s at load 20): too long for this list's
#   budget; model/README.md, "Two late writes".
set -eu
here=$(cd "$(dirname "$0")" && pwd)
list=$(sed -n 's/^#  *\([A-Z_]*\)  *\([a-z][a-zA-Z0-9_,=]*\)  .*/\1 \2/p' "$0")
guards=${*:-$(printf '%s\n' "$list" | cut -d' ' -f1)}
#  GUARD                BOUND                                                  WHAT
#  HELD_HOLD            small                                                  held: #holdUntil >= :nowMs (OwnerMayRun: HoldUntil)
#  HELD_UNKNOWN         small,LEAK_AFTER_RENEWAL                               OwnerMayRun: an UNKNOWN record with a renewal on record is held (needed only where a handler leaves a call behind, see record.pml)
#  HOLD_SLACK           small                                                  OwnerHold: + LeaseMargin for clock skew (findings F2)
#  EXPIRY_HOLD          small,NATT=2,TMAX=5,FAULTS=0,OPERATOR=0,OPTIMISTIC=0,REUSE=0  ExpiryFor: never before the hold ends (claim and renewal expirations)
#  TAKE_EXTERNAL        small                                                  takeable: attribute_not_exists(#external)
#  REPLACE              small,NATT=3,TMAX=3,FAULTS=0,OPERATOR=0,OPTIMISTIC=0,REUSE=0,RENEWS=0,LATE=0  replaceCondition (claimExpired's PutItem)
#  FENCE_TOKEN          small                                                  fenceCondition: #attempt = :token (commit, release)
#  FENCE_STATUS         small                                                  fenceCondition: #status IN (:inProgress, :unknown)
#  RUNNING_TOKEN        small,NATT=2,TMAX=5,OPTIMISTIC=0,REUSE=0,RENEWS=0,LATE=0       runningCondition: #attempt = :token (marks, renew)
#  RUNNING_STATUS       small                                                  runningCondition: #status = :inProgress
#  RENEW_MONOTONE       small,TMAX=8                                           renewCondition: #renewedAt <= :renewedAt, a late renewal never moves the hold back (findings F4)
#  RENEW_EXTERNAL       small                                                  renewUnmarkedCondition: renewUpdate only without #external (findings F1)
#  EXTERNAL_TTL         small                                                  markExternalUpdate: REMOVE #expiration
#  UNKNOWN_TTL          small                                                  markUnknownUpdate: REMOVE #expiration
#  RECONCILE_HELD       small                                                  Judge: a held record is never VerdictReconcile (op.existing, op.reconcile)
#  OPERATOR_GATE        small                                                  Records.Judge before Resolve/Forget (dynamostore/records.go, the command)
#  UNCHANGED            small                                                  UnchangedCondition (Records' writes fenced on the record as read)
#  EXISTING_FP          small,NATT=2,TMAX=5,FAULTS=0,OPERATOR=0,OPTIMISTIC=0          op.existing: ErrKeyReused on another fingerprint
#  MARK_BEFORE_DISPATCH small                                                  Attempt.BeginExternal before the external call
#  OWN_LOST_COMMIT      small,NATT=2,TMAX=5,FAULTS=0,OPTIMISTIC=0,REUSE=0             ownLostCommit: our token AND our outcome bytes (op.commit, op.reconcile)
#  NEW_TOKEN            small                                                  Store.transact: a new ClientRequestToken after a cancellation
#  RENEW_TTL            small,TMAX=8,MAXRUN=6,RH=4                             renewOnce: maxTime(expires, ExpiryFor(now, hold, 0)), each renewal moves the expiration past its hold (the per-state invariant; Go: make mutate RENEW_TTL)
#  ASSUME_RETURNED      small                                                  the assumption, not a guard: a handler that has returned has no call in flight (off: -DLEAK_AFTER_RETURN, findings F3)
fail=0
printf '%-20s %-11s %-6s %-7s %s\n' guard property depth seconds "bound"
for g in $guards; do
	bound=${MUTATE_BOUND:-$(printf '%s\n' "$list" | sed -n "s/^$g //p")}
	[ -n "$bound" ] || { echo "mutate.sh: $g is not in the list" >&2; exit 2; }
	start=$(date +%s)
	out=$("$here/check.sh" "$bound" "-DMUT_$g" 2>&1) && {
		printf '%-20s %s (%s s, %s)\n' "$g" "NONE: the mutant passes" "$(($(date +%s) - start))" "$bound"
		fail=1
		continue
	}
	secs=$(($(date +%s) - start))
	what=$(printf '%s\n' "$out" | sed -n 's/.*text of failed assertion: //p' | head -1)
	# name the property the assertion checks (model/README.md, Properties)
	case $what in
	'') prop="error: $(printf '%s\n' "$out" | tail -1)" ;;
	*'r.exp>r.hold'*) prop="invariant" ;;
	*holder==*) prop="(a)holder" ;;
	*opCommits==0*) prop="(a)once" ;;
	*dispatchedBy*) prop="(b)notdone" ;;
	*dispatchOK*) prop="(b)again" ;;
	*storedFp*) prop="(c)" ;;
	*'>r.exp'*) prop="(d)" ;;
	*progressed*) prop="(e)" ;;
	*inHandler*) prop="(f)" ;;
	*) prop=$(printf '%s' "$what" | cut -c1-40) ;;
	esac
	depth=$(printf '%s\n' "$out" | sed -n 's/.*(at depth \([0-9]*\)).*/\1/p' | head -1)
	printf '%-20s %-11s %-6s %-7s %s\n' "$g" "$prop" "${depth:-?}" "$secs" "$bound"
	case $prop in error*) fail=1 ;; esac
done
exit $fail
