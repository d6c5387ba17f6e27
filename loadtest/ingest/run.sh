#!/usr/bin/env bash
# The OsmAnd ingest benchmark (docs/BENCHMARKS.md, "Tracker ingest"), end to end: builds the release `cairn`, starts
# it on a loopback port with a fresh data directory on disk (not tmpfs: every report is an fsynced SQLite commit, and
# that is part of what is measured), pairs the trackers (setup.py), then
#   1. throughput: `wrk` (Debian's package) sends OsmAnd reports on keep-alive connections as fast as the hub answers
#      (osmand.lua), and counts the answers by status;
#   2. latency: ingest-latency (C, epoll) sends 1,000 trackers x 1 Hz, evenly spread, while a watcher receives
#      item.pos, and reports ingest -> watcher percentiles and what was delivered against what was sent;
# and stops the hub. Prints a summary; the full outputs stay in the run's directory (printed at the end).
#
# Needs: wrk (apt-get install -y wrk), /usr/bin/python3 with python3-websockets, a C compiler. CI does not run it.
#
#   loadtest/ingest/run.sh
#   TRACKERS=1000 WRK_SECONDS=20 WRK_THREADS=2 WRK_CONNECTIONS=16 LATENCY_SECONDS=30 loadtest/ingest/run.sh
#   CAIRN=/path/to/cairn loadtest/ingest/run.sh       # measure that binary instead of building one
set -euo pipefail
cd "$(dirname "$0")/../.."

TRACKERS=${TRACKERS:-1000}
PORT=${PORT:-7691}
WRK_SECONDS=${WRK_SECONDS:-20}
WRK_THREADS=${WRK_THREADS:-2}
WRK_CONNECTIONS=${WRK_CONNECTIONS:-16}
LATENCY_SECONDS=${LATENCY_SECONDS:-30}
LATENCY_CONNECTIONS=${LATENCY_CONNECTIONS:-64}
RATE=${RATE:-1}
OUT=${OUT:-$(mktemp -d -p /var/tmp cairn-ingest-bench.XXXXXX)}

command -v wrk >/dev/null || { echo "run.sh: needs wrk (apt-get install -y wrk)" >&2; exit 2; }
/usr/bin/python3 -c 'import websockets' 2>/dev/null ||
    { echo "run.sh: needs python3-websockets (apt-get install -y python3-websockets)" >&2; exit 2; }

if [ -n "${CAIRN:-}" ]; then
    HUB_BINARY=$CAIRN # a given binary (an A/B of two builds), not built here
else
    swift build -c release --product cairn 2>&1 | grep -E "error|warning:" || true
    HUB_BINARY="$(swift build -c release --show-bin-path)/cairn"
fi
cc -O2 -Wall -o "$OUT/ingest-latency" loadtest/ingest/ingest-latency.c -lm

mkdir -p "$OUT/data"
"$HUB_BINARY" serve --host 127.0.0.1 --port "$PORT" --data "$OUT/data" --log-level warning 2>"$OUT/hub.log" &
HUB=$!
stop_hub() {
    if kill -0 "$HUB" 2>/dev/null; then
        kill -TERM "$HUB"
        wait "$HUB" 2>/dev/null || true
    fi
}
trap stop_hub EXIT
for _ in $(seq 1 100); do
    "$HUB_BINARY" health --port "$PORT" >/dev/null 2>&1 && break
    kill -0 "$HUB" 2>/dev/null || { echo "run.sh: the hub did not start:" >&2; cat "$OUT/hub.log" >&2; exit 2; }
    sleep 0.1
done

# What one synchronous 4 KiB write costs on the data directory's disk now (each report's commit waits for one
# fdatasync): the machine condition that moves these figures most on a shared disk.
sync_probe() {
    local start end
    start=$(date +%s%N)
    dd if=/dev/zero of="$OUT/sync-probe" bs=4k count=200 oflag=dsync 2>/dev/null
    end=$(date +%s%N)
    rm -f "$OUT/sync-probe"
    awk -v ns="$((end - start))" 'BEGIN { printf "%.2f ms per synchronous 4 KiB write", ns / 200 / 1e6 }'
}

# The hub's CPU seconds (user + system) so far, from /proc.
hub_cpu() { awk '{ printf "%.2f", ($14 + $15) / 100 }' "/proc/$HUB/stat"; }
minus() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a - b }'; }

echo "disk before: $(sync_probe)" | tee "$OUT/machine.txt"
/usr/bin/python3 loadtest/ingest/setup.py --port "$PORT" --trackers "$TRACKERS" --out "$OUT/devices.txt"

echo "== wrk: ${WRK_THREADS} threads, ${WRK_CONNECTIONS} keep-alive connections, ${WRK_SECONDS} s" | tee "$OUT/wrk.txt"
cpu0=$(hub_cpu)
wrk -t"$WRK_THREADS" -c"$WRK_CONNECTIONS" -d"${WRK_SECONDS}s" --latency -s loadtest/ingest/osmand.lua \
    "http://127.0.0.1:$PORT" -- "$OUT/devices.txt" "$WRK_THREADS" | tee -a "$OUT/wrk.txt"
cpu1=$(hub_cpu)
echo "hub CPU during wrk: $(minus "$cpu1" "$cpu0") s over ${WRK_SECONDS} s" | tee -a "$OUT/wrk.txt"

sleep 2
echo "== latency: $TRACKERS trackers x $RATE Hz, $LATENCY_CONNECTIONS keep-alive connections, ${LATENCY_SECONDS} s" |
    tee "$OUT/latency.txt"
cpu0=$(hub_cpu)
status=0
"$OUT/ingest-latency" --port "$PORT" --devices "$OUT/devices.txt" --trackers "$TRACKERS" --rate "$RATE" \
    --duration "$LATENCY_SECONDS" --connections "$LATENCY_CONNECTIONS" | tee -a "$OUT/latency.txt" || status=$?
cpu1=$(hub_cpu)
echo "hub CPU during the latency run: $(minus "$cpu1" "$cpu0") s" | tee -a "$OUT/latency.txt"

# What the hub did with the fixes (stored, or dropped by a filter, or refused): the generators' reports are meant
# to pass every filter, so anything but `stored` (and `older`, none expected) is worth a look.
/usr/bin/python3 -c 'import sys, urllib.request; print(urllib.request.urlopen(sys.argv[1]).read().decode())' \
    "http://127.0.0.1:$PORT/metrics" | grep -E '^cairn_ingest_(fixes|filtered|refused)_total' |
    awk '$2 != 0' >"$OUT/ingest-metrics.txt" || true

stop_hub
trap - EXIT
echo "disk after: $(sync_probe)" | tee -a "$OUT/machine.txt"

echo
echo "== summary ($(date -u +%FT%TZ), $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg))"
grep -E "^(requests/s|non-200|latency p99:)" "$OUT/wrk.txt" | sed 's/^/wrk /'
grep -E "^(reports sent|item.pos delivered|ingest -> |send lag|schedule -> )" "$OUT/latency.txt"
grep -E "^hub CPU" "$OUT/wrk.txt" "$OUT/latency.txt" | sed 's/^[^:]*://'
echo "hub ingest counters (non-zero): $(tr '\n' ' ' <"$OUT/ingest-metrics.txt")"
cat "$OUT/machine.txt"
echo "outputs: $OUT"
[ "$status" -eq 0 ] || echo "run.sh: the latency run reported missing or refused reports (exit $status)" >&2
exit "$status"
