#!/bin/sh
# mutate.sh [GUARD...]: switch off each guard of model/record.pml in turn
# (-DMUT_<GUARD>) and require spin to find a counterexample; fails if any
# mutant passes. Without arguments, every guard in the list below.
#
# Each line: the guard, and the Go and DynamoDB text it stands for. Not listed:
# held's `#lease >= :nowMs` (-DMUT_HELD_LEASE), which a record with a hold never
# needs (the hold is never before the lease): it covers records written before
# the hold existed, which the model does not hold; and claimCondition's
# `#expiration >= :nowSec` (-DMUT_CLAIM_LIVE), which keeps the attempt count
# right (an update cannot restart it), not a property.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
guards=${*:-$(sed -n 's/^#  *\([A-Z_]*\) .*/\1/p' "$0")}
#  HELD_HOLD            held: #holdUntil >= :nowMs (OwnerMayRun: HoldUntil)
#  HELD_UNKNOWN         OwnerMayRun: an UNKNOWN record whose owner renewed is held
#  HOLD_SLACK           HoldFor: + LeaseMargin for clock skew (findings F2)
#  EXPIRY_HOLD          ExpiryFor: never before the hold ends (claim and renewal expirations)
#  TAKE_EXTERNAL        takeable: attribute_not_exists(#external)
#  REPLACE              replaceCondition (claimExpired's PutItem)
#  OPT_EXPIRED          optimisticCommitCondition: only a COMPLETED record expires
#  FENCE_TOKEN          fenceCondition: #attempt = :token (commit, release)
#  FENCE_STATUS         fenceCondition: #status IN (:inProgress, :unknown)
#  RUNNING_TOKEN        runningCondition: #attempt = :token (marks, renew)
#  RUNNING_STATUS       runningCondition: #status = :inProgress
#  RENEW_LEASE          renewCondition: #lease >= :nowMs (a lapsed lease is never revived)
#  RENEW_EXTERNAL       renewUpdate only without #external (findings F1)
#  EXTERNAL_TTL         markExternalUpdate: REMOVE #expiration
#  UNKNOWN_TTL          markUnknownUpdate: REMOVE #expiration
#  RECONCILE_HELD       Judge: a held record is never VerdictReconcile (op.existing, op.reconcile)
#  OPERATOR_GATE        Records.Judge before Resolve/Forget (dynamostore/records.go, the command)
#  UNCHANGED            UnchangedCondition (Records' writes fenced on the record as read)
#  EXISTING_FP          op.existing: ErrKeyReused on another fingerprint
#  HOLDS_LEASE          Attempt.BeginExternal: holdsLease before MarkExternal
#  MARK_BEFORE_DISPATCH Attempt.BeginExternal before the external call
#  OWN_LOST_COMMIT      ownLostCommit: our token AND our outcome bytes
#  NEW_TOKEN            Store.transact: a new ClientRequestToken after a cancellation
fail=0
printf '%-22s %s\n' guard "counterexample (the first assertion spin breaks)"
for g in $guards; do
	out=$("$here/check.sh" "${MUTATE_BOUND:-full}" "-DMUT_$g" 2>&1) && {
		printf '%-22s %s\n' "$g" "NONE: the mutant passes"
		fail=1
		continue
	}
	what=$(printf '%s\n' "$out" | sed -n 's/.*text of failed assertion: //p' | head -1 | cut -c1-70)
	depth=$(printf '%s\n' "$out" | sed -n 's/.*(at depth \([0-9]*\)).*/\1/p' | head -1)
	printf '%-22s %s (depth %s)\n' "$g" "${what:-$(printf '%s\n' "$out" | tail -1)}" "${depth:-?}"
done
exit $fail
