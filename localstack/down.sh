#!/usr/bin/env bash
# make localstack-down: stop LocalStack and forget everything it held.
set -euo pipefail
cd "$(dirname "$0")"
docker compose down --volumes --remove-orphans
rm -f outputs.json
