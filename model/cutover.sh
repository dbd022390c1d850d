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
here=$(cd "$(dirname "$0")" && pwd)
export MODEL_MEMLIM="${MODEL_MEMLIM:-2000}" MODEL_FLAGS="${CUTOVER_FLAGS:-}"
exec "$here/lists.sh" cutover "$@"
