#!/usr/bin/env bash
# Cairn against Mosquitto (MQTT) and nginx's nchan module (WebSocket) on this machine, same workload, back to back.
# Installs what is missing (the broker, nginx and nchan included), builds release, seeds a Cairn data directory with
# `cairn seed`, then for each user count starts `cairn serve`, `mosquitto` and nginx on loopback with generated
# configurations (nchan's from loadtest/nchan/nginx.conf.in: one worker process) and steps the per-user report rate
# up until p99 exceeds the bound or deliveries fall behind. Every run's JSON report lands in the results directory;
# loadtest/summarize.py turns them into one table and an SVG chart of p99 latency against delivery rate.
#
# Environment (defaults in brackets):
#   USERS_LIST  user counts to run ["1000 2000 5000 10000"]     FRIENDS  friends per user [10]
#   RATES       per-user report rates, Hz, in increasing order ["0.5 1 2 4 8 16"]
#   FIXED_RATE  the rate whose latency percentiles the table shows [1]
#   DURATION    measured seconds per run [20]                   GRAPH    random|clustered [random]
#   P99_BOUND   ms [50]     MIN_SHARE  delivered share a run must reach to count as sustained [0.99]
#   RESULTS     output directory [loadtest/results/<UTC timestamp>]
#   PIN         1: server on CPU 0, load tester on CPU 1 (taskset), so neither steals the other's core [1]
#   RUNS        runs of each configuration; a step counts by the median of its runs, and climbing stops at the
#               first step whose median is not sustained [1]
#   RT          1: server and tester under real-time scheduling (chrt -f 50, needs root), so other work on the
#               machine (a build) cannot take their cores from them; it still shares caches and memory [0]
#   SERVERS     which servers to run ["cairn mosquitto nchan"] (e.g. "cairn" alone)
#   CAIRN       the hub binary to measure [the release build of this tree], e.g. a copy of an earlier build's, for
#               A/B runs that alternate builds in one window; the load tester and `cairn seed` are always this tree's
set -euo pipefail
if [ -n "${CAIRN:-}" ]; then CAIRN=$(realpath "$CAIRN"); fi  # before the cd, so a relative path means the caller's
cd "$(dirname "$0")/.."

USERS_LIST=${USERS_LIST:-"1000 2000 5000 10000"}
FRIENDS=${FRIENDS:-10}
GRAPH=${GRAPH:-random}
RATES=${RATES:-"0.5 1 2 4 8 16"}
FIXED_RATE=${FIXED_RATE:-1}
DURATION=${DURATION:-20}
P99_BOUND=${P99_BOUND:-50}
MIN_SHARE=${MIN_SHARE:-0.99}
SEED=${SEED:-1}
RESULTS=${RESULTS:-loadtest/results/$(date -u +%Y%m%d-%H%M%S)}
PIN=${PIN:-1}
RUNS=${RUNS:-1}
RT=${RT:-0}
SERVERS=${SERVERS:-"cairn mosquitto nchan"}
SERVER_CPU=()
TESTER_CPU=()
if [ "$PIN" = 1 ] && command -v taskset >/dev/null && [ "$(nproc)" -ge 2 ]; then
  SERVER_CPU=(taskset -c 0)
  TESTER_CPU=(taskset -c 1)
fi
if [ "$RT" = 1 ]; then
  SERVER_CPU=(chrt -f 50 "${SERVER_CPU[@]}")
  TESTER_CPU=(chrt -f 50 "${TESTER_CPU[@]}")
fi

# 1. Packages: what the build needs, plus the peers themselves.
bash deploy/install-deps.sh libmosquitto1 mosquitto nginx libnginx-mod-nchan

# 2. Release build of the hub and the load tester.
swift build -c release --product cairn
swift build -c release --product cairn-loadtest
BIN=$(swift build -c release --show-bin-path)
CAIRN=${CAIRN:-$BIN/cairn}
[ -x "$CAIRN" ] || { echo "compare.sh: CAIRN=$CAIRN is not an executable" >&2; exit 1; }

