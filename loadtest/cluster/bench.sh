#!/usr/bin/env bash
# Issue 16's benchmark: the same users over three Cairn nodes that share one PostgreSQL database and one Redis, and
# the p99 of a delivery that crosses nodes (through Redis) against one that stays on a node, in the same run. Installs
# what is missing, builds release, starts a throwaway PostgreSQL (initdb in a temporary directory, as the tests'
# PostgresServerProcess does; as the `postgres` account under root) and a loopback redis-server, seeds the users into
# the shared database once (`cairn seed --storage-url`), then for each rate and run starts fresh nodes (so CPU belongs
# to that run), runs `cairn-loadtest --ports` over them and stops them. For reference it runs the same workload on ONE
# node on the same database, without Redis. Reports land in loadtest/results/<date>-cluster/: the tester's JSON per
# run, the CPU Redis and PostgreSQL used during it (`*.infra.json`), and summary.txt/summary.json. Everything it
# started is stopped on exit, however it ends.
#
# Environment (defaults in brackets):
#   USERS [2000]   FRIENDS [10]   GRAPH random|clustered [random]   SEED [1]   NODES [3]
#   RATES   per-user report rates, Hz ["0.5 1 2"]         DURATION  measured seconds per run [20]
#   RUNS    runs of each configuration; the summary shows medians [2]
#   SINGLE  1: also run each rate on one node without Redis, for reference [1]
#   RT      1: nodes, Redis and the tester under real-time scheduling (chrt -f 50, needs root), so builds elsewhere
#           on the machine cannot take the CPU from them; PostgreSQL stays at normal priority [0]
#   RESULTS output directory [loadtest/results/<UTC date>-cluster]
set -euo pipefail
cd "$(dirname "$0")/../.."

USERS=${USERS:-2000}
FRIENDS=${FRIENDS:-10}
GRAPH=${GRAPH:-random}
SEED=${SEED:-1}
NODES=${NODES:-3}
RATES=${RATES:-"0.5 1 2"}
DURATION=${DURATION:-20}
RUNS=${RUNS:-2}
SINGLE=${SINGLE:-1}
RT=${RT:-0}
RESULTS=${RESULTS:-loadtest/results/$(date -u +%Y-%m-%d)-cluster}
PRIO=()
[ "$RT" = 1 ] && PRIO=(chrt -f 50)

# 1. Packages: what the build needs, plus the two servers the nodes share.
bash deploy/install-deps.sh redis-server postgresql

# 2. Release build of the hub and the load tester.
swift build -c release --product cairn
swift build -c release --product cairn-loadtest
BIN=$(swift build -c release --show-bin-path)

mkdir -p "$RESULTS"
RESULTS=$(cd "$RESULTS" && pwd)
WORK=$(mktemp -d /var/tmp/cairn-cluster-bench.XXXXXX)  # on disk; PostgreSQL's files and the nodes' data
ulimit -n 65536 2>/dev/null || ulimit -n "$(ulimit -Hn)" || true
echo "bench.sh: results in $RESULTS, scratch in $WORK"

free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()'
}

