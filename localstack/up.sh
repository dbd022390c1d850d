#!/usr/bin/env bash
# make localstack-up: start LocalStack (pinned; an auth token is passed
# through if set) and wait until DynamoDB, SQS, Lambda and CloudFormation
# answer on 127.0.0.1:4566, failing at once if the container stops.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$here/lib.sh"
command -v docker >/dev/null || { echo "localstack-up: Docker is required" >&2; exit 1; }
command -v curl >/dev/null || { echo "localstack-up: curl is required" >&2; exit 1; }
cd "$here"
docker compose up -d
if ! wait_healthy "${LOCALSTACK_WAIT_TRIES:-90}" "${LOCALSTACK_WAIT_INTERVAL:-2}"; then
  echo "localstack-up: see docker compose -f localstack/docker-compose.yml logs" >&2
  exit 1
fi
echo "LocalStack is up at http://127.0.0.1:4566"
