#!/bin/sh
# goals.sh [GOAL...]: the reachability goals of model/record.pml, each at its
# bound: -DGOAL=<id> turns the goal into an assertion that spin must
# violate (a trail reaching it). A bound that no longer reaches a goal
# checks its properties vacuously there: goals.sh then fails. Without
# arguments, every goal in the list below.
#
# Each line: the goal, its bound (model/check.sh's syntax), what it is.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
list=$(sed -n 's/^#  *\([A-Z_]*\)  *\([a-z][a-zA-Z0-9_,=]*\)  .*/\1 \2/p' "$0")
goals=${*:-$(printf '%s\n' "$list" | cut -d' ' -f1)}
#  GOAL                 BOUND                                      WHAT
#  SECOND_CLAIM         small,NATT=2,TMAX=5,OPERATOR=0,LATE=0       a claim applied while another attempt is in its handler
#  TAKEOVER             small,NATT=2,TMAX=5,OPERATOR=0,LATE=0       a claim applied over an INPROGRESS record
#  RESOLVE_DONE         small                                      the operator's resolve --done applied
#  RECONCILE_FINAL      small                                      the final retry reconciles an uncertain record
#  MARK_UNKNOWN         small                                      MarkUnknown applied (a handler failed after BeginExternal)
#  LATE_AFTER_READ      small,TMAX=8                               a late renewal applied after the operator's read
#  OPT_REFUSED          small,NATT=2,TMAX=3,FAULTS=0,OPERATOR=0,LATE=0,RENEWS=0      an optimistic commit refused
#  FENCED_OUT           small                                      an owner's commit refused by the fence (a late one: a live owner never is)
#  TWO_LATE             small,TMAX=8,FAULTS=2,LATES=2              two late writes in flight at once
#  NOTDONE_REDISPATCH   small                                      a dispatch after a "not done" released the record
#  TTL_INPROG           small                                      TTL deletion of an INPROGRESS record
#  RENEW_CAPPED         small,TMAX=8                               a renewal capped at MaxRunTime applied
fail=0
printf '%-20s %-9s %-6s %-7s %s\n' goal reached depth seconds bound
for g in $goals; do
	bound=${GOALS_BOUND:-$(printf '%s\n' "$list" | sed -n "s/^$g //p")}
	[ -n "$bound" ] || { echo "goals.sh: $g is not in the list" >&2; exit 2; }
	id=$(sed -n "s/^#define G_$g  *\([0-9]*\).*/\1/p" "$here/record.pml")
	[ -n "$id" ] || { echo "goals.sh: G_$g is not defined in record.pml" >&2; exit 2; }
	start=$(date +%s)
	if out=$("$here/check.sh" "$bound" "-DGOAL=$id" 2>&1); then
		printf '%-20s %-9s %-6s %-7s %s\n' "$g" "NO" "-" "$(($(date +%s) - start))" "$bound"
		fail=1
		continue
	fi
	secs=$(($(date +%s) - start))
	if ! printf '%s\n' "$out" | grep -q 'text of failed assertion: assert(!(goalReached))'; then
		printf '%-20s %-9s %-6s %-7s %s\n' "$g" "ERROR" "-" "$secs" "$bound"
		printf '%s\n' "$out" | tail -5 >&2
		fail=1
		continue
	fi
	depth=$(printf '%s\n' "$out" | sed -n 's/.*(at depth \([0-9]*\)).*/\1/p' | head -1)
	printf '%-20s %-9s %-6s %-7s %s\n' "$g" yes "${depth:-?}" "$secs" "$bound"
done
exit $fail
