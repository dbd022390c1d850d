#!/bin/sh
# check.sh BOUND [-DFLAG...]: compile model/record.pml with spin at a bound and
# search it; fails on any counterexample (and prints its trail's events).
#
#   small  exhaustive (-DCOLLAPSE, lossless), the bound make test runs (1
#          attempt + the operator + the final retry, every fault kind once),
#          7.1 M states
#   full   2 concurrent attempts (either mode, two intents), the operator, the
#          final retry, clock to 5 ticks: too large to store (the bitstate
#          search of it took 70 min for hash factor 3.4), so a swarm: MODEL_RUNS
#          (default 4) bitstate runs, each in its own search order (pan -RS<run>
#          with randomized transitions and processes, hash seed -h<run>, every
#          second run in reverse) for MODEL_MINUTES (default 2), MODEL_JOBS at
#          a time (default: the cores); each run must keep hash factor 16
#   renewals  1 attempt as small, the clock to 9 ticks: room for two renewals
#          (a late one applied after a later one, findings F4, also when both
#          are capped at MaxRunTime); exhaustive (-DCOLLAPSE), 46.6 M states
#   two    2 concurrent attempts (either mode, two intents: key reuse), the
#          final retry, 1 fault, late writes, clock to 3 ticks, 1
#          round/resend/renewal, no operator; exhaustive (-DCOLLAPSE,
#          lossless), 24.8 M states
#   managed  2 renewing or standard attempts, MaxRunTime 6 (two leases), a
#          retry horizon of 4 (shorter than MaxRunTime), clock to 5 ticks,
#          1 fault (a late write among them), 1 round/resend/renewal, no
#          operator; exhaustive (-DCOLLAPSE), 121.3 M states, 5.9 GB
#
# A bound may name overrides after commas: small,NATT=2,OPERATOR=0 is the
# small search (exhaustive, -DCOLLAPSE) with those model bounds (record.pml's
# #ifndef parameters); full,TMAX=4 the bitstate search at a smaller clock;
# a NAME alone defines it (small,LEAK_AFTER_RENEWAL: a variant of the model);
# w=N sets the hash table (or bit array) to 2^N. model/mutate.sh gives each
# guard its own bound this way.
#
# Extra -D flags go to spin (model/mutate.sh passes -DMUT_<GUARD>).
# Environment: MODEL_DIR (work folder, default a temporary one; run N of a
# swarm searches in its run<N> folder), PAN_FLAGS,
# MODEL_CFLAGS (the C compiler's optimisation: -O0 compiles in seconds and
# suits short searches; the full bound uses -O2), MODEL_MEMLIM (MB the search
# may use: 3000, 8000 for renewals). A search cut short by memory or depth
# fails (exit 3): it proves nothing.
set -eu
if ! command -v spin >/dev/null 2>&1; then
	echo "spin is not installed: the record protocol model needs it (Debian/Ubuntu: apt-get install -y spin)" >&2
	exit 1
fi
command -v cc >/dev/null 2>&1 || { echo "a C compiler (cc) is needed to build spin's verifier" >&2; exit 1; }
bound=${1:?usage: check.sh small|full|renewals|two|managed[,NAME=VALUE...] [-DFLAG...]}
shift
here=$(cd "$(dirname "$0")" && pwd)
base=${bound%%,*}
runs=1 minutes=
case $base in
small) vars="NATT=1 TMAX=6 FAULTS=1"; cflags="-DCOLLAPSE"; w=26; opt=-O0; mem=3000 ;;
full)  vars="NATT=2 TMAX=5 FAULTS=1"; cflags="-DBITSTATE -DT_RAND -DP_RAND"; w=32; opt=-O2; mem=3000
	runs=${MODEL_RUNS:-4}; minutes=${MODEL_MINUTES:-2} ;;
renewals) vars="NATT=1 TMAX=9 FAULTS=1"; cflags="-DCOLLAPSE"; w=27; opt=-O2; mem=8000 ;;
two)   vars="NATT=2 TMAX=3 FAULTS=1 ROUNDS=1 RESENDS=1 RENEWALS=1 OPERATOR=0 REUSE=1"; cflags="-DCOLLAPSE"; w=27; opt=-O2; mem=10000 ;;
managed) vars="NATT=2 TMAX=5 FAULTS=1 MAXRUN=6 RH=4 OPERATOR=0 REUSE=0 OPTIMISTIC=0 ROUNDS=1 RESENDS=1 RENEWALS=1 LATE=1"; cflags="-DCOLLAPSE"; w=27; opt=-O2; mem=10000 ;;
*) echo "check.sh: unknown bound $base (small, full, renewals, two or managed)" >&2; exit 2 ;;
esac
if [ "$bound" != "$base" ]; then
	for o in $(printf '%s\n' "${bound#*,}" | tr ',' ' '); do
		case $o in
		w=[0-9]*) w=${o#w=} ;;
		[A-Z]*=[0-9]*)
			vars=$(printf '%s\n' $vars | grep -v "^${o%%=*}=" | tr '\n' ' ')
			vars="$vars $o" ;;
		[A-Z]*) vars="$vars $o" ;;
		*) echo "check.sh: bad override $o in $bound (NAME=NUMBER, NAME or w=N)" >&2; exit 2 ;;
		esac
	done
