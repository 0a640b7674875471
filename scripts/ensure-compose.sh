#!/usr/bin/env bash
# Makes sure a `docker-compose` is installed, so test/replicas/compose.test.ts can run
# `docker-compose config` on every compose file (no Docker engine is needed for `config`).
# Debian 12's docker-compose package (1.29, the Python one) is the compose that Debian ships; a
# Docker with its compose plugin (`docker compose`) is used instead when present (the test looks).
# Idempotent: does nothing when docker-compose is already there. Needs root (or sudo) to install.
set -euo pipefail
. "$(dirname "$0")/lib/ensure-debian-package.sh"

if docker compose version >/dev/null 2>&1; then
  echo "compose: found the docker compose plugin"
  exit 0
fi
COMPOSE=${LECTERN_COMPOSE:-/usr/bin/docker-compose}
ensure_debian_package compose "$COMPOSE" docker-compose LECTERN_COMPOSE
"$COMPOSE" version --short 2>/dev/null || true
