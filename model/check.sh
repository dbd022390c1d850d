#!/bin/sh
# check.sh BOUND [-DFLAG...]: compile model/record.pml with spin at a bound and
# search it; fails on any counterexample (and prints its trail's events).
#
#   small  exhaustive, the bound make test runs (1 attempt + the operator + the
#          final retry, every fault kind once)
#   full   2 concurrent attempts (either mode, two intents), the operator, the
#          final retry; bitstate search (see model/README.md)
#
# Extra -D flags go to spin (model/mutate.sh passes -DMUT_<GUARD>).
# Environment: MODEL_DIR (work folder, default a temporary one), PAN_FLAGS.
set -eu
if ! command -v spin >/dev/null 2>&1; then
	echo "spin is not installed: the record protocol model needs it (Debian/Ubuntu: apt-get install -y spin)" >&2
	exit 1
fi
command -v cc >/dev/null 2>&1 || { echo "a C compiler (cc) is needed to build spin's verifier" >&2; exit 1; }
bound=${1:?usage: check.sh small|full [-DFLAG...]}
shift
here=$(cd "$(dirname "$0")" && pwd)
case $bound in
small) bflags="-DNATT=1 -DTMAX=5 -DFAULTS=1"; cflags="-DHC4"; run="-m300000 -w26" ;;
full)  bflags="-DNATT=2 -DTMAX=5 -DFAULTS=1"; cflags="-DBITSTATE"; run="-m400000 -w29" ;;
*) echo "check.sh: unknown bound $bound (small or full)" >&2; exit 2 ;;
esac
dir=${MODEL_DIR:-$(mktemp -d)}
mkdir -p "$dir"
cp "$here/record.pml" "$dir/"
cd "$dir"
spin -a $bflags "$@" record.pml >/dev/null
cc -O1 -DSAFETY $cflags -DMEMLIM=3000 -o pan pan.c
# -E: every process may end anywhere (the final retry's end is asserted instead)
./pan $run -E ${PAN_FLAGS:-} >pan.out 2>&1 || true
grep -E "^(State-vector|pan:|.*states, stored|.*transitions|.*hash factor|.*elapsed)" pan.out || true
if grep -q "errors: 0" pan.out; then
	exit 0
fi
echo "counterexample (spin -t -DNATT... record.pml in $dir):" >&2
spin -t $bflags "$@" record.pml 2>&1 | grep -E "EV |assertion violated|text of failed" >&2 || true
exit 1
