#!/bin/sh
# cutover.sh: the Powertools cutover model (model/cutover.pml: one operation
# inside a Powertools window, Powertools instances beside lambdaidem owners)
# checked with spin: the searches, the reachability goals and the mutants.
# Fails on any search that gives an unexpected answer.
#
# Each line below: kind, name, spin flags (model parameters or a variant).
#   pass    the search must find no counterexample (complete, exhaustive)
#   finding the built design's open counterexample: must still be found
#           (a search that no longer finds it fails: update the list)
#   goal    -DGOAL=<id> must be violated (the bound reaches it)
#   mutant  -DMUT_<name> must give a counterexample of a property
# SHADOW_LOST (a commit refused by the shadow's fence) is reached only with
# the refused follow ignored (MUT_FENCED_FOLLOW, finding C2 as first built):
# since the fix an owner whose shadow was taken stops at its renewal or its
# BeginExternal, before any commit; the commit's fence stays as a second
# line (COMMIT_NOFENCE still gives a counterexample).
#
#  pass    built                 -DTMAX=5
#  pass    built_t6              -DTMAX=6
#  pass    built_noext           -DEXTERNAL=0
#  pass    built_norenew         -DRENEWS=0
#  pass    built_noext_t6        -DEXTERNAL=0 -DTMAX=6
#  goal    PT_REPLAYS_L          -DTMAX=5
#  goal    L_FROM_PT             -DTMAX=5
#  goal    PT_INPROG_SHADOW      -DTMAX=5
#  goal    L_INPROG_PT           -DTMAX=5
#  goal    PT_DUP                -DTMAX=5
#  goal    SHADOW_LOST           -DEXTERNAL=0 -DMUT_FENCED_FOLLOW
#  mutant  FENCED_FOLLOW         -DTMAX=5
#  mutant  SHADOW_COND           -DTMAX=5
#  mutant  COMMIT_NOSHADOW       -DTMAX=5
#  mutant  COMMIT_NOFENCE        -DTMAX=5
#  mutant  RELEASE_NOFOLLOW      -DTMAX=5
#  mutant  HELD_ERROR            -DRENEWS=0
#
# Usage: cutover.sh [NAME...] (default: every line). Environment: MODEL_DIR
# (work folder), MODEL_MEMLIM (MB, default 2000), CUTOVER_FLAGS (extra spin
# flags for every search, e.g. -DTMAX=6).
set -eu
if ! command -v spin >/dev/null 2>&1; then
	echo "spin is not installed: the cutover model needs it (Debian/Ubuntu: apt-get install -y spin)" >&2
	exit 1
fi
command -v cc >/dev/null 2>&1 || { echo "a C compiler (cc) is needed to build spin's verifier" >&2; exit 1; }
here=$(cd "$(dirname "$0")" && pwd)
dir=${MODEL_DIR:-$(mktemp -d)}
mkdir -p "$dir"
cp "$here/cutover.pml" "$dir/"
cd "$dir"
list=$(sed -n 's/^#  \(pass\|finding\|goal\|mutant\)  *\([A-Za-z0-9_]*\)  *\(.*\)$/\1 \2 \3/p' "$here/cutover.sh")
names=${*:-$(printf '%s\n' "$list" | cut -d' ' -f2)}
fail=0
printf '%-8s %-18s %-8s %-6s %-11s %-7s %-6s %s\n' kind name result depth states seconds MB flags
for n in $names; do
	line=$(printf '%s\n' "$list" | awk -v n="$n" '$2 == n')
	[ -n "$line" ] || { echo "cutover.sh: $n is not in the list" >&2; exit 2; }
	kind=${line%% *}
	flags=$(printf '%s\n' "$line" | cut -d' ' -f3-)
	case $kind in
	goal)
		id=$(sed -n "s/^#define G_$n  *\([0-9]*\).*/\1/p" cutover.pml)
		[ -n "$id" ] || { echo "cutover.sh: G_$n is not defined in cutover.pml" >&2; exit 2; }
		flags="$flags -DGOAL=$id" ;;
	mutant) flags="$flags -DMUT_$n" ;;
	esac
	start=$(date +%s)
	# shellcheck disable=SC2086
	spin -a $flags ${CUTOVER_FLAGS:-} cutover.pml >/dev/null
	cc -O0 -DSAFETY -DHC4 -DMEMLIM="${MODEL_MEMLIM:-2000}" -o pan pan.c
	# -E: every process may stop anywhere (a crash)
	./pan -m100000 -w24 -E >pan.out 2>&1 || true
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
		[ "$result" = none ] || [ "$result" = CUT ] || echo "trail: cd $dir && spin -t -p -g $flags cutover.pml" >&2
	fi
done
exit $fail
