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
# (work folder), MODEL_MEMLIM (MB, default 4000), OUTBOX_FLAGS (extra spin
# flags for every search, e.g. -DTMAX=6).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
export MODEL_MEMLIM="${MODEL_MEMLIM:-4000}" MODEL_FLAGS="${OUTBOX_FLAGS:-}" MODEL_TIMEOUT="${OUTBOX_TIMEOUT:-600}"
exec "$here/lists.sh" outbox "$@"
