#!/usr/bin/env bash
# Makes sure Debian's Chromium is installed for the admin UI's end-to-end tests
# (test/e2e/admin.test.ts drives /usr/bin/chromium through playwright-core; no browser download).
# Idempotent: does nothing when the browser is already there. Needs root (or sudo) to install.
set -euo pipefail
. "$(dirname "$0")/lib/ensure-debian-package.sh"

CHROMIUM=${LECTERN_CHROMIUM:-/usr/bin/chromium}
ensure_debian_package chromium "$CHROMIUM" chromium LECTERN_CHROMIUM
"$CHROMIUM" --version 2>/dev/null || true
