#!/usr/bin/env bash
# The JavaScript client's checks, as .ci/run calls them: the types (cairn.js's JSDoc, and code written against
# cairn.d.ts, through Debian's `tsc`), then the tests with Node's own runner against real hubs started by the tests
# (the debug `cairn` of this checkout, built when missing). Needs Node >= 20, Debian's node-ws and node-typescript
# (`bash deploy/install-deps.sh node-ws node-typescript`). Fails when any check or test fails.
set -euo pipefail
cd "$(dirname "$0")/.."
root="$(cd ../.. && pwd)"

node_major="$(node -p 'process.versions.node.split(".")[0]')"
if [ "$node_major" -lt 20 ]; then
  echo "clients/js: Node >= 20 is needed (found $(node --version))" >&2
  exit 1
fi

if [ -z "${CAIRN_BIN:-}" ]; then
  CAIRN_BIN="$(cd "$root" && swift build --show-bin-path)/cairn"
  [ -x "$CAIRN_BIN" ] || (cd "$root" && swift build --product cairn)
  export CAIRN_BIN
fi

tsc --noEmit --strict --allowJs --checkJs --target es2022 --module es2022 --lib es2022,dom cairn.js
tsc --noEmit --strict --target es2022 --module es2022 --moduleResolution node --lib es2022,dom test/types.ts
echo "clients/js: types OK"
# The web app's modules (web/*.js) parse: a syntax error there would show only in a browser. Checked as .mjs copies:
# Node takes a .js file outside a "type": "module" package for a script.
modules="$(mktemp -d)"
for module in ../../web/*.js; do
  cp "$module" "$modules/$(basename "$module" .js).mjs"
  node --check "$modules/$(basename "$module" .js).mjs"
done
rm -rf "$modules"
echo "web: modules parse"

# --experimental-websocket gives Node 20 the global WebSocket one test file uses (Node 22 has it by default); the
# runner passes the flag to each test file's process. Every test has its own timeout; this bounds the whole run.
timeout 600 node --experimental-websocket --test test/*.test.mjs
