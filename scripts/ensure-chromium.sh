#!/usr/bin/env bash
# Makes sure Debian's Chromium is installed for the admin UI's end-to-end tests
# (test/e2e/admin.test.ts drives /usr/bin/chromium through playwright-core; no browser download).
# Idempotent: does nothing when the browser is already there. Needs root (or sudo) to install.
set -euo pipefail

CHROMIUM=${LECTERN_CHROMIUM:-/usr/bin/chromium}

if [ -x "$CHROMIUM" ]; then
  echo "chromium: found at $CHROMIUM"
  exit 0
fi

if ! command -v apt-get >/dev/null 2>&1; then
  echo "chromium: $CHROMIUM is missing and apt-get is not available; install Chromium and set LECTERN_CHROMIUM to its path" >&2
  exit 1
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null 2>&1; then
    SUDO="sudo"
  else
    echo "chromium: installing needs root (or sudo): apt-get install chromium" >&2
    exit 1
  fi
fi

echo "chromium: installing Debian's chromium package"
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq chromium >/dev/null

if [ ! -x "$CHROMIUM" ]; then
  echo "chromium: the package installed but $CHROMIUM is still missing" >&2
  exit 1
fi
"$CHROMIUM" --version 2>/dev/null || true
