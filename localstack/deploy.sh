#!/usr/bin/env bash
# make localstack-deploy: build the examples for the Docker daemon's
# architecture and deploy the CDK app (cdk/) to LocalStack with the pinned
# cdklocal, writing the stack outputs to localstack/outputs.json.
#
# The functions are built and declared (-c arch) for the architecture of the
# Docker daemon, which runs LocalStack's function containers (it may differ
# from this machine's: a remote daemon, a VM); LOCALSTACK_ARCH overrides it.
# The payments stack is deployed without its HTTP API (-c httpApi=false):
# LocalStack's community image has no API Gateway v2, so the suite plays the
# HTTP API itself and invokes the function (output PaymentsFunctionName)
# through LocalStack's Lambda API.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/.." && pwd)"
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$here/lib.sh"
command -v docker >/dev/null || { echo "localstack-deploy: Docker is required" >&2; exit 1; }
command -v node >/dev/null || { echo "localstack-deploy: Node.js is required (the CDK CLI and the CDK's Go bindings)" >&2; exit 1; }

export AWS_ENDPOINT_URL="${LOCALSTACK_ENDPOINT:-http://localhost.localstack.cloud:4566}"
export AWS_ACCESS_KEY_ID=test AWS_SECRET_ACCESS_KEY=test
export AWS_REGION=us-east-1 AWS_DEFAULT_REGION=us-east-1
export CDK_DEFAULT_ACCOUNT=000000000000 CDK_DEFAULT_REGION=us-east-1

if [ -n "${LOCALSTACK_ARCH:-}" ]; then
  arch="$(goarch "$LOCALSTACK_ARCH")" || { echo "localstack-deploy: LOCALSTACK_ARCH=$LOCALSTACK_ARCH: want arm64 or amd64" >&2; exit 1; }
else
  arch="$(docker_arch)" || exit 1
fi
(cd "$root" && make build ARCHES="$arch")
(cd "$here" && npm ci --no-audit --no-fund)
cdklocal="$here/node_modules/.bin/cdklocal"

cd "$root/cdk"
"$cdklocal" bootstrap "aws://000000000000/us-east-1"
"$cdklocal" deploy --all --require-approval never \
  -c arch="$arch" \
  -c httpApi=false \
  -c paymentsZip="../build/api-gateway-$arch.zip" \
  -c ordersZip="../build/sqs-$arch.zip" \
  -c destroyTables=true \
  --outputs-file "$here/outputs.json"
echo "Stack outputs: $here/outputs.json"
cat "$here/outputs.json"
