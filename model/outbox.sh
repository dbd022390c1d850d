#!/bin/sh
# outbox.sh: the outbox model (model/outbox.pml: one record key's outbox
# item, two relays, a target that deduplicates by id for a window, key
# reuse) checked with spin: the searches, the findings, the goals and the
# mutants. Fails on any search that gives an unexpected answer.
#
# Each line below: kind, name, spin flags (model parameters or a variant).
#   pass    the search must find no counterexample (complete, exhaustive)
#   finding the built code's open counterexample: must still be found
#   goal    -DGOAL=<id> must be violated (the bound reaches it)
#   mutant  -DMUT_<name> must give a counterexample of a property
# Findings (issue 33 item 4), both fixed in the Go code and kept found as the
# mutants NO_RECHECK and NO_OPFENCE: O1 a first dispatch whose DispatchUpdate
# answered late was published without asking Lands again (relay.step),
# landing past the window of a redispatch by the other relay
# (TestLateDispatchAnswerIsJudgedAgain); O2 atPosition named no operation: a
# late mark after key reuse advanced the next operation's item
# (TestStaleMarkLeavesTheNextOperationsItem; atPosition now compares
# #committed).
#
#  mutant  NO_RECHECK            -DTMAX=4 -DW=2
#  mutant  NO_OPFENCE            -DTMAX=4 -DW=2
#  pass    oneop                 -DTMAX=3 -DW=2 -DNOPS=1
#  pass    reuse                 -DTMAX=3 -DW=2 -DCRASHES=0 -DUNPUB=0
#  goal    TWICE                 -DTMAX=4 -DW=2
#  goal    SET_ASIDE             -DTMAX=4 -DW=2
#  goal    LATE_MARK             -DTMAX=4 -DW=2
#  goal    REUSE                 -DTMAX=4 -DW=2
#  goal    PAST_WINDOW           -DTMAX=4 -DW=2
#  mutant  DISPATCH_EXISTS       -DTMAX=4 -DW=2
#  mutant  NO_STATUS             -DTMAX=4 -DW=2
#  mutant  NO_POSITION           -DTMAX=4 -DW=2
#  mutant  NO_MARGIN             -DTMAX=4 -DW=2
#  mutant  IDS_PER_KEY           -DTMAX=4 -DW=2
#
# Usage: outbox.sh [NAME...] (default: every line). Environment: MODEL_DIR
# (work folder), MODEL_MEMLIM (MB, default 2000), OUTBOX_FLAGS (extra spin
# flags for every search, e.g. -DTMAX=6).
set -eu
if ! command -v spin >/dev/null 2>&1; then
	echo "spin is not installed: the outbox model needs it (Debian/Ubuntu: apt-get install -y spin)" >&2
	exit 1
fi
command -v cc >/dev/null 2>&1 || { echo "a C compiler (cc) is needed to build spin's verifier" >&2; exit 1; }
here=$(cd "$(dirname "$0")" && pwd)
dir=${MODEL_DIR:-$(mktemp -d)}
mkdir -p "$dir"
cp "$here/outbox.pml" "$dir/"
cd "$dir"
list=$(sed -n 's/^#  \(pass\|finding\|goal\|mutant\)  *\([A-Za-z0-9_]*\)  *\(.*\)$/\1 \2 \3/p' "$here/outbox.sh")
names=${*:-$(printf '%s\n' "$list" | cut -d' ' -f2)}
fail=0
printf '%-8s %-18s %-8s %-6s %-11s %-7s %-6s %s\n' kind name result depth states seconds MB flags
for n in $names; do
	line=$(printf '%s\n' "$list" | awk -v n="$n" '$2 == n')
	[ -n "$line" ] || { echo "outbox.sh: $n is not in the list" >&2; exit 2; }
	kind=${line%% *}
	flags=$(printf '%s\n' "$line" | cut -d' ' -f3-)
	case $kind in
	goal)
		id=$(sed -n "s/^#define G_$n  *\([0-9]*\).*/\1/p" outbox.pml)
		[ -n "$id" ] || { echo "outbox.sh: G_$n is not defined in outbox.pml" >&2; exit 2; }
		flags="$flags -DGOAL=$id" ;;
	mutant) flags="$flags -DMUT_$n" ;;
	esac
	start=$(date +%s)
	# shellcheck disable=SC2086
	spin -a $flags ${OUTBOX_FLAGS:-} outbox.pml >/dev/null
	cc -O0 -DSAFETY -DHC4 -DMEMLIM="${MODEL_MEMLIM:-4000}" -o pan pan.c
	# -E: every process may stop anywhere (a crash)
	timeout "${OUTBOX_TIMEOUT:-600}" nice -n 10 ./pan -m100000 -w24 -E >pan.out 2>&1 || true
	secs=$(($(date +%s) - start))
	states=$(sed -n 's/^ *\([0-9.e+]*\) states, stored.*/\1/p' pan.out | head -1)
	mb=$(sed -n 's/^ *\([0-9.]*\).*total actual memory usage.*/\1/p' pan.out | head -1)
	depth=$(sed -n 's/.*(at depth \([0-9]*\)).*/\1/p' pan.out | head -1)
	if grep -qE "reached -DMEMLIM bound|max search depth too small|out of memory" pan.out; then
		result=CUT
	elif grep -q "errors: 0" pan.out; then
		result=none
	elif grep -q "assertion violated.*goalReached" pan.out; then
		result=goal
	else
		result=$(sed -n 's/^pan:1: assertion violated *\(.*\) (at depth.*/\1/p' pan.out | head -1)
		result=${result:-error}
	fi
	ok=no
	case $kind/$result in
	pass/none | goal/goal) ok=yes ;;
	finding/none | finding/goal | finding/CUT | mutant/none | mutant/goal | mutant/CUT) ;;
	finding/* | mutant/*) ok=yes ;;
	esac
	printf '%-8s %-18s %-8s %-6s %-11s %-7s %-6s %s\n' "$kind" "$n" "$([ $ok = yes ] && echo ok || echo FAIL)" "${depth:--}" "${states:-?}" "$secs" "${mb%.*}" "$flags"
	if [ "$kind" != goal ] && [ "$result" != none ] && [ "$result" != CUT ]; then
		printf '         %s\n' "$result"
	fi
	if [ $ok = no ]; then
		fail=1
		tail -5 pan.out >&2
		[ "$result" = none ] || [ "$result" = CUT ] || echo "trail: cd $dir && spin -t -p -g $flags outbox.pml" >&2
	fi
done
exit $fail
