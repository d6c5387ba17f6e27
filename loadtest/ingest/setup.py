#!/usr/bin/python3
# Sets up the ingest benchmark's trackers over the hub's WebSocket ops (docs/PROTOCOL.md, Trackers): one account,
# one bucket, N items, each paired with a tracker and activated. Writes one line per tracker, "device key item lat lon"
# (its starting point, random in central Paris, seeded), and the account's token beside it (OUT.token), which the
# watcher uses. Both generators start each tracker from that point, so a tracker does not jump kilometres between the
# throughput run and the latency run (the speed filter would rightly drop that). Not timed.
#
# The hub allows each connection 100 requests per second (`connections.messages_per_second`), so the work is spread
# over several connections of the same account, each waiting for its reply before its next request, and a
# `rate_limited` answer is retried after its `retry_after_ms`.
import argparse
import asyncio
import json
import random
import sys

import websockets


class Conn:
    def __init__(self, ws):
        self.ws = ws
        self.next_id = 0

    async def call(self, op, **fields):
        while True:
            self.next_id += 1
            rid = self.next_id
            await self.ws.send(json.dumps({"id": rid, "op": op, **fields}))
            while True:
                for line in (await self.ws.recv()).split("\n"):
                    if not line.strip():
                        continue
                    msg = json.loads(line)
                    if msg.get("id") != rid:
                        continue  # a push (bucket.changed) or an older reply
                    if msg.get("ok"):
                        return msg
                    err = msg.get("error", {})
                    if err.get("code") == "rate_limited":
                        await asyncio.sleep(err.get("retry_after_ms", 100) / 1000)
                        break
                    raise RuntimeError(f"{op} {fields}: {err}")
                else:
                    continue
                break


async def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--trackers", type=int, default=1000)
    ap.add_argument("--connections", type=int, default=8)
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    base = f"ws://127.0.0.1:{args.port}/ws"

    async with websockets.connect(base, subprotocols=["cairn.v1"], max_size=None) as ws:
        first = Conn(ws)
        reg = await first.call("register", username="ingestbench", password="ingest-bench-pass")
        token = reg["token"]
        bucket = (await first.call("bucket.create", name="ingest bench"))["bucket"]["id"]

    results = [None] * args.trackers

    async def worker(indices):
        async with websockets.connect(
            f"{base}?token={token}", subprotocols=["cairn.v1"], max_size=None
        ) as ws:
            conn = Conn(ws)
            for i in indices:
                item = (await conn.call("item.create", bucket=bucket, name=f"tag {i}"))["item"]["id"]
                device = f"bench-{i:06d}"
                tracker = (await conn.call("tracker.pair", item=item, device=device))["tracker"]
                await conn.call("tracker.activate", tracker=tracker["id"])
                results[i] = (device, tracker["key"], item)

    n = args.connections
    await asyncio.gather(*(worker(range(k, args.trackers, n)) for k in range(n)))
    rng = random.Random(1)
    with open(args.out, "w") as f:
        for device, key, item in results:
            lat = 48.85 + (rng.random() - 0.5) * 0.04
            lon = 2.35 + (rng.random() - 0.5) * 0.06
            f.write(f"{device} {key} {item} {lat:.7f} {lon:.7f}\n")
    with open(args.out + ".token", "w") as f:
        f.write(token + "\n")
    print(f"setup: {args.trackers} trackers in bucket {bucket}, written to {args.out}", file=sys.stderr)


asyncio.run(main())
