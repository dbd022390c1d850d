#!/usr/bin/env bash
# make localstack-up: start LocalStack (pinned, no auth token) and wait until
# DynamoDB, SQS, Lambda and CloudFormation answer.
set -euo pipefail
cd "$(dirname "$0")"
command -v docker >/dev/null || { echo "localstack-up: Docker is required" >&2; exit 1; }
docker compose up -d
endpoint="${LOCALSTACK_ENDPOINT:-http://localhost.localstack.cloud:4566}"
for i in $(seq 1 90); do
  if health=$(curl -fsS "$endpoint/_localstack/health" 2>/dev/null) &&
     echo "$health" | grep -Eq '"dynamodb": *"(available|running)"' &&
     echo "$health" | grep -Eq '"sqs": *"(available|running)"' &&
     echo "$health" | grep -Eq '"lambda": *"(available|running)"' &&
     echo "$health" | grep -Eq '"cloudformation": *"(available|running)"'; then
    echo "LocalStack is up at $endpoint"
    exit 0
  fi
  sleep 2
done
echo "localstack-up: LocalStack did not become healthy in 3 minutes; see: docker compose -f localstack/docker-compose.yml logs" >&2
exit 1
