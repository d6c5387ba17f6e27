#!/usr/bin/env bash
# A/B of two Cairn builds under the same load, runs alternating A, B, A, B, ... so that a busy spell on the shared
# machine falls on both. Each run: a fresh copy of one seeded data directory, `cairn serve` pinned to CPU 0, the
# load tester pinned to CPU 1, and, during the measured window, `perf stat` counting the server's system calls
# (tracepoints, so the server is not slowed the way strace slows it). One line per run: deliveries/s, latency,
# server CPU µs per delivery and system calls per delivery.
#
#   A=/path/to/bin-before B=/path/to/bin-after USERS=1000 RATE=1 RUNS=2 loadtest/ab-write-path.sh
#
# A and B are directories holding `cairn`; the tester is $TESTER (default: $A/cairn-loadtest). Loopback only.
# NICE=-10 runs server and tester at that niceness (root), so that other work on a shared machine starves them less.
# RT=1 runs both under real-time priority instead (`chrt -f 50`, SCHED_FIFO; root): other work on the machine then
# waits for them, not the other way round (the kernel still leaves others 5% of each second: sched_rt_runtime_us).
# PROFILE=1 samples the server with `perf record -F 999 -g` for 6 s (into $WORK/<run>.perf.data) instead of counting
# system calls (the run's line then shows 0 for them); read it with `perf report --children --sort symbol -g none`.
set -euo pipefail

A=${A:?directory of build A}
B=${B:?directory of build B}
TESTER=${TESTER:-$A/cairn-loadtest}
USERS=${USERS:-1000}
RATE=${RATE:-1}
RUNS=${RUNS:-2}
DURATION=${DURATION:-10}
COUNT_SECONDS=${COUNT_SECONDS:-7}
NICE=${NICE:-0}
RT=${RT:-0}
PROFILE=${PROFILE:-0}
if [ "$RT" = 1 ]; then PRIO=(chrt -f 50); else PRIO=(nice -n "$NICE"); fi
WORK=${WORK:-/tmp/cairn-ab-$USERS}
mkdir -p "$WORK"
ulimit -n 65536 2>/dev/null || ulimit -n "$(ulimit -Hn)" || true

if [ ! -f "$WORK/tokens.json" ]; then
  "$A/cairn" seed --users "$USERS" --friends 10 --graph random --seed 1 --data "$WORK/seed" \
    --out "$WORK/tokens.json" > /dev/null
fi

free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()'
}

EVENTS=raw_syscalls:sys_enter,syscalls:sys_enter_sendto,syscalls:sys_enter_epoll_ctl
EVENTS=$EVENTS,syscalls:sys_enter_epoll_wait,syscalls:sys_enter_epoll_pwait,syscalls:sys_enter_recvfrom
EVENTS=$EVENTS,syscalls:sys_enter_write,syscalls:sys_enter_writev

run() {  # label bin run
  local label=$1 bin=$2 n=$3 out="$WORK/$1-u$USERS-r$RATE-$3"
  rm -rf "$WORK/data"
  cp -r "$WORK/seed" "$WORK/data"
  local port; port=$(free_port)
  "${PRIO[@]}" taskset -c 0 "$bin/cairn" serve --host 127.0.0.1 --port "$port" --data "$WORK/data" --log-level warning \
    > "$out.serve.log" 2>&1 &
  local pid=$!
  for _ in $(seq 1 300); do (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && break; sleep 0.1; done
  "${PRIO[@]}" taskset -c 1 "$TESTER" --port "$port" --server-pid "$pid" --tokens "$WORK/tokens.json" --rate "$RATE" \
    --duration "$DURATION" --ramp 1000 --seed 1 --json "$out.json" > "$out.txt" 2> "$out.progress" &
  local tester=$!
  until grep -q measure "$out.progress" 2>/dev/null; do
    kill -0 "$tester" 2>/dev/null || break
    sleep 0.2
  done
  sleep 1
  if [ "$PROFILE" = 1 ]; then
    : > "$out.perf"
    perf record -F 999 -g -p "$pid" -o "$out.perf.data" -- sleep 6 > /dev/null 2>&1 || true
  else
    perf stat -x, -e "$EVENTS" -p "$pid" -o "$out.perf" -- sleep "$COUNT_SECONDS" > /dev/null 2>&1 || true
  fi
  wait "$tester" || true
  kill -INT "$pid"
  wait "$pid" 2>/dev/null || true
  python3 - "$label" "$out.json" "$out.perf" "$COUNT_SECONDS" <<'PY'
import json, sys
label, report, perf, seconds = sys.argv[1], sys.argv[2], sys.argv[3], float(sys.argv[4])
r = json.load(open(report))
counts = {}
for line in open(perf):
    parts = line.strip().split(",")
    if len(parts) > 2 and parts[0].replace(".", "").isdigit():
        counts[parts[2].split(":")[-1].replace("sys_enter_", "")] = float(parts[0])
rate = r["deliveriesPerSecond"]
counted = rate * seconds
per = lambda k: counts.get(k, 0) / counted if counted else float("nan")
lat = r["latency"]
cpu_us = r["serverCost"]["windowCpuSeconds"] / (rate * r["windowSeconds"]) * 1e6
print(f'{label} users {r["setup"]["users"]} rate {r["setup"]["rateHz"]} Hz: {rate:8.0f} deliv/s '
      f'({100 * r["deliveredShare"]:.1f}%), p50 {lat["p50"]:.2f} p99 {lat["p99"]:.2f} ms, '
      f'server CPU {r["serverCost"]["windowCpuSeconds"]:.2f} s = {cpu_us:.1f} us/delivery, '
      f'events/frame at tester {r["counters"]["messagesReceived"] / max(1, r["counters"]["framesReceived"]):.2f}; '
      f'per delivery: syscalls {per("sys_enter"):.2f}, sendto {per("sendto"):.2f}, '
      f'epoll_ctl {per("epoll_ctl"):.2f}, epoll_wait {per("epoll_wait") + per("epoll_pwait"):.2f}, '
      f'recvfrom {per("recvfrom"):.2f}')
PY
}

for n in $(seq 1 "$RUNS"); do
  run A "$A" "$n"
  run B "$B" "$n"
done
