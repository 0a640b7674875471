#!/usr/bin/env bash
# Makes sure Debian's nginx is installed for the replicas' end-to-end test (test/replicas/nginx.test.ts
# starts its own nginx on a free port with a generated config; the system's nginx service is not used,
# and apt's start of it is harmless: the test never talks to it).
# Idempotent: does nothing when nginx is already there. Needs root (or sudo) to install.
set -euo pipefail
. "$(dirname "$0")/lib/ensure-debian-package.sh"

NGINX=${LECTERN_NGINX:-/usr/sbin/nginx}
ensure_debian_package nginx "$NGINX" nginx LECTERN_NGINX
"$NGINX" -v 2>&1 || true