wait_listening() {  # port, pid
  for _ in $(seq 1 300); do
    if ! kill -0 "$2" 2>/dev/null; then echo "bench.sh: process $2 exited early" >&2; return 1; fi
    if (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; then return 0; fi
    sleep 0.1
  done
  echo "bench.sh: nothing listens on $1" >&2
  return 1
}

stop_pid() {  # pid [signal]: ask, wait up to 10 s, then kill
  local pid=$1 sig=${2:-TERM}
  [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null || return 0
  kill -"$sig" "$pid" 2>/dev/null || true
  for _ in $(seq 1 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  kill -KILL "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
}

NODE_PIDS=()
NODE_PORTS=()
PG_PID=""
REDIS_PID=""
stop_nodes() {
  for pid in "${NODE_PIDS[@]}"; do stop_pid "$pid"; done
  NODE_PIDS=()
  NODE_PORTS=()
}
cleanup() {
  stop_nodes
  stop_pid "$REDIS_PID"
  stop_pid "$PG_PID" INT  # fast shutdown
  rm -rf "$WORK"
}
trap cleanup EXIT

# 3. PostgreSQL: a fresh cluster, trust authentication on loopback only. Durability off (fsync), as in the tests:
#    the positions the benchmark measures are not written per move (snapshots only), and this one is thrown away.
PG_BIN=$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -1)
AS_PG=()
if [ "$(id -u)" = 0 ]; then
  chown postgres:postgres "$WORK"
  AS_PG=(setpriv --reuid=postgres --regid=postgres --clear-groups)
fi
"${AS_PG[@]}" "$PG_BIN/initdb" -D "$WORK/pg" -U cairn -A trust --no-sync -E UTF8 --locale=C > "$WORK/initdb.log"
PG_PORT=$(free_port)
"${AS_PG[@]}" "$PG_BIN/postgres" -D "$WORK/pg" -p "$PG_PORT" -k "$WORK" -c listen_addresses=127.0.0.1 \
  -c fsync=off -c full_page_writes=off -c max_connections=100 > "$WORK/postgres.log" 2>&1 &
PG_PID=$!
for _ in $(seq 1 300); do "$PG_BIN/pg_isready" -q -h 127.0.0.1 -p "$PG_PORT" && break; sleep 0.1; done
"$PG_BIN/psql" -q -h 127.0.0.1 -p "$PG_PORT" -U cairn -d postgres -c "CREATE DATABASE bench"
DB="postgresql://cairn@127.0.0.1:$PG_PORT/bench"

# 4. Redis on loopback, nothing persisted.
REDIS_PORT=$(free_port)
"${PRIO[@]}" redis-server --port "$REDIS_PORT" --bind 127.0.0.1 --save '' --appendonly no --daemonize no \
  > "$WORK/redis.log" 2>&1 &
REDIS_PID=$!
wait_listening "$REDIS_PORT" "$REDIS_PID"

# 5. The users and friendships, once, in the shared database (the nodes read friendships when they start).
TOKENS="$WORK/tokens.json"
"$BIN/cairn" seed --users "$USERS" --friends "$FRIENDS" --graph "$GRAPH" --seed "$SEED" --storage-url "$DB" \
  --out "$TOKENS"

# Starts `count` nodes on the shared database; with more than one, they share Redis too.
start_nodes() {  # count
  local count=$1 i port
  for i in $(seq 1 "$count"); do
    port=$(free_port)
    local cluster=()
    [ "$count" -gt 1 ] && cluster=(--redis-url "redis://127.0.0.1:$REDIS_PORT" --cluster-node "node$i")
    rm -rf "$WORK/node$i"
    "${PRIO[@]}" "$BIN/cairn" serve --host 127.0.0.1 --port "$port" --data "$WORK/node$i" --storage-url "$DB" \
      --storage-connections 2 "${cluster[@]}" > "$WORK/node$i.log" 2>&1 &
    NODE_PIDS+=($!)
    NODE_PORTS+=("$port")
  done
  for i in "${!NODE_PIDS[@]}"; do
    wait_listening "${NODE_PORTS[$i]}" "${NODE_PIDS[$i]}" || { tail -20 "$WORK/node$((i + 1)).log" >&2; return 1; }
  done
}

# CPU seconds (utime+stime, plus those of reaped children) of a process and its live children.
cpu_of_tree() {  # pid
  python3 - "$1" <<'PY'
import os, sys
root = sys.argv[1]
hz = os.sysconf("SC_CLK_TCK")
total = 0
for pid in filter(str.isdigit, os.listdir("/proc")):
    try:
        fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    except OSError:
        continue
    if pid == root:
        total += sum(int(x) for x in fields[11:15])  # utime stime cutime cstime
    elif fields[1] == root:
        total += int(fields[11]) + int(fields[12])
print(total / hz)
PY
}

# One run: nodes, rate, run number. Fresh nodes, the tester over them, the shared servers' CPU around it.
run_one() {
  local count=$1 rate=$2 n=$3
  local name="n$count-u$USERS-r$rate-run$n"
  start_nodes "$count"
  local pids=() p
  for p in "${NODE_PIDS[@]}"; do pids+=(--server-pid "$p"); done
  local redis0 pg0 redis1 pg1
  redis0=$(cpu_of_tree "$REDIS_PID"); pg0=$(cpu_of_tree "$PG_PID")
  local ports; ports=$(IFS=,; echo "${NODE_PORTS[*]}")
  "${PRIO[@]}" "$BIN/cairn-loadtest" --ports "$ports" --tokens "$TOKENS" --rate "$rate" --duration "$DURATION" \
    --seed "$SEED" "${pids[@]}" --json "$RESULTS/$name.json" --quiet > "$RESULTS/$name.txt" 2>&1 || true
  redis1=$(cpu_of_tree "$REDIS_PID"); pg1=$(cpu_of_tree "$PG_PID")
  printf '{"redisCpuSeconds": %s, "postgresCpuSeconds": %s, "rt": %s, "nodes": %s}\n' \
    "$(python3 -c "print(round($redis1 - $redis0, 3))")" "$(python3 -c "print(round($pg1 - $pg0, 3))")" \
    "$RT" "$count" > "$RESULTS/$name.infra.json"
  stop_nodes
  grep -E "^(outcome|deliveries|latency ms|same-node ms|cross-node ms) " "$RESULTS/$name.txt" | sed "s/^/  $name  /"
}

for rate in $RATES; do
  for n in $(seq 1 "$RUNS"); do
    run_one "$NODES" "$rate" "$n"
    if [ "$SINGLE" = 1 ]; then run_one 1 "$rate" "$n"; fi
  done
done

python3 loadtest/cluster/summarize-cluster.py "$RESULTS" | tee "$RESULTS/summary.txt"
