#!/bin/sh
# lists.sh NAME [LINE...]: checks the self-contained model model/NAME.pml
# with spin against the list of searches in model/NAME.sh (its "#  kind
# name flags" comment lines; see cutover.sh for the kinds): each search must
# give the answer its kind asks for. NAME.sh calls it. Environment:
# MODEL_DIR (work folder), MODEL_MEMLIM (MB), MODEL_FLAGS (extra spin flags
# for every search), MODEL_TIMEOUT (seconds per search, default 600).
name=${1:?usage: lists.sh NAME [LINE...]}
shift
set -eu
if ! command -v spin >/dev/null 2>&1; then
	echo "spin is not installed: the $name model needs it (Debian/Ubuntu: apt-get install -y spin)" >&2
	exit 1
fi
command -v cc >/dev/null 2>&1 || { echo "a C compiler (cc) is needed to build spin's verifier" >&2; exit 1; }
here=$(cd "$(dirname "$0")" && pwd)
dir=${MODEL_DIR:-$(mktemp -d)}
mkdir -p "$dir"
cp "$here/$name.pml" "$dir/"
cd "$dir"
list=$(sed -n 's/^#  \(pass\|finding\|goal\|mutant\)  *\([A-Za-z0-9_]*\)  *\(.*\)$/\1 \2 \3/p' "$here/$name.sh")
names=${*:-$(printf '%s\n' "$list" | cut -d' ' -f2)}
fail=0
printf '%-8s %-18s %-8s %-6s %-11s %-7s %-6s %s\n' kind name result depth states seconds MB flags
for n in $names; do
	line=$(printf '%s\n' "$list" | awk -v n="$n" '$2 == n')
	[ -n "$line" ] || { echo "$name.sh: $n is not in the list" >&2; exit 2; }
	kind=${line%% *}
	flags=$(printf '%s\n' "$line" | cut -d' ' -f3-)
	case $kind in
	goal)
		id=$(sed -n "s/^#define G_$n  *\([0-9]*\).*/\1/p" "$name.pml")
		[ -n "$id" ] || { echo "$name.sh: G_$n is not defined in $name.pml" >&2; exit 2; }
		flags="$flags -DGOAL=$id" ;;
	mutant) flags="$flags -DMUT_$n" ;;
	esac
	start=$(date +%s)
	# shellcheck disable=SC2086
	spin -a $flags ${MODEL_FLAGS:-} "$name.pml" >/dev/null
	cc -O2 -DSAFETY -DCOLLAPSE -DMEMLIM="${MODEL_MEMLIM:-4000}" -o pan pan.c
	# exhaustive: whole states, compressed (-DCOLLAPSE), not hash compaction
	# (which drops a state on a collision); -E: every process may stop
	# anywhere (a crash)
	timeout "${MODEL_TIMEOUT:-600}" nice -n 10 ./pan -m100000 -w24 -E >pan.out 2>&1 || true
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
		[ "$result" = none ] || [ "$result" = CUT ] || echo "trail: cd $dir && spin -t -p -g $flags $name.pml" >&2
	fi
done
exit $fail
