#!/usr/bin/env bash
# The floor (docs/BENCHMARKS.md, "The floor"): builds floor.c with cc and runs it for N = 1,000 and 5,000 loopback
# connections and k = 1, 2, 4, 8 messages per write(), each configuration REPEAT times, writer on CPU 0 and reader
# on CPU 1. Prints one line per run, then the median writer µs per message and messages/s per configuration.
# URINGS lists sends per io_uring submission to try beside write() (0); anything but "0" needs liburing-dev.
#
#   loadtest/floor/run.sh
#   CONNECTIONS="1000 5000" BATCHES="1 2 4 8" SECONDS_EACH=3 REPEAT=3 SIZE=120 URINGS="0" loadtest/floor/run.sh
#   CONNECTIONS=9900 BATCHES=1 SECONDS_EACH=4 URINGS="0 64 256" RT=1 loadtest/floor/run.sh   # write() vs io_uring
set -euo pipefail
cd "$(dirname "$0")"

CONNECTIONS=${CONNECTIONS:-"1000 5000"}
BATCHES=${BATCHES:-"1 2 4 8"}
SECONDS_EACH=${SECONDS_EACH:-3}
REPEAT=${REPEAT:-3}
SIZE=${SIZE:-120}
URINGS=${URINGS:-0}
RT=${RT:-0}   # 1: run under chrt -f 50 (root)
OUT=${OUT:-$(mktemp -d -p /tmp cairn-floor.XXXXXX)}

if [ "$URINGS" = 0 ]; then
    cc -O2 -Wall -pthread -o "$OUT/floor" floor.c
else
    bash ../../deploy/install-deps.sh liburing-dev
    cc -O2 -Wall -pthread -DFLOOR_URING -o "$OUT/floor" floor.c -luring
fi
PREFIX=()
[ "$RT" = 1 ] && PREFIX=(chrt -f 50)
ulimit -n "$(ulimit -Hn)" 2>/dev/null || true
: > "$OUT/runs.jsonl"
for n in $CONNECTIONS; do
    for k in $BATCHES; do
        for _ in $(seq 1 "$REPEAT"); do
            for u in $URINGS; do
                "${PREFIX[@]}" "$OUT/floor" --connections "$n" --batch "$k" --seconds "$SECONDS_EACH" --size "$SIZE" \
                    --uring "$u" --json | tee -a "$OUT/runs.jsonl"
            done
        done
    done
done

python3 - "$OUT/runs.jsonl" <<'PY'
import json, statistics, sys
runs = [json.loads(line) for line in open(sys.argv[1]) if line.strip()]
groups = {}
for r in runs:
    groups.setdefault((r["connections"], r["batch"], r["uring"]), []).append(r)
print()
print(f'{"connections":>11} {"k":>3} {"uring":>5} {"runs":>4} {"writer us/write":>15} {"writer us/msg":>13} '
      f'{"reader us/msg":>13} {"process us/msg":>14} {"msg/s":>10}')
for (n, k, u), rs in sorted(groups.items()):
    med = lambda key: statistics.median(r[key] for r in rs)
    print(f'{n:>11} {k:>3} {u:>5} {len(rs):>4} {med("writer_us_per_write"):>15.2f} '
          f'{med("writer_us_per_message"):>13.2f} {med("reader_us_per_message"):>13.2f} '
          f'{med("process_us_per_message"):>14.2f} {med("messages_per_second"):>10.0f}')
PY
echo "run.sh: runs in $OUT/runs.jsonl"
