#!/usr/bin/env python3
"""What `storage.durable_positions` costs: the time from sending a `pos` to its answer, and how many answered `pos`
a second the hub takes, with the option off (answered at once, written by the next snapshot) and on (answered once
written), against a hub started here with a fresh data directory on the disk (not tmpfs: the cost is the sync).

Two loads per setting: paced, USERS connections each sending one `pos` a second with an id for SECONDS (latency
percentiles), and saturating, the same connections each sending its next `pos` as soon as the last is answered
(answers per second). Needs websockets from PyPI. Usage:

    python3 loadtest/positions/durable-acks.py [--bin .build/release/cairn] [--users 200] [--seconds 20]
"""
import argparse
import asyncio
import json
import os
import random
import shutil
import signal
import socket
import subprocess
import tempfile
import time
import urllib.request

import websockets


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start(binary, durable):
    data = tempfile.mkdtemp(prefix="cairn-durable-", dir="/var/tmp")
    port = free_port()
    hub = subprocess.Popen([binary, "serve", "--port", str(port), "--data", data, "--log-level", "warning",
                            "--durable-positions", "true" if durable else "false",
                            "--signups-per-address", "0", "--messages-per-second", "0"],
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    for _ in range(300):
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=1).read()
            return hub, port, data
        except OSError:
            time.sleep(0.1)
    raise SystemExit("the hub did not start")


async def user(port, index, seconds, paced, latencies, counts):
    async with websockets.connect(f"ws://127.0.0.1:{port}/ws", max_queue=None) as ws:
        await ws.send(json.dumps({"id": 1, "op": "guest"}))
        json.loads(await ws.recv())
        lat, lon = 48.0 + random.random(), 2.0 + random.random()
        next_id, end = 2, time.monotonic() + seconds
        if paced:
            await asyncio.sleep(random.random())
        while time.monotonic() < end:
            started = time.monotonic()
            lat += 0.00001
            await ws.send(json.dumps({"id": next_id, "op": "pos", "lat": round(lat, 6), "lon": round(lon, 6)}))
            while True:
                reply = json.loads((await ws.recv()).split("\n")[0])
                if reply.get("id") == next_id:
                    break
            latencies.append((time.monotonic() - started) * 1000)
            counts[0] += 1
            next_id += 1
            if paced:
                await asyncio.sleep(max(0, 1 - (time.monotonic() - started)))


async def load(port, users, seconds, paced):
    latencies, counts = [], [0]
    started = time.monotonic()
    await asyncio.gather(*(user(port, i, seconds, paced, latencies, counts) for i in range(users)))
    return latencies, counts[0] / (time.monotonic() - started)


def percentile(values, p):
    values = sorted(values)
    return values[min(len(values) - 1, int(len(values) * p / 100))]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--bin", default=".build/release/cairn")
    parser.add_argument("--users", type=int, default=200)
    parser.add_argument("--seconds", type=int, default=20)
    args = parser.parse_args()
    print(f"load average {os.getloadavg()[0]:.1f}; {args.users} connections, {args.seconds} s per load")
    for durable in (False, True):
        hub, port, data = start(args.bin, durable)
        try:
            for paced in (True, False):
                latencies, rate = asyncio.run(load(port, args.users, args.seconds, paced))
                print(f"durable={str(durable).lower():5} {'paced 1/s' if paced else 'saturating':10} "
                      f"answers/s {rate:8.0f}  ms p50 {percentile(latencies, 50):6.2f}  "
                      f"p90 {percentile(latencies, 90):6.2f}  p99 {percentile(latencies, 99):6.2f}  "
                      f"max {max(latencies):7.2f}  ({len(latencies)} answers)", flush=True)
        finally:
            hub.send_signal(signal.SIGINT)
            hub.wait(timeout=60)
            shutil.rmtree(data, ignore_errors=True)


if __name__ == "__main__":
    main()
