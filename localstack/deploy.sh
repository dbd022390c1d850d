#!/usr/bin/env bash
# make localstack-deploy: build the examples for this machine's architecture
# and deploy the CDK app (cdk/) to LocalStack with the pinned cdklocal,
# writing the stack outputs to localstack/outputs.json.
#
# The functions are declared with this machine's architecture (-c arch), and
# the payments stack is deployed without its HTTP API (-c httpApi=false):
# LocalStack's community image has no API Gateway v2, so the suite plays the
# HTTP API itself and invokes the function (output PaymentsFunctionName)
# through LocalStack's Lambda API.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/.." && pwd)"
command -v node >/dev/null || { echo "localstack-deploy: Node.js is required (the CDK CLI and the CDK's Go bindings)" >&2; exit 1; }

export AWS_ENDPOINT_URL="${LOCALSTACK_ENDPOINT:-http://localhost.localstack.cloud:4566}"
export AWS_ACCESS_KEY_ID=test AWS_SECRET_ACCESS_KEY=test
export AWS_REGION=us-east-1 AWS_DEFAULT_REGION=us-east-1
export CDK_DEFAULT_ACCOUNT=000000000000 CDK_DEFAULT_REGION=us-east-1

arch="$(go env GOARCH)"
case "$arch" in
  arm64|amd64) ;;
  *) echo "localstack-deploy: GOARCH $arch: Lambda runs arm64 or amd64 (x86_64) only" >&2; exit 1 ;;
esac
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
