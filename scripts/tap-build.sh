#!/usr/bin/env bash
# Builds tap's Test class for the plugins .taprc lists (it drops @tapjs/typescript: tests run through
# test/ts-loader.mjs, see .taprc), when the build in node_modules is for another list, e.g. tap's default one right
# after `npm ci`. tap rebuilds by itself when it finds the list changed, but only for the run after:
# the run that finds it would still load ts-node as well as our loader. Does nothing when the build matches.
set -euo pipefail
cd "$(dirname "$0")/.."

BUILT=node_modules/@tapjs/test/test-built/dist/esm/index.js
want=$(npx --no-install tap plugin list | sort)
have=""
if [ -f "$BUILT" ]; then
  have=$(sed -n '/^export const signature = `/,/`;$/p' "$BUILT" | sed 's/^export const signature = `//; s/`;$//' | sort)
fi
if [ "$want" != "$have" ]; then
  echo "tap: building its Test class for the plugins in .taprc"
  npx --no-install tap build
fi
