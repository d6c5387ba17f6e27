#!/usr/bin/env python3
# Cairn's places.nearest against Redis GEOSEARCH, side by side on this machine (docs/BENCHMARKS.md, "Places").
#
# The same places go into both: a release `cairn` imports them with `cairn places import` and serves them; a
# `redis-server` (Debian's) on loopback gets them with pipelined GEOADD. The same query centres are then asked of
# both from one client process (one core), pipelined: Redis `GEOSEARCH key FROMLONLAT lon lat BYRADIUS r m ASC
# COUNT 20 WITHDIST` in batches on one connection, Cairn `places.nearest {lat, lon, radius: r, limit: 20}` in
# batches of newline-separated requests in one WebSocket frame. Reported: queries per second seen by the client,
# server CPU time per query (utime + stime from /proc, which the client's own speed does not distort), and memory
# per place (Redis: INFO used_memory before and after loading; Cairn: resident set of the hub with the places minus
# that of the same hub with none). Redis cannot store latitudes beyond ±85.05°, so the generated places stay within
# ±85°.
#
# The client is `places-qps` (loadtest/places/places-qps.c, built here with cc), one thread pinned to one core
# (--client-cpu, default the last CPU): requests preformatted, Redis replies parsed fully, Cairn replies scanned
# for "ok" and counted by their places. `--client python` runs the old loops in this process instead (hiredis's
# reader, json.loads), where the client's own core is the bottleneck on Cairn's side.
#
#   python3 loadtest/places/redis-compare.py --cairn .build/release/cairn [--places N] [--queries N]
#       [--batch B] [--depth D,D...] [--radius M] [--csv FILE] [--client c|python]
#   (--client python needs hiredis: python3 -m venv /tmp/v && /tmp/v/bin/pip install hiredis, then /tmp/v/bin/python)
import argparse, base64, json, math, os, random, re, socket, struct, subprocess, sys, tempfile, time

try:
    import hiredis
except ImportError:  # only the Python client's timed loops need it
    hiredis = None


class RespReader:
    """RESP replies for the setup (GEOADD, INFO, the agreement sample) when hiredis is not installed."""

    def __init__(self):
        self.buffer = b""

    def feed(self, data):
        self.buffer += data

    def _value(self, at):
        end = self.buffer.find(b"\r\n", at)
        if end < 0:
            return None
        kind, line = self.buffer[at:at + 1], self.buffer[at + 1:end]
        at = end + 2
        if kind == b"+":
            return line, at
        if kind == b"-":
            raise RuntimeError(line.decode())
        if kind == b":":
            return int(line), at
        if kind == b"$":
            n = int(line)
            if n < 0:
                return None, at
            if len(self.buffer) < at + n + 2:
                return None
            return self.buffer[at:at + n], at + n + 2
        if kind == b"*":
            items = []
            for _ in range(int(line)):
                got = self._value(at)
                if got is None:
                    return None
                item, at = got
                items.append(item)
            return items, at
        raise RuntimeError(f"unexpected RESP type {kind!r}")

    def gets(self):
        got = self._value(0)
        if got is None:
            return False
        value, at = got
        self.buffer = self.buffer[at:]
        return value


