#!/usr/bin/env bash
# Builds one ingest parser's fuzz target with libFuzzer and AddressSanitizer, straight from the sources (swiftc, no
# SwiftPM): CairnWire plus the pure parsers of Sources/CairnProtocol/Ingest/ (which import only CairnWire), and runs
# it for the given number of seconds (default 300).
#   fuzz/run-ingest.sh osmand|owntracks|overland [seconds] [extra libFuzzer flags...]
# Seeds come from fuzz/seeds-ingest/TARGET/ (committed: the apps' documented examples); the evolving corpus lives in
# fuzz/corpus-ingest/TARGET/ and the binary and any crash-*/leak-*/timeout-* artifacts in fuzz/bin/ (all
# gitignored). Reproduce a crash with
#   fuzz/bin/ingest-TARGET-fuzz fuzz/bin/ingest-TARGET-crash-<hash>
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
target="${1:?usage: run-ingest.sh osmand|owntracks|overland [seconds] [libFuzzer flags...]}"
shift
case "$target" in
  osmand) flag=OSMAND ;;
  owntracks) flag=OWNTRACKS ;;
  overland) flag=OVERLAND ;;
  *) echo "unknown target $target (osmand, owntracks, overland)" >&2; exit 2 ;;
esac
seconds="${1:-300}"
shift || true
corpus="$here/corpus-ingest/$target"
mkdir -p "$here/bin" "$corpus"

# -parse-as-library: libFuzzer supplies main(); the entry point is the @_cdecl function in IngestFuzz.swift.
# lld avoids gold's "cannot export local symbol __asan_*" warnings.
swiftc -sanitize=fuzzer,address -parse-as-library -O -g -swift-version 6 -use-ld=lld \
    -module-name CairnIngestFuzz -D "$flag" \
    "$here"/../Sources/CairnWire/*.swift "$here"/../Sources/CairnProtocol/Ingest/*.swift "$here/IngestFuzz.swift" \
    -o "$here/bin/ingest-$target-fuzz"

cp -n "$here/seeds-ingest/$target"/* "$corpus/" 2>/dev/null || true

# Let libFuzzer report crashes itself: the Swift runtime's interactive backtracer would hold the process.
export SWIFT_BACKTRACE=enable=no
exec "$here/bin/ingest-$target-fuzz" \
    -max_total_time="$seconds" \
    -max_len=16384 \
    -dict="$here/ingest.dict" \
    -artifact_prefix="$here/bin/ingest-$target-" \
    -print_final_stats=1 \
    "$@" \
    "$corpus"
