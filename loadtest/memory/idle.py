#!/usr/bin/env python3
"""Memory per connected user: opens idle, authenticated WebSocket connections to a running hub in steps and reads the
hub's resident set (VmRSS, /proc/PID/status) after each step has settled. Each connection upgrades on
/ws?token=... (subprotocol cairn.v1, tokens from `cairn seed --out`), sends `friends.watch` (unless --no-watch) and
waits for its reply, then stays open and silent. Plain python3, no libraries: the handshake and the one masked frame
are written by hand, replies are only looked for, never parsed in full.

Usage: loadtest/memory/idle.py --pid PID --port PORT --tokens FILE [--steps 1000,5000] [--settle 2] [--no-watch]
       [--hold SECONDS]
Prints one line per step and a JSON line last.
"""
import argparse
import base64
import json
import os
import resource
import selectors
import socket
import sys
import time


def rss_kib(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise RuntimeError("no VmRSS")


def masked_text_frame(payload):
    mask = os.urandom(4)
    body = bytes(b ^ mask[i % 4] for i, b in enumerate(payload))
    assert len(payload) < 126
    return bytes([0x81, 0x80 | len(payload)]) + mask + body


class Connection:
    def __init__(self, port, token, watch):
        self.sock = socket.create_connection(("127.0.0.1", port))
        self.sock.setblocking(False)
        key = base64.b64encode(os.urandom(16)).decode()
        request = (f"GET /ws?token={token} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nUpgrade: websocket\r\n"
                   f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n"
                   f"Sec-WebSocket-Protocol: cairn.v1\r\n\r\n").encode()
        self.pending = request
        self.watch = watch
        self.buffer = b""
        self.upgraded = False
        self.ready = False
        self.failed = None

    def on_readable(self):
        try:
            data = self.sock.recv(65536)
        except BlockingIOError:
            return
        if not data:
            self.failed = "closed by the hub"
            return
        self.buffer += data
        if not self.upgraded and b"\r\n\r\n" in self.buffer:
            head, _, rest = self.buffer.partition(b"\r\n\r\n")
            if not head.startswith(b"HTTP/1.1 101"):
                self.failed = head.split(b"\r\n")[0].decode(errors="replace")
                return
            self.upgraded = True
            self.buffer = rest
            if self.watch:
                self.pending += masked_text_frame(b'{"id":1,"op":"friends.watch"}')
            else:
                self.ready = True
        if self.upgraded and not self.ready and b'"id":1' in self.buffer:
            if b'"ok":true' not in self.buffer:
                self.failed = "friends.watch refused: " + self.buffer.decode(errors="replace")[:200]
                return
            self.ready = True
        if self.ready:
            self.buffer = b""

    def flush(self):
        while self.pending:
            try:
                n = self.sock.send(self.pending)
            except BlockingIOError:
                return
            self.pending = self.pending[n:]


def open_step(connections, port, tokens, target, watch, timeout):
    sel = selectors.DefaultSelector()
    start = len(connections)
    for i in range(start, target):
        c = Connection(port, tokens[i], watch)
        connections.append(c)
        c.flush()
        sel.register(c.sock, selectors.EVENT_READ, c)
        if i % 200 == 199:  # keep the accept backlog short
            poll(sel, 0.05)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        waiting = [c for c in connections[start:] if not c.ready and not c.failed]
        if not waiting:
            break
        poll(sel, 0.1)
    sel.close()
    failed = [c.failed for c in connections[start:] if c.failed]
    if failed:
        raise SystemExit(f"idle.py: {len(failed)} connection(s) failed, first: {failed[0]}")
    not_ready = sum(1 for c in connections[start:] if not c.ready)
    if not_ready:
        raise SystemExit(f"idle.py: {not_ready} connection(s) not ready after {timeout} s")


def poll(sel, timeout):
    for key, _ in sel.select(timeout):
        c = key.data
        c.on_readable()
        c.flush()


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--pid", type=int, required=True)
    p.add_argument("--port", type=int, required=True)
    p.add_argument("--tokens", required=True)
    p.add_argument("--steps", default="1000,5000")
    p.add_argument("--settle", type=float, default=2)
    p.add_argument("--timeout", type=float, default=60)
    p.add_argument("--no-watch", action="store_true")
    p.add_argument("--hold", type=float, default=0, help="seconds to keep the connections open at the end")
    a = p.parse_args()
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    tokens = [u["token"] for u in json.load(open(a.tokens))["users"]]
    steps = [int(s) for s in a.steps.split(",")]
    if steps[-1] > len(tokens):
        raise SystemExit(f"idle.py: {steps[-1]} connections need as many users, the file has {len(tokens)}")
    time.sleep(a.settle)
    baseline = rss_kib(a.pid)
    print(f"{0:>7} connections: VmRSS {baseline:>8} KiB")
    rows = [{"connections": 0, "rss_kib": baseline}]
    connections = []
    for target in steps:
        open_step(connections, a.port, tokens, target, not a.no_watch, a.timeout)
        time.sleep(a.settle)
        rss = rss_kib(a.pid)
        per = (rss - baseline) * 1024 / target
        print(f"{target:>7} connections: VmRSS {rss:>8} KiB, {per:8.0f} bytes per connection over the baseline")
        rows.append({"connections": target, "rss_kib": rss, "bytes_per_connection": round(per)})
    print(json.dumps({"watch": not a.no_watch, "steps": rows}), flush=True)
    time.sleep(a.hold)
    for c in connections:
        c.sock.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
