#!/usr/bin/env bash
# Memory per connected user (docs/BENCHMARKS.md, "Memory per connection"): seeds USERS accounts, starts a release
# `cairn serve` on CPU 0 from a fresh copy of the data each round, opens idle authenticated connections in STEPS
# with idle.py (on CPU 1) and prints the hub's VmRSS after each step. REPEAT rounds, each on a fresh hub; the medians
# of the bytes per connection at each step, and of the step from the first to the last count, come last.
#
#   loadtest/memory/run.sh
#   USERS=5000 STEPS=1000,5000 REPEAT=3 WATCH=1 SETTLE=2 loadtest/memory/run.sh   # SETTLE: seconds before each reading
#   CAIRN=/path/to/cairn loadtest/memory/run.sh        # measure that binary instead of building one
set -euo pipefail
cd "$(dirname "$0")/../.."

USERS=${USERS:-5000}
STEPS=${STEPS:-1000,5000}
REPEAT=${REPEAT:-3}
OUT=${OUT:-$(mktemp -d -p /tmp cairn-memory.XXXXXX)}
WATCH=${WATCH:-1}
SETTLE=${SETTLE:-2}

if [ -n "${CAIRN:-}" ]; then
    HUB=$CAIRN
else
    swift build -c release --product cairn 2>&1 | grep -E "error|warning:" || true
    HUB="$(swift build -c release --show-bin-path)/cairn"
fi
ulimit -n "$(ulimit -Hn)" 2>/dev/null || true
"$HUB" seed --users "$USERS" --friends 10 --graph random --seed 1 --data "$OUT/seed" --out "$OUT/tokens.json" \
    >/dev/null

free_port() {
    python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()'
}
PID=""
stop_hub() {
    if [ -n "$PID" ] && kill -0 "$PID" 2>/dev/null; then kill -TERM "$PID"; wait "$PID" 2>/dev/null || true; fi
    PID=""
}
trap stop_hub EXIT

for round in $(seq 1 "$REPEAT"); do
    rm -rf "$OUT/data" && cp -r "$OUT/seed" "$OUT/data"
    port=$(free_port)
    taskset -c 0 "$HUB" serve --host 127.0.0.1 --port "$port" --data "$OUT/data" --log-level warning \
        >"$OUT/hub-$round.log" 2>&1 &
    PID=$!
    for _ in $(seq 1 100); do
        "$HUB" health --port "$port" >/dev/null 2>&1 && break
        sleep 0.1
    done
    echo "round $round ($HUB):"
    extra=()
    [ "$WATCH" = 1 ] || extra=(--no-watch)
    taskset -c 1 python3 loadtest/memory/idle.py --pid "$PID" --port "$port" --tokens "$OUT/tokens.json" \
        --steps "$STEPS" --settle "$SETTLE" "${extra[@]}" | tee "$OUT/round-$round.txt"
    stop_hub
done
python3 - "$OUT"/round-*.txt <<'PY'
import json, statistics, sys
rounds = [json.loads([l for l in open(p) if l.startswith("{")][-1])["steps"] for p in sys.argv[1:]]
print(f"medians over {len(rounds)} round(s):")
for i, step in enumerate(rounds[0][1:], start=1):
    median = statistics.median(r[i]["bytes_per_connection"] for r in rounds)
    print(f'  {step["connections"]:>6} connections: {median:6.0f} bytes per connection over the baseline')
if len(rounds[0]) > 2:
    first, last = rounds[0][1]["connections"], rounds[0][-1]["connections"]
    marginal = [(r[-1]["rss_kib"] - r[1]["rss_kib"]) * 1024 / (last - first) for r in rounds]
    print(f"  from {first} to {last}: {statistics.median(marginal):6.0f} bytes per added connection")
PY
echo "run.sh: outputs in $OUT"
