#!/usr/bin/env bash
# Runs every DynamoDB-touching test suite in one DynamoDB world (make test-dynoxide, make test-embedded):
# the tests of every package whose test binary links ddbtest (the kit's users, storetest over DynamoDB,
# dev/integrationtest, the relay tests, the bounded chaos run with its linearizability check, the model's
# replay, aws-verify's own tests), then aws-verify's LOCAL mode. The benchmarks' tests (dev/bench) are left out:
# they measure the embedded endpoint they start themselves. ddbtest.Start, NewKit, OpenKit and Open
# read LAMBDAIDEM_WORLD (docs/testing.md, "Two worlds").
#
#   dev/worlds/test.sh dynoxide [module...]   default modules: every one but the library's (which cannot
#                                             import ddbtest)
#
# The Dynoxide binary: $DYNOXIDE, else dev/worlds/node_modules (npm ci there), else dynoxide on PATH.
# Without one the second world is skipped in one line, except in CI (CI=true), which requires it.
# WORLD_RACE=-race runs the tests under the race detector (make test's unit run already does, in the
# embedded world). WORLD_SKIP_VERIFY=1 leaves out aws-verify's LOCAL mode, WORLD_SKIP_E2E=1 the end-to-end suite.
set -euo pipefail
cd "$(dirname "$0")/../.."
GO=${GO:-go}
world=${1:?usage: dev/worlds/test.sh embedded|dynoxide [module...]}
shift
modules=("$@")
[ ${#modules[@]} -gt 0 ] || modules=(ddbtest kmsseal cmd/lambdaidem outboxaws examples dev)

case $world in
embedded) ;;
dynoxide)
  if [ -z "${DYNOXIDE:-}" ]; then
    if [ -x dev/worlds/node_modules/@dynoxide/linux-x64/dynoxide ]; then
      DYNOXIDE=$PWD/dev/worlds/node_modules/@dynoxide/linux-x64/dynoxide
    else
      DYNOXIDE=$(command -v dynoxide || true)
    fi
  fi
  if [ -z "$DYNOXIDE" ] || [ ! -x "$DYNOXIDE" ]; then
    if [ "${CI:-}" = true ]; then
      echo "test-dynoxide: CI requires the second world: no Dynoxide binary (DYNOXIDE='${DYNOXIDE:-}'; cd dev/worlds && npm ci)" >&2
      exit 1
    fi
    echo "test-dynoxide: the second world (Dynoxide) is skipped: no binary (cd dev/worlds && npm ci on linux-x64, or set DYNOXIDE)"
    exit 0
  fi
  export DYNOXIDE
  echo "test-dynoxide: $("$DYNOXIDE" --version) ($DYNOXIDE)"
  ;;
*) echo "dev/worlds/test.sh: unknown world '$world' (embedded or dynoxide)" >&2; exit 2 ;;
esac
export LAMBDAIDEM_WORLD=$world
# An endpoint in the environment would replace the world (ddbtest.Start honours it first).
unset AWS_ENDPOINT_URL_DYNAMODB

start=$(date +%s)
for m in "${modules[@]}"; do
  # shellcheck disable=SC2016 # a Go template, not a shell expression
  pkgs=$(cd "$m" && $GO list -test -f '{{$ddb := "github.com/lambdaidem/lambdaidem/ddbtest"}}{{if .ForTest}}{{.ForTest}}{{if eq .ForTest $ddb}} ddbtest{{end}}{{range .Deps}}{{if eq . $ddb}} ddbtest{{end}}{{end}}{{end}}' ./... |
    awk '$2 == "ddbtest" && $1 !~ /\/dev\/bench\// {print $1}' | sort -u)
  [ -n "$pkgs" ] || continue
  echo "go test ${WORLD_RACE:-} ($m, world $world)"
  # shellcheck disable=SC2086 # the package list and the flag split on purpose
  (cd "$m" && $GO test ${WORLD_RACE:-} -count=1 $pkgs)
done
# The end-to-end suite (build tag e2e: not in the package lists above): the examples under the Runtime
# Interface Emulator against this world (e2estack opens its endpoint with ddbtest.Open).
# WORLD_SKIP_E2E=1 leaves it out.
if [ -z "${WORLD_SKIP_E2E:-}" ]; then
  echo "go test -tags e2e ${WORLD_RACE:-} (dev/e2e, world $world)"
  # shellcheck disable=SC2086 # the flag splits on purpose
  (cd dev && $GO test -tags e2e ${WORLD_RACE:-} -count=1 -timeout 10m ./e2e/...)
fi
if [ -z "${WORLD_SKIP_VERIFY:-}" ]; then
  echo "aws-verify -local (world $world)"
  (cd dev && $GO run ./awsverify -local -out "../build/aws-verify-local-$world")
fi
echo "world $world: $(($(date +%s) - start)) s"