mkdir -p "$RESULTS"
RESULTS=$(cd "$RESULTS" && pwd)
# Which hub binary this directory's Cairn figures are of (appended: several invocations may share a directory), and
# the tree the load tester was built from.
tree=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)
git diff --quiet HEAD 2>/dev/null || tree="$tree, modified"
echo "$(date -u +%FT%TZ) hub $CAIRN sha256 $(sha256sum "$CAIRN" | cut -d' ' -f1); tester from $tree" \
  >> "$RESULTS/cairn-binary.txt"
ulimit -n 65536 2>/dev/null || ulimit -n "$(ulimit -Hn)" || true
echo "compare.sh: results in $RESULTS"

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()'; }

wait_listening() {  # port, pid
  for _ in $(seq 1 300); do
    if ! kill -0 "$2" 2>/dev/null; then echo "compare.sh: server $2 exited early" >&2; return 1; fi
    if (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; then return 0; fi
    sleep 0.1
  done
  echo "compare.sh: nothing listens on $1" >&2
  return 1
}

SERVER_PID=""   # the process to stop (nginx's master)
MEASURED_PID="" # the process whose CPU and memory count (nginx's worker; the server itself otherwise)
stop_server() {
  if [ -n "$SERVER_PID" ] && kill -0 "$SERVER_PID" 2>/dev/null; then
    kill -TERM "$SERVER_PID"
    for _ in $(seq 1 100); do kill -0 "$SERVER_PID" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$SERVER_PID" 2>/dev/null || true
    wait "$SERVER_PID" 2>/dev/null || true
  fi
  SERVER_PID=""
  MEASURED_PID=""
}
trap stop_server EXIT

start_cairn() {  # data dir
  local port; port=$(free_port)
  "${SERVER_CPU[@]}" "$CAIRN" serve --host 127.0.0.1 --port "$port" --data "$1" > "$RESULTS/cairn-serve.log" 2>&1 &
  SERVER_PID=$!
  MEASURED_PID=$SERVER_PID
  wait_listening "$port" "$SERVER_PID"
  SERVER_PORT=$port
}

# nginx's master (start.sh execs it) forks the one worker that serves every connection; the worker is measured. The
# master idles after start-up and is left out.
start_nchan() {
  local port; port=$(free_port)
  rm -rf "$RESULTS/nchan"
  "${SERVER_CPU[@]}" bash loadtest/nchan/start.sh "$port" "$RESULTS/nchan" > "$RESULTS/nchan.log" 2>&1 &
  SERVER_PID=$!
  wait_listening "$port" "$SERVER_PID"
  # The master listens before it forks its worker: wait for the worker too.
  MEASURED_PID=""
  for _ in $(seq 1 100); do
    MEASURED_PID=$(pgrep -P "$SERVER_PID" | head -1 || true)
    [ -n "$MEASURED_PID" ] && break
    sleep 0.1
  done
  [ -n "$MEASURED_PID" ] || { echo "compare.sh: nginx started no worker within 10 s" >&2; exit 1; }
  SERVER_PORT=$port
}

start_mosquitto() {
  local port; port=$(free_port)
  cat > "$RESULTS/mosquitto.conf" <<CONF
listener $port 127.0.0.1
allow_anonymous true
persistence false
max_connections -1
set_tcp_nodelay true
log_dest stderr
log_type error
log_type warning
CONF
  "${SERVER_CPU[@]}" mosquitto -c "$RESULTS/mosquitto.conf" > "$RESULTS/mosquitto.log" 2>&1 &
  SERVER_PID=$!
  MEASURED_PID=$SERVER_PID
  wait_listening "$port" "$SERVER_PID"
  SERVER_PORT=$port
}

# One run: server kind, users, rate, tokens file, data directory, run number. Starts a fresh server, so CPU and
# memory belong to this run.
run_one() {
  local kind=$1 users=$2 rate=$3 tokens=$4 data=$5 n=$6
  local name="$kind-u$users-r$rate"
  [ "$RUNS" = 1 ] || name="$name-n$n"
  case "$kind" in
    cairn) start_cairn "$data" ;;
    mosquitto) start_mosquitto ;;
    nchan) start_nchan ;;
    *) echo "compare.sh: unknown server $kind" >&2; return 1 ;;
  esac
  local ramp=$(( users / 5 > 1000 ? users / 5 : 1000 ))
  "${TESTER_CPU[@]}" "$BIN/cairn-loadtest" --server "$kind" --port "$SERVER_PORT" --server-pid "$MEASURED_PID" --tokens "$tokens" \
    --users "$users" --rate "$rate" --duration "$DURATION" --ramp "$ramp" --seed "$SEED" --json "$RESULTS/$name.json" --quiet \
    > "$RESULTS/$name.txt" 2>&1 || true
  stop_server
}

