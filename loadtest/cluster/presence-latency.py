#!/usr/bin/python3
# Cross-node against same-node presence, in one run: a redis-server and two `cairn serve` nodes (A, B) on loopback,
# each with its own data directory seeded with the same accounts (alice = 1, bob = 2, friends) through the real ops.
# Each round alice logs in on A while bob watches from A (same node) or from B (cross node, alternating), and the
# time from sending alice's login to bob reading her `presence` event is recorded; alice then closes and bob sees
# her go offline before the next round. Prints p50/p90/p99 per path. Loopback only, bounded rounds, stops by itself.
#   usage: loadtest/cluster/presence-latency.py [path/to/cairn] [rounds]
import asyncio, json, os, shutil, socket, subprocess, sys, tempfile, time
import websockets

CAIRN = sys.argv[1] if len(sys.argv) > 1 else ".build/release/cairn"
ROUNDS = int(sys.argv[2]) if len(sys.argv) > 2 else 200


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
        self.ws, self.next_id, self.events, self.backlog = ws, 0, [], []

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
            self.events.append(message)

    async def event(self, name, **match):
        for i, e in enumerate(self.events):
            if e.get("ev") == name and all(e.get(k) == v for k, v in match.items()):
                return self.events.pop(i)
        while True:
            message = await self.recv()
            if message.get("ev") == name and all(message.get(k) == v for k, v in match.items()):
                return message


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
    return f"n={len(s)} p50={pick(0.5):.2f} ms p90={pick(0.9):.2f} ms p99={pick(0.99):.2f} ms max={s[-1]*1000:.2f} ms"


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
                 "--cluster-node", name, "--log-level", "warning"], stdout=subprocess.DEVNULL))
            wait_port(port)
        await seed(port_a)
        await seed(port_b)
        watchers = {"same node": await Client.open(port_a), "cross node": await Client.open(port_b)}
        for w in watchers.values():
            await w.request("login", username="bob", password="password1")
        samples = {k: [] for k in watchers}
        for i in range(ROUNDS):
            path = "same node" if i % 2 == 0 else "cross node"
            watcher = watchers[path]
            alice = await Client.open(port_a)
            alice.next_id += 1
            started = time.perf_counter()
            await alice.ws.send(json.dumps({"id": alice.next_id, "op": "login", "username": "alice",
                                            "password": "password1"}))
            await watcher.event("presence", user=1, online=True)
            samples[path].append(time.perf_counter() - started)
            await alice.ws.close()
            for w in watchers.values():  # both hear her go (the other node through Redis)
                await w.event("presence", user=1, online=False)
            for w in watchers.values():
                w.events = [e for e in w.events if e.get("ev") != "presence"]
        print(f"presence, login on A to the friend's event ({ROUNDS} rounds, alternating; each includes the login):")
        for path, values in samples.items():
            print(f"  {path:10s} {quantiles(values)}")
    finally:
        for p in reversed(procs):
            p.terminate()
        for p in procs:
            p.wait(timeout=20)
        shutil.rmtree(work, ignore_errors=True)


asyncio.run(main())
