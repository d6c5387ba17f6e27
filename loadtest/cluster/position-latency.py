#!/usr/bin/python3
# Cross-node against same-node position delivery, in one run: a redis-server and two `cairn serve` nodes (A, B) on
# loopback, each with its own data directory seeded with the same accounts (alice = 1, bob = 2, friends) through
# the real ops. Bob watches from one connection on A (same node) and one on B (cross node: through Redis, privacy
# applied on A); each round alice sends one `pos` on A and the time from sending it to each of bob's connections
# reading that move is recorded, both paths for the same move. Prints p50/p90/p99 per path. Loopback only, bounded
# rounds, stops by itself.
#   usage: loadtest/cluster/position-latency.py [path/to/cairn] [rounds] [gap_ms]
# The helpers are those of presence-latency.py (which runs on import, so they are repeated here).
import asyncio, json, shutil, socket, subprocess, sys, tempfile, time
import websockets

CAIRN = sys.argv[1] if len(sys.argv) > 1 else ".build/release/cairn"
ROUNDS = int(sys.argv[2]) if len(sys.argv) > 2 else 1000
GAP = (int(sys.argv[3]) if len(sys.argv) > 3 else 10) / 1000


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_port(port, seconds=30):
    deadline = time.time() + seconds
    while time.time() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), 0.2).close()
            return
        except OSError:
            time.sleep(0.05)
    raise SystemExit(f"nothing listens on {port}")


class Client:
    def __init__(self, ws):
        self.ws, self.next_id, self.backlog = ws, 0, []

    async def recv(self):
        # A frame may carry several JSON objects, one per line.
        while not self.backlog:
            self.backlog = [json.loads(line) for line in (await self.ws.recv()).split("\n") if line.strip()]
        return self.backlog.pop(0)

    @classmethod
    async def open(cls, port):
        return cls(await websockets.connect(f"ws://127.0.0.1:{port}/ws", subprotocols=["cairn.v1"]))

    async def request(self, op, **fields):
        self.next_id += 1
        await self.ws.send(json.dumps({"id": self.next_id, "op": op, **fields}))
        while True:
            message = await self.recv()
            if message.get("id") == self.next_id:
                if not message.get("ok"):
                    raise SystemExit(f"{op}: {message}")
                return message

    async def position(self, lat):
        """Waits for alice's move to `lat`; returns when it was read."""
        while True:
            message = await self.recv()
            if message.get("ev") == "pos" and message.get("user") == 1 and message.get("lat") == lat:
                return time.perf_counter()


async def seed(port):
    alice, bob = await Client.open(port), await Client.open(port)
    a = await alice.request("register", username="alice", password="password1")
    b = await bob.request("register", username="bob", password="password1")
    assert a["user"]["id"] == 1 and b["user"]["id"] == 2
    await alice.request("friend.request", user=2)
    await bob.request("friend.accept", user=1)
    await alice.ws.close()
    await bob.ws.close()


def quantiles(samples):
    s = sorted(samples)
    pick = lambda q: s[min(len(s) - 1, int(q * len(s)))] * 1000
    return f"n={len(s)} p50={pick(0.5):.3f} ms p90={pick(0.9):.3f} ms p99={pick(0.99):.3f} ms max={s[-1]*1000:.3f} ms"


async def main():
    work = tempfile.mkdtemp(prefix="cairn-cluster-bench-")
    redis_port, port_a, port_b = free_port(), free_port(), free_port()
    procs = [subprocess.Popen(["redis-server", "--port", str(redis_port), "--bind", "127.0.0.1", "--save", "",
                               "--appendonly", "no", "--loglevel", "warning"], stdout=subprocess.DEVNULL)]
    try:
        wait_port(redis_port)
        for name, port in (("a", port_a), ("b", port_b)):
            procs.append(subprocess.Popen(
                [CAIRN, "serve", "--host", "127.0.0.1", "--port", str(port), "--data", f"{work}/{name}",
                 "--scrypt-cost", "10", "--signups-per-address", "0", "--redis-url", f"redis://127.0.0.1:{redis_port}",
                 "--cluster-node", name, "--cluster-presence-refresh", "1", "--log-level", "warning"],
                stdout=subprocess.DEVNULL))
            wait_port(port)
        await seed(port_a)
        await seed(port_b)
        watchers = {"same node": await Client.open(port_a), "cross node": await Client.open(port_b)}
        for w in watchers.values():
            await w.request("login", username="bob", password="password1")
            await w.request("friends.watch")
        alice = await Client.open(port_a)
        await alice.request("login", username="alice", password="password1")
        await asyncio.sleep(2.5)  # node A's presence mirror lists bob on B (refresh every second)
        samples = {k: [] for k in watchers}
        for i in range(ROUNDS + 20):
            lat = round(10 + i * 0.0001, 6)
            waits = [asyncio.ensure_future(w.position(lat)) for w in watchers.values()]
            started = time.perf_counter()
            await alice.request("pos", lat=lat, lon=20.0)
            done = await asyncio.wait_for(asyncio.gather(*waits), 10)
            if i >= 20:  # warm-up rounds not counted
                for path, at in zip(watchers, done):
                    samples[path].append(at - started)
            await asyncio.sleep(GAP)
        print(f"positions, alice's pos on A to bob's event ({ROUNDS} moves, both paths for each move):")
        for path, values in samples.items():
            print(f"  {path:10s} {quantiles(values)}")
    finally:
        for p in reversed(procs):
            p.terminate()
        for p in procs:
            p.wait(timeout=20)
        shutil.rmtree(work, ignore_errors=True)


asyncio.run(main())