def cpu_seconds(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def resident_bytes(pid):
    with open(f"/proc/{pid}/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


class WebSocket:
    """A minimal RFC 6455 client: text frames out (masked), text frames in."""

    def __init__(self, port):
        self.sock = socket.create_connection(("127.0.0.1", port))
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        key = base64.b64encode(os.urandom(16)).decode()
        self.sock.sendall(
            (f"GET /ws HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
             f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Protocol: cairn.v1\r\n\r\n"
             ).encode())
        self.buffer = b""
        while b"\r\n\r\n" not in self.buffer:
            self.buffer += self.sock.recv(65536)
        head, self.buffer = self.buffer.split(b"\r\n\r\n", 1)
        assert b" 101 " in head.split(b"\r\n")[0], head

    def send(self, text):
        payload = text.encode()
        mask = os.urandom(4)
        n = len(payload)
        header = bytes([0x81]) + (bytes([0x80 | n]) if n < 126 else
                                  bytes([0x80 | 126]) + struct.pack(">H", n) if n < 65536 else
                                  bytes([0x80 | 127]) + struct.pack(">Q", n))
        key = int.from_bytes((mask * (n // 4 + 1))[:n], "big")
        masked = (int.from_bytes(payload, "big") ^ key).to_bytes(n, "big")
        self.sock.sendall(header + mask + masked)

    def receive(self):
        while True:
            if len(self.buffer) >= 2:
                n = self.buffer[1] & 0x7F
                at = 2
                if n == 126:
                    n, at = struct.unpack(">H", self.buffer[2:4])[0], 4
                elif n == 127:
                    n, at = struct.unpack(">Q", self.buffer[2:10])[0], 10
                if len(self.buffer) >= at + n:
                    payload, self.buffer = self.buffer[at:at + n], self.buffer[at + n:]
                    return payload
            self.buffer += self.sock.recv(1 << 20)

    def request(self, obj):
        self.send(json.dumps(obj))
        while True:
            for line in self.receive().split(b"\n"):
                if line:
                    reply = json.loads(line)
                    if reply.get("id") == obj.get("id"):
                        return reply


class Redis:
    def __init__(self, port):
        self.sock = socket.create_connection(("127.0.0.1", port))
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.reader = hiredis.Reader() if hiredis else RespReader()

    @staticmethod
    def encode(*args):
        out = [b"*%d\r\n" % len(args)]
        for a in args:
            a = a if isinstance(a, bytes) else str(a).encode()
            out.append(b"$%d\r\n%s\r\n" % (len(a), a))
        return b"".join(out)

    def pipeline(self, commands):
        self.sock.sendall(b"".join(commands))
        replies = []
        while len(replies) < len(commands):
            self.reader.feed(self.sock.recv(1 << 20))
            while True:
                reply = self.reader.gets()
                if reply is False:
                    break
                replies.append(reply)
        return replies


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cairn", required=True)
    ap.add_argument("--places", type=int, default=1_000_000)
    ap.add_argument("--csv", help="places in `cairn places import` CSV instead of generated ones")
    ap.add_argument("--queries", type=int, default=50_000)
    ap.add_argument("--batch", type=int, default=100)
    ap.add_argument("--radius", type=float, default=100_000)
    ap.add_argument("--limit", type=int, default=20)
    ap.add_argument("--seed", type=int, default=13)
    ap.add_argument("--client", choices=("c", "python"), default="c",
                    help="c: places-qps, one native thread on one core; python: the loops of this script")
    ap.add_argument("--depth", default="1,4",
                    help="batches in flight, a comma-separated list: one C client run each (the C client only)")
    ap.add_argument("--client-cpu", type=int, default=os.cpu_count() - 1, help="the core of the C client")
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    if args.client == "python" and hiredis is None:
        sys.exit("redis-compare.py: --client python needs hiredis (pip install hiredis)")
    rng = random.Random(args.seed)
    work = tempfile.mkdtemp(prefix="cairn-redis-")
    csv_path = os.path.join(work, "places.csv")
    points = []
    if args.csv:
        import csv
        with open(args.csv, newline="", encoding="utf-8") as f:
            for row in csv.DictReader(f):
                lat, lon = float(row["lat"]), float(row["lon"])
                if abs(lat) <= 85:
                    points.append((lat, lon))
    else:
        for _ in range(args.places):
            z = rng.uniform(-math.sin(math.radians(85)), math.sin(math.radians(85)))
            points.append((math.degrees(math.asin(z)), rng.uniform(-180, 180)))
    with open(csv_path, "w") as f:
        f.write("id,lat,lon,name\n")
        for i, (lat, lon) in enumerate(points):
            f.write(f"{i + 1},{lat!r},{lon!r},p{i + 1}\n")
    n = len(points)

    data = os.path.join(work, "data")
    t = time.time()
    subprocess.run([args.cairn, "places", "import", csv_path, "--data", data, "--source", "bench"], check=True,
                   stdout=subprocess.DEVNULL)
    print(f"imported {n} places into cairn in {time.time() - t:.1f} s", file=sys.stderr)

    def serve(directory):
        proc = subprocess.Popen(
            [args.cairn, "serve", "--port", "0", "--data", directory, "--scrypt-cost", "10",
             "--signups-per-address", "0", "--log-level", "error",
             # one client pipelines far more than the per-connection rate limit lets a user send
             "--messages-per-second", "0"], stdout=subprocess.PIPE)
        port = int(re.search(rb":(\d+)", proc.stdout.readline()).group(1))
        return proc, port

    empty_proc, empty_port = serve(os.path.join(work, "empty"))
    ws = WebSocket(empty_port)
    ws.request({"id": 1, "op": "register", "username": "bench", "password": "password1"})
    empty_rss = resident_bytes(empty_proc.pid)
    empty_proc.terminate()
    empty_proc.wait()

    proc, port = serve(data)
    ws = WebSocket(port)
    ws.request({"id": 1, "op": "register", "username": "bench", "password": "password1"})
    cairn_rss = resident_bytes(proc.pid)

    redis_port = 16379 + rng.randrange(1000)
    redis = subprocess.Popen(["redis-server", "--port", str(redis_port), "--bind", "127.0.0.1", "--save", "",
                              "--appendonly", "no", "--loglevel", "warning"], stdout=subprocess.DEVNULL)
    for _ in range(100):
        try:
            r = Redis(redis_port)
            break
        except OSError:
            time.sleep(0.05)
    used = lambda: int(re.search(rb"used_memory:(\d+)", r.pipeline([Redis.encode("INFO", "memory")])[0]).group(1))
    before = used()
    for start in range(0, n, 10_000):
        chunk = points[start:start + 10_000]
        args_ = ["GEOADD", "places"]
        for i, (lat, lon) in enumerate(chunk):
            args_ += [repr(lon), repr(lat), str(start + i + 1)]
        r.pipeline([Redis.encode(*args_)])
    redis_bytes = (used() - before) / n

    centres = []
    for _ in range(args.queries):
        lat, lon = points[rng.randrange(n)]
        centres.append((max(-85.0, min(85.0, lat + rng.uniform(-0.3, 0.3))),
                        max(-180.0, min(180.0, lon + rng.uniform(-0.3, 0.3)))))

    def run_redis():
        got = 0
        cpu = cpu_seconds(redis.pid)
        t0 = time.perf_counter()
        for b in range(0, len(centres), args.batch):
            commands = [Redis.encode("GEOSEARCH", "places", "FROMLONLAT", repr(lon), repr(lat), "BYRADIUS",
                                     repr(args.radius), "m", "ASC", "COUNT", args.limit, "WITHDIST")
                        for lat, lon in centres[b:b + args.batch]]
            for reply in r.pipeline(commands):
                got += len(reply)
        return len(centres) / (time.perf_counter() - t0), (cpu_seconds(redis.pid) - cpu) / len(centres), got

    def run_cairn():
        got = 0
        cpu = cpu_seconds(proc.pid)
        t0 = time.perf_counter()
        next_id = 10
        for b in range(0, len(centres), args.batch):
            lines = []
            for lat, lon in centres[b:b + args.batch]:
                next_id += 1
                lines.append(f'{{"id":{next_id},"op":"places.nearest","lat":{lat!r},"lon":{lon!r},'
                             f'"radius":{args.radius!r},"limit":{args.limit}}}')
            ws.send("\n".join(lines))
            want = len(lines)
            while want:
                for line in ws.receive().split(b"\n"):
                    if line:
                        reply = json.loads(line)
                        assert reply.get("ok"), reply
                        got += len(reply["places"])
                        want -= 1
        return len(centres) / (time.perf_counter() - t0), (cpu_seconds(proc.pid) - cpu) / len(centres), got

    # Agreement on a sample: the same ids (Redis measures on geohash-quantised points with its own Earth radius,
    # so an order can differ at near-ties; the sets are compared).
    same = 0
    sample = centres[:200]
    for i, (lat, lon) in enumerate(sample):
        rr = r.pipeline([Redis.encode("GEOSEARCH", "places", "FROMLONLAT", repr(lon), repr(lat), "BYRADIUS",
                                      repr(args.radius), "m", "ASC", "COUNT", args.limit)])[0]
        cr = ws.request({"id": 5 + i, "op": "places.nearest", "lat": lat, "lon": lon, "radius": args.radius,
                         "limit": args.limit})
        same += sorted(int(x) for x in rr) == sorted(int(p["name"][1:]) for p in cr["places"])

    median = lambda xs: sorted(xs)[len(xs) // 2]
    runs = []  # (label, summary)
    if args.client == "python":
        results = {"redis": [], "cairn": []}
        for _ in range(args.rounds):  # alternate, so both see the same machine
            results["redis"].append(run_redis())
            results["cairn"].append(run_cairn())
        summary = {}
        for name in ("redis", "cairn"):
            rounds = results[name]
            summary[name] = {"qps": median([x[0] for x in rounds]),
                             "server_cpu_per_query": median([x[1] for x in rounds]),
                             "results": rounds[0][2], "rounds_qps": [x[0] for x in rounds], "client_cpu": None}
        runs.append(("client python", summary))
    else:
        binary = os.path.join(work, "places-qps")
        subprocess.run(["cc", "-O2", "-Wall", "-o", binary, os.path.join(os.path.dirname(__file__), "places-qps.c")],
                       check=True)
        centres_path = os.path.join(work, "centres.txt")
        with open(centres_path, "w") as f:
            for lat, lon in centres:
                f.write(f"{lat!r} {lon!r}\n")
        for depth in [int(d) for d in args.depth.split(",")]:
            out = subprocess.run(
                [binary, "--centres", centres_path, "--redis", str(redis_port), "--redis-pid", str(redis.pid),
                 "--cairn", str(port), "--cairn-pid", str(proc.pid), "--username", "bench", "--password", "password1",
                 "--batch", str(args.batch), "--depth", str(depth), "--radius", repr(args.radius),
                 "--limit", str(args.limit), "--rounds", str(args.rounds), "--cpu", str(args.client_cpu)],
                check=True, stdout=subprocess.PIPE, text=True).stdout
            lines = out.strip().split("\n")
            print("\n".join(lines[:-1]), file=sys.stderr)
            runs.append((f"depth {depth}, client places-qps on cpu {args.client_cpu}", json.loads(lines[-1])))
    for label, summary in runs:
        print(f"places: {n}, queries: {len(centres)} per round, batch {args.batch}, {label}, "
              f"radius {args.radius:.0f} m, limit {args.limit}")
        for name in ("redis", "cairn"):
            x = summary[name]
            own = f"   client CPU {x['client_cpu'] * 100:.0f}%" if x.get("client_cpu") is not None else ""
            print(f"{name:6} {x['qps']:10.0f} queries/s (client)   {x['server_cpu_per_query'] * 1e6:7.2f} µs server "
                  f"CPU/query{own}   results {x['results']}   rounds: "
                  + ", ".join(f"{q:.0f}" for q in x["rounds_qps"]))
        cq = summary["cairn"]["qps"] / summary["redis"]["qps"]
        cc = summary["redis"]["server_cpu_per_query"] / summary["cairn"]["server_cpu_per_query"]
        print(f"ratio cairn/redis: {cq:.2f}× queries/s, {cc:.2f}× less server CPU per query")
    print(f"memory per place: redis {redis_bytes:.0f} B (used_memory), "
          f"cairn {(cairn_rss - empty_rss) / n:.0f} B (resident set over an empty hub)")
    print(f"same result sets on {same}/{len(sample)} sampled queries")
    redis.terminate()
    proc.terminate()
    proc.wait()
    redis.wait()
    subprocess.run(["rm", "-rf", work])


if __name__ == "__main__":
    main()
