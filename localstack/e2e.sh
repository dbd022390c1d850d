#!/usr/bin/env bash
# make localstack-e2e: the end-to-end suite against the stacks
# localstack-deploy deployed (their outputs in localstack/outputs.json).
# The dead-letter scenario waits maxReceiveCount × the queue's visibility
# timeout (5 × 180 s with the CDK app's defaults), hence the long timeout.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
export E2E_TARGET=localstack
export LOCALSTACK_ENDPOINT="${LOCALSTACK_ENDPOINT:-http://localhost.localstack.cloud:4566}"
export E2E_OUTPUTS="${E2E_OUTPUTS:-$root/localstack/outputs.json}"
cd dev # the unpublished module that holds the suite
go test -tags e2e -count=1 -timeout 45m -v ./e2e/...
