#!/usr/bin/env bash
# One command from a fresh clone to a running hub: installs missing system packages, builds a release binary and
# runs `cairn serve` with its defaults (127.0.0.1:7681, SQLite in ./data). Extra arguments go to `cairn serve`,
# e.g. `deploy/run.sh --host 0.0.0.0 --port 8080`, and prints where the binary is (.build/release/cairn;
# deploy/install.sh installs it as a service instead).
set -euo pipefail
cd "$(dirname "$0")/.."
bash deploy/install-deps.sh
swift build -c release --product cairn
# .build/release is SwiftPM's link to the platform's release directory: the path the README gives.
bin="$PWD/.build/release"
# The other commands (`cairn user`, `cairn backup`, ...) are this binary; say where it is.
echo "deploy/run.sh: the cairn binary is $bin/cairn (export PATH=\"$bin:\$PATH\" to call it as cairn)" >&2
exec "$bin/cairn" serve "$@"