fi
bflags=$(printf -- '-D%s ' $vars)
dir=${MODEL_DIR:-$(mktemp -d)}
mkdir -p "$dir"
cp "$here/record.pml" "$dir/"
cd "$dir"
echo "bound $bound: $bflags$*"
spin -a $bflags "$@" record.pml >/dev/null
cc ${MODEL_CFLAGS:-$opt} -DSAFETY $cflags -DMEMLIM=${MODEL_MEMLIM:-$mem} -o pan pan.c
# Every stored search keeps whole states (-DCOLLAPSE: compressed, lossless):
# hash compaction (-DHC4) keeps a 32-bit hash per state, and a collision
# drops a state with all it alone leads to (at renewals it lost 28 %:
# 33.6 M states instead of 46.6 M), so it is not exhaustive.
#
# search N: run N of the search, in its own folder (its trail and pan.out);
# a swarm's run N searches in its own order and stops after MODEL_MINUTES
search() {
	mkdir -p "run$1"
	cp record.pml "run$1/"
	ln -f pan "run$1/pan"
	order=
	if [ -n "$minutes" ]; then
		order="-RS$1 -h$(($1 % 500)) -Q$minutes"
		[ $(($1 % 2)) -eq 0 ] && order="$order -t_reverse"
	fi
	# -E: every process may end anywhere (the final retry's end is asserted instead)
	(cd "run$1" && exec ./pan -m400000 -w"$w" -E $order ${PAN_FLAGS:-} >pan.out 2>&1) &
	echo $! >"run$1/pid"
}
# failed: the first run that stopped at an error (then the swarm's other
# runs are stopped); running: a run is still searching
failed() {
	grep -lE "errors: [1-9]" run*/pan.out 2>/dev/null | head -1 | sed 's,/pan.out$,,'
}
running() {
	for p in $(cat run*/pid); do
		kill -0 "$p" 2>/dev/null && return 0
	done
	return 1
}
rm -rf run*
jobs=${MODEL_JOBS:-$(nproc 2>/dev/null || echo 1)}
i=1
while [ "$i" -le "$runs" ]; do
	j=0
	while [ "$j" -lt "$jobs" ] && [ "$i" -le "$runs" ]; do
		search "$i"
		i=$((i + 1)) j=$((j + 1))
	done
	while running && [ -z "$(failed)" ]; do
		sleep 1
	done
	if [ -n "$(failed)" ]; then
		for p in $(cat run*/pid); do
			kill -0 "$p" 2>/dev/null && kill "$p" 2>/dev/null || true
		done
		wait
		break
	fi
	wait
done
summary="^(State-vector|pan:|.*states, stored|.*transitions|.*hash factor|.*elapsed|.*total actual memory)"
run=$(failed)
if [ -n "$run" ] || ! grep -q "errors: 0" run1/pan.out; then
	run=${run:-run1}
	grep -E "$summary" "$run/pan.out" || true
	echo "counterexample (spin -t $bflags$* record.pml in $dir/$run):" >&2
	(cd "$run" && spin -t $bflags "$@" record.pml 2>&1) | grep -E "EV |assertion violated|text of failed" >&2 || true
	exit 1
fi
status=0
i=1
while [ "$i" -le "$runs" ]; do
	out=run$i/pan.out
	[ "$runs" -eq 1 ] || echo "run $i of $runs:"
	grep -E "$summary" "$out" || true
	if ! grep -q "errors: 0" "$out"; then
		echo "check.sh: run $i did not end (see $dir/$out)" >&2
		exit 3
	fi
	# a search cut short (memory or depth) proves nothing
	if grep -qE "reached -DMEMLIM bound|max search depth too small|out of memory" "$out"; then
		echo "check.sh: the search did not finish (see above): raise MODEL_MEMLIM (MB) or lower the bound" >&2
		status=3
	fi
	# a bitstate search with a low hash factor (bits per state) misses a share
	# of the states: below MODEL_MIN_HF (default 16) it fails (raise w=N)
	hf=$(sed -n 's/.*hash factor: *\([0-9]*\).*/\1/p' "$out" | head -1)
	if [ -n "$hf" ] && [ "$hf" -lt "${MODEL_MIN_HF:-16}" ]; then
		echo "check.sh: hash factor $hf is below ${MODEL_MIN_HF:-16}: the bitstate search missed too many states (raise w=N)" >&2
		status=3
	fi
	i=$((i + 1))
done
if [ "$runs" -gt 1 ]; then
	stored=$(sed -n 's/^ *\([0-9.e+]*\) states, stored.*/\1/p' run*/pan.out | awk '{ s += $1 } END { printf "%.0f", s }')
	echo "swarm: $runs runs of $minutes min, $stored states stored in all (runs overlap)"
fi
exit $status
