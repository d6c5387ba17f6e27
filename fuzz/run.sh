#!/usr/bin/env bash
# Builds the CairnWire decoder fuzz target with libFuzzer and AddressSanitizer, straight from the module's
# sources (swiftc, no SwiftPM), and runs it for the given number of seconds (default 300).
#   fuzz/run.sh [seconds] [extra libFuzzer flags...]
# Seeds come from fuzz/seeds/ (committed); the evolving corpus lives in fuzz/corpus-work/ and the binary and any
# crash-*/leak-*/timeout-* artifacts in fuzz/bin/ (both gitignored). Reproduce a crash with
#   fuzz/bin/codec-fuzz fuzz/bin/crash-<hash>
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
seconds="${1:-300}"
shift || true
mkdir -p "$here/bin" "$here/corpus-work"

# -parse-as-library: libFuzzer supplies main(); the entry point is the @_cdecl function in CodecFuzz.swift.
# lld avoids gold's "cannot export local symbol __asan_*" warnings.
swiftc -sanitize=fuzzer,address -parse-as-library -O -g -swift-version 6 -use-ld=lld \
    -module-name CairnWireFuzz \
    "$here"/../Sources/CairnWire/*.swift "$here/CodecFuzz.swift" \
    -o "$here/bin/codec-fuzz"

cp -n "$here"/seeds/* "$here/corpus-work/" 2>/dev/null || true

# Let libFuzzer report crashes itself: the Swift runtime's interactive backtracer would hold the process.
export SWIFT_BACKTRACE=enable=no
exec "$here/bin/codec-fuzz" \
    -max_total_time="$seconds" \
    -max_len=8192 \
    -dict="$here/json.dict" \
    -artifact_prefix="$here/bin/" \
    -print_final_stats=1 \
    "$@" \
    "$here/corpus-work"
