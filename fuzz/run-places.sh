#!/usr/bin/env bash
# Builds the place-file parser fuzz target (CSV and GeoJSON, Sources/CairnApp/PlaceImport) with libFuzzer and
# AddressSanitizer, straight from the parsers' sources (swiftc, no SwiftPM: they import nothing), and runs it for
# the given number of seconds (default 600).
#   fuzz/run-places.sh [seconds] [extra libFuzzer flags...]
# Seeds come from fuzz/places-seeds/ (committed); the corpus lives in fuzz/corpus-work/places/ and the binary and any
# crash-*/leak-*/timeout-* artifacts in fuzz/bin/ (both gitignored). Reproduce a crash with
#   fuzz/bin/places-fuzz fuzz/bin/crash-<hash>
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
seconds="${1:-600}"
shift || true
mkdir -p "$here/bin" "$here/corpus-work/places"
src="$here/../Sources/CairnApp/PlaceImport"

swiftc -sanitize=fuzzer,address -parse-as-library -O -g -swift-version 6 -use-ld=lld \
    -module-name CairnPlacesFuzz \
    "$src/ParsedPlace.swift" "$src/PlaceCSV.swift" "$src/PlaceGeoJSON.swift" "$src/ImportJSON.swift" \
    "$here/PlacesFuzz.swift" \
    -o "$here/bin/places-fuzz"

cp -n "$here"/places-seeds/* "$here/corpus-work/places/" 2>/dev/null || true

export SWIFT_BACKTRACE=enable=no
exec "$here/bin/places-fuzz" \
    -max_total_time="$seconds" \
    -max_len=4096 \
    -artifact_prefix="$here/bin/" \
    -print_final_stats=1 \
    "$@" \
    "$here/corpus-work/places"