# A step: RUNS runs of one configuration, then the verdict on their medians. Sustained: completed, p99 within the
# bound, and (nearly) every expected delivery arrived.
step() {
  local kind=$1 users=$2 rate=$3 tokens=$4 data=$5
  for n in $(seq 1 "$RUNS"); do run_one "$kind" "$users" "$rate" "$tokens" "$data" "$n"; done
  python3 - "$P99_BOUND" "$MIN_SHARE" "$RESULTS"/"$kind-u$users-r$rate".json "$RESULTS"/"$kind-u$users-r$rate"-n*.json <<'PY'
import json, statistics, sys
runs = []
for path in sys.argv[3:]:
    try:
        runs.append(json.load(open(path)))
    except Exception:
        pass
if not runs:
    sys.exit(1)
med = lambda xs: statistics.median(xs)
completed = all(r["outcome"] == "completed" for r in runs)
p99 = med([r["latency"]["p99"] for r in runs])
share = med([r["deliveredShare"] for r in runs])
rate = med([r["deliveriesPerSecond"] for r in runs])
ok = completed and p99 <= float(sys.argv[1]) and share >= float(sys.argv[2])
def per(r, cost):
    cpu = (r.get(cost) or {}).get("windowCpuSeconds")
    delivered = r["deliveriesPerSecond"] * r["windowSeconds"]
    return cpu / delivered * 1e6 if cpu and delivered > 0 else None
def show(xs):
    xs = [x for x in xs if x is not None]
    return f"{med(xs):5.1f}" if xs else "    –"
s = runs[0]["setup"]
print(f'  {s["server"]:9} users {s["users"]:6} rate {s["rateHz"]:5} Hz ({len(runs)} run(s), medians): '
      f'{rate:9.0f} deliveries/s, p99 {p99:8.2f} ms, delivered {100*share:5.1f}%, '
      f'CPU µs/delivery server {show([per(r, "serverCost") for r in runs])} '
      f'tester {show([per(r, "clientCost") for r in runs])}  {"ok" if ok else "NOT SUSTAINED"}')
sys.exit(0 if ok else 1)
PY
}

for users in $USERS_LIST; do
  data="$RESULTS/data-u$users"
  tokens="$RESULTS/tokens-u$users.json"
  "$BIN/cairn" seed --users "$users" --friends "$FRIENDS" --graph "$GRAPH" --seed "$SEED" --data "$data" --out "$tokens"
  for kind in $SERVERS; do
    # The tester holds one descriptor per user (its Mosquitto clients are made without libmosquitto's socket pairs).
    if [ $(( users + 1024 )) -gt "$(ulimit -n)" ]; then
      echo "compare.sh: skipping $kind at $users users: the tester would need $(( users + 1024 )) descriptors, the limit is $(ulimit -n)"
      continue
    fi
    # Always run the fixed rate (for the latency columns), then climb until the server no longer keeps up.
    step "$kind" "$users" "$FIXED_RATE" "$tokens" "$data" || true
    for rate in $RATES; do
      [ "$rate" = "$FIXED_RATE" ] && continue
      step "$kind" "$users" "$rate" "$tokens" "$data" || break
    done
  done
done

python3 loadtest/summarize.py "$RESULTS" --p99-bound "$P99_BOUND" --min-share "$MIN_SHARE" --fixed-rate "$FIXED_RATE"
