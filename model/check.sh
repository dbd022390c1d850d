#!/bin/sh
# check.sh BOUND [-DFLAG...]: compile model/record.pml with spin at a bound and
# search it; fails on any counterexample (and prints its trail's events).
#
#   small  exhaustive, the bound make test runs (1 attempt + the operator + the
#          final retry, every fault kind once)
#   full   2 concurrent attempts (either mode, two intents), the operator, the
#          final retry; bitstate search (see model/README.md)
#   renewals  1 attempt as small, the clock to 9 ticks: room for two renewals
#          (a late one applied after a later one, findings F4, also when both
#          are capped at MaxRunTime); exhaustive
#   two    2 concurrent attempts (either mode, two intents), the final retry,
#          1 fault, late writes, clock to 3 ticks, 1 round/resend/renewal, no
#          operator; exhaustive (-DCOLLAPSE, lossless), 12.7 M states
#   managed  2 renewing or standard attempts, MaxRunTime 6 (two leases), a
#          retry horizon of 4 (shorter than MaxRunTime), clock to 5 ticks,
#          1 fault, 1 round/resend/renewal, no late writes, no operator;
#          exhaustive (-DCOLLAPSE), 96.1 M states, 4.8 GB
#
# A bound may name overrides after commas: small,NATT=2,OPERATOR=0 is the
# small search (hash compaction) with those model bounds (record.pml's
# #ifndef parameters); full,TMAX=4 the bitstate search at a smaller clock;
# a NAME alone defines it (small,LEAK_AFTER_RENEWAL: a variant of the model);
# w=N sets the hash table (or bit array) to 2^N. model/mutate.sh gives each
# guard its own bound this way.
#
# Extra -D flags go to spin (model/mutate.sh passes -DMUT_<GUARD>).
# Environment: MODEL_DIR (work folder, default a temporary one), PAN_FLAGS,
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
case $base in
small) vars="NATT=1 TMAX=6 FAULTS=1"; cflags="-DHC4"; w=26; opt=-O0; mem=3000 ;;
full)  vars="NATT=2 TMAX=5 FAULTS=1"; cflags="-DBITSTATE"; w=33; opt=-O2; mem=3000 ;;
renewals) vars="NATT=1 TMAX=9 FAULTS=1"; cflags="-DHC4"; w=28; opt=-O2; mem=8000 ;;
two)   vars="NATT=2 TMAX=3 FAULTS=1 ROUNDS=1 RESENDS=1 RENEWALS=1 OPERATOR=0 REUSE=0"; cflags="-DCOLLAPSE"; w=27; opt=-O2; mem=10000 ;;
managed) vars="NATT=2 TMAX=5 FAULTS=1 MAXRUN=6 RH=4 OPERATOR=0 REUSE=0 OPTIMISTIC=0 ROUNDS=1 RESENDS=1 RENEWALS=1 LATE=0"; cflags="-DCOLLAPSE"; w=27; opt=-O2; mem=10000 ;;
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
# -E: every process may end anywhere (the final retry's end is asserted instead)
./pan -m400000 -w"$w" -E ${PAN_FLAGS:-} >pan.out 2>&1 || true
grep -E "^(State-vector|pan:|.*states, stored|.*transitions|.*hash factor|.*elapsed|.*total actual memory)" pan.out || true
if grep -q "errors: 0" pan.out; then
	# a search cut short (memory or depth) proves nothing
	if grep -qE "reached -DMEMLIM bound|max search depth too small|out of memory" pan.out; then
		echo "check.sh: the search did not finish (see above): raise MODEL_MEMLIM (MB) or lower the bound" >&2
		exit 3
	fi
	# a bitstate search with a low hash factor (bits per state) misses a share
	# of the states: below MODEL_MIN_HF (default 16) it fails (raise w=N)
	hf=$(sed -n 's/.*hash factor: *\([0-9]*\).*/\1/p' pan.out | head -1)
	if [ -n "$hf" ] && [ "$hf" -lt "${MODEL_MIN_HF:-16}" ]; then
		echo "check.sh: hash factor $hf is below ${MODEL_MIN_HF:-16}: the bitstate search missed too many states (raise w=N)" >&2
		exit 3
	fi
	exit 0
fi
echo "counterexample (spin -t $bflags$* record.pml in $dir):" >&2
spin -t $bflags "$@" record.pml 2>&1 | grep -E "EV |assertion violated|text of failed" >&2 || true
exit 1
