#!/usr/bin/env bash
# Functions shared by up.sh and deploy.sh (and exercised by scripts_test.go
# with a stubbed docker and curl). Sourcing this file runs nothing.

# The compose file's container name and LocalStack's health endpoint, on the
# loopback address the compose file binds (no DNS lookup).
LOCALSTACK_CONTAINER="${LOCALSTACK_CONTAINER:-lambdaidem-localstack}"
LOCALSTACK_HEALTH_URL="${LOCALSTACK_HEALTH_URL:-http://127.0.0.1:4566/_localstack/health}"

# goarch NAME prints the Go/Lambda architecture (arm64 or amd64) of a Docker
# architecture name (docker version's Server.Arch is a GOARCH; docker info's
# Architecture is a kernel name such as x86_64 or aarch64); it fails for any
# other name.
goarch() {
  case "$1" in
    amd64 | x86_64) echo amd64 ;;
    arm64 | aarch64) echo arm64 ;;
    *) return 1 ;;
  esac
}

# docker_arch prints the Docker daemon's architecture as arm64 or amd64: the
# architecture LocalStack runs the functions' containers with, which may
# differ from this machine's (a remote daemon, a VM).
docker_arch() {
  local arch
  arch="$(docker version --format '{{.Server.Arch}}' 2>/dev/null || true)"
  if [ -z "$arch" ]; then
    arch="$(docker info --format '{{.Architecture}}' 2>/dev/null || true)"
  fi
  if ! goarch "$arch"; then
    echo "the Docker daemon's architecture '${arch:-unknown}' is neither arm64 nor amd64 (x86_64), the two Lambda runs; set LOCALSTACK_ARCH to override" >&2
    return 1
  fi
}

# services_ready HEALTH succeeds when the health document HEALTH shows
# DynamoDB, SQS, Lambda and CloudFormation available or running.
services_ready() {
  local service
  for service in dynamodb sqs lambda cloudformation; do
    grep -Eq "\"$service\": *\"(available|running)\"" <<<"$1" || return 1
  done
}

# container_state prints the container's status and exit code
# ("running 0", "exited 55"), or "missing".
container_state() {
  docker inspect --format '{{.State.Status}} {{.State.ExitCode}}' "$LOCALSTACK_CONTAINER" 2>/dev/null || echo missing
}

# wait_healthy TRIES INTERVAL polls the health endpoint up to TRIES times,
# INTERVAL seconds apart, until the services answer. It checks the
# container first on every try and fails at once, with the container's last
# log lines, if the container is missing or has stopped: polling a container
# that exited only wastes the time out.
wait_healthy() {
  local tries="$1" interval="$2" i state health
  for ((i = 1; i <= tries; i++)); do
    state="$(container_state)"
    case "$state" in
      running* | created* | restarting*) ;;
      missing)
        echo "localstack: container $LOCALSTACK_CONTAINER does not exist (did docker compose up fail?)" >&2
        return 1
        ;;
      *)
        echo "localstack: container $LOCALSTACK_CONTAINER is ${state%% *} (exit code ${state##* })" >&2
        if [ "${state##* }" = 55 ]; then
          echo "  exit code 55: this image needs an auth token; set LOCALSTACK_AUTH_TOKEN, or use the pinned community image" >&2
        fi
        docker logs --tail 20 "$LOCALSTACK_CONTAINER" >&2 || true
        return 1
        ;;
    esac
    if health="$(curl -fsS --max-time 2 "$LOCALSTACK_HEALTH_URL" 2>/dev/null)" && services_ready "$health"; then
      return 0
    fi
    sleep "$interval"
  done
  echo "localstack: $LOCALSTACK_HEALTH_URL did not show DynamoDB, SQS, Lambda and CloudFormation ready after $tries tries" >&2
  return 1
}
