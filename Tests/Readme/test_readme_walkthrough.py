"""README.md's walk-through, replayed as written against a real hub, so the README cannot drift from the hub.

The README marks what it asks a reader to do by the info string of its fenced blocks:
  ```json alice      lines alice pastes into her WebSocket client (sent one by one; a line with an `id` waits
                     for its reply)
  ```text alice      lines alice's client prints: each `< {...}` must arrive, in this order; `…` stands for any
                     value, for the rest of a string, or (as `,…}` / `,…]` / `{…}`) for further members
  ```sh walkthrough  shell commands, run with bash from the directory the hub runs in (its `--data` relative to it),
                     whose `web/` is the repository's, `cairn` on the PATH, and TOKEN and KEY set to alice's token
                     and the tracker's key (`tracker.key`) as the replies gave them
and each line of a `json` block may use `<media id>`, replaced by the id the upload printed. The hub is started with
the flags of the README's `bash deploy/run.sh --auth-timeout …` line, and the clients connect as the README's
`python3 -m websockets ws://127.0.0.1:7681/ws` does (no subprotocol). Every request answered `"ok":false` must be
one a `text` block expects, and every request the walk-through's prose shows inline (but a template, with `…` in
it) must be in a block.

Run: python3 Tests/Readme/test_readme_walkthrough.py (needs `swift build`, curl, and websockets from PyPI; CAIRN_BIN
names the binary, else the debug build's).
"""
import json
import os
import re
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import unittest
from decimal import Decimal
import urllib.request
import warnings

from websockets.sync.client import connect

# websockets 17 would have its sync connections opened in `with` blocks; these live across the test on purpose.
warnings.filterwarnings("ignore", category=DeprecationWarning)

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
README = os.path.join(ROOT, "README.md")
WAIT = 15  # seconds any one reply or event may take; far above what it takes, bounded so a failure ends
ANY = "\u2026"  # …


def binary():
    if os.environ.get("CAIRN_BIN"):
        return os.path.abspath(os.environ["CAIRN_BIN"])
    path = subprocess.run(["swift", "build", "--show-bin-path"], cwd=ROOT, capture_output=True, text=True,
                          check=True).stdout.strip()
    return os.path.join(path, "cairn")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def blocks(text):
    """The README's fenced blocks with an info string of two words: [(kind, role, body, line number)]."""
    found = []
    for match in re.finditer(r"^```(\w+) (\w+)\n(.*?)^```$", text, re.M | re.S):
        found.append((match.group(1), match.group(2), match.group(3), text.count("\n", 0, match.start()) + 1))
    return found


def pattern(line):
    """An expected message, `…` and all, as a JSON value `matches` compares against."""
    text = line.replace(",\u2026}", ',"\u2026":0}').replace("{\u2026}", '{"\u2026":0}').replace(",\u2026]", ',"\u2026"]')
    text = re.sub(r":\u2026(?=[,}])", ':"\u2026"', text)
    return json.loads(text, parse_float=Decimal)


def matches(expected, actual):
    if expected == ANY:
        return True
    if isinstance(expected, str) and ANY in expected:
        parts = [re.escape(p) for p in expected.split(ANY)]
        return isinstance(actual, str) and re.fullmatch(".*".join(parts), actual, re.S) is not None
    if isinstance(expected, dict):
        if not isinstance(actual, dict):
            return False
        keys = set(expected) - {ANY}
        if ANY not in expected and keys != set(actual):
            return False
        return all(k in actual and matches(expected[k], actual[k]) for k in keys)
    if isinstance(expected, list):
        open_ended = bool(expected) and expected[-1] == ANY
        items = expected[:-1] if open_ended else expected
        if not isinstance(actual, list) or len(actual) < len(items) or (not open_ended and len(actual) != len(items)):
            return False
        return all(matches(e, a) for e, a in zip(items, actual))
    if isinstance(expected, Decimal):  # numbers as the hub writes them: 8 is not 8.0
        return isinstance(actual, Decimal) and str(expected) == str(actual)
    return type(expected) is type(actual) and expected == actual


class Client:
    """One reader's terminal: `python3 -m websockets ws://127.0.0.1:PORT/ws`."""

    def __init__(self, name, port):
        self.name = name
        self.ws = connect(f"ws://127.0.0.1:{port}/ws", open_timeout=10)
        self.received = []  # every message, in order of arrival
        self.texts = []  # and each as the hub wrote it
        self.cursor = 0  # the next one a `text` block may match
        self.refusals = {}  # id -> the ok:false reply, until a `text` block expects it

    def receive(self, deadline):
        remaining = deadline - time.time()
        if remaining <= 0:
            raise TimeoutError
        for line in self.ws.recv(timeout=remaining).split("\n"):
            message = json.loads(line, parse_float=Decimal)
            self.received.append(message)
            self.texts.append(line)
            if message.get("ok") is False:
                self.refusals[message.get("id")] = message

    def send(self, line):
        request = json.loads(line)
        self.ws.send(line)
        if "id" not in request:
            return None
        deadline = time.time() + WAIT
        while True:
            for message in reversed(self.received):
                if message.get("id") == request["id"] and "ok" in message and message.get("_line") is None:
                    message["_line"] = line
                    return message
            try:
                self.receive(deadline)
            except TimeoutError:
                raise AssertionError(f"{self.name}: no reply to {line}")

    def expect(self, line):
        wanted = pattern(line)
        deadline = time.time() + WAIT
        while True:
            for index in range(self.cursor, len(self.received)):
                message = {k: v for k, v in self.received[index].items() if k != "_line"}
                if matches(wanted, message):
                    self.cursor = index + 1
                    self.refusals.pop(message.get("id") if message.get("ok") is False else object(), None)
                    return message
            try:
                self.receive(deadline)
            except TimeoutError:
                raise AssertionError(f"{self.name} never saw {line}; after the last match it saw:\n"
                                     + "\n".join(self.texts[self.cursor:]))


class TimeLimitExceeded(Exception):
    """The test ran past TEST_LIMIT (its own type: the waits here catch TimeoutError)."""


TEST_LIMIT = 300  # seconds for the whole walk-through (it takes a few)


class ReadmeWalkthroughTest(unittest.TestCase):
    def setUp(self):
        # A hang fails the test by name: SIGALRM interrupts even a blocked read. Cleared after the clean-ups.
        def expire(signum, frame):
            raise TimeLimitExceeded(f"{self.id()} ran past its time limit of {TEST_LIMIT} s")
        signal.signal(signal.SIGALRM, expire)
        signal.alarm(TEST_LIMIT)
        self.addCleanup(signal.alarm, 0)
        with open(README, encoding="utf-8") as f:
            self.readme = f.read()
        launch = re.search(r"^bash deploy/run\.sh (--auth-timeout [^#\n]*?)\s*(#.*)?$", self.readme, re.M)
        self.assertIsNotNone(launch, "README.md: no `bash deploy/run.sh --auth-timeout …` line for the walk-through")
        self.place = tempfile.mkdtemp(prefix="cairn-readme-")
        os.symlink(os.path.join(ROOT, "web"), os.path.join(self.place, "web"))
        self.port = free_port()
        self.log = open(os.path.join(self.place, "hub.log"), "ab")
        flags = shlex.split(launch.group(1))  # its --data is relative to the place the commands run from
        self.hub = subprocess.Popen(
            [binary(), "serve", "--host", "127.0.0.1", "--port", str(self.port), *flags],
            cwd=self.place, stdout=self.log, stderr=self.log)
        deadline = time.time() + 60
        while True:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{self.port}/healthz", timeout=2) as reply:
                    if reply.status == 200:
                        break
            except OSError:
                if time.time() > deadline or self.hub.poll() is not None:
                    raise RuntimeError("the hub did not start; see " + self.log.name)
                time.sleep(0.2)

    def tearDown(self):
        self.hub.send_signal(signal.SIGINT)
        try:
            self.hub.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.hub.kill()
            self.hub.wait()
        self.log.close()
        shutil.rmtree(self.place, ignore_errors=True)

    def wait_for_log(self, text):
        """Until the hub's log holds `text` once more than it did (a reader's next paste comes later than that)."""
        path = os.path.join(self.place, "hub.log")
        seen = getattr(self, "seen_" + text.replace(" ", "_"), 0)
        deadline = time.time() + WAIT
        while True:
            with open(path, errors="replace") as f:
                count = f.read().count(text)
            if count > seen:
                setattr(self, "seen_" + text.replace(" ", "_"), count)
                return
            self.assertLess(time.time(), deadline, f"the hub never logged {text!r}")
            time.sleep(0.05)

    def test_the_walkthrough_works_as_written(self):
        found = blocks(self.readme)
        self.assertTrue(any(kind == "json" for kind, *_ in found), "README.md: no ```json <user> blocks")
        clients, values = {}, {}
        environment = dict(os.environ, PATH=os.path.dirname(binary()) + os.pathsep + os.environ["PATH"])
        for kind, role, body, line_number in found:
            where = f"README.md:{line_number} ({kind} {role})"
            if kind == "json":
                for line in body.splitlines():
                    if role not in clients:
                        clients[role] = Client(role, self.port)
                    if "<media id>" in line:
                        self.assertIn("media", values, f"{where}: `<media id>` before any upload printed one")
                        line = line.replace("<media id>", values["media"])
                    reply = clients[role].send(line)
                    if reply and reply.get("ok") and "token" in reply and role == "alice":
                        environment["TOKEN"] = reply["token"]
                    if reply and reply.get("ok") and "key" in reply.get("tracker", {}):
                        environment["KEY"] = reply["tracker"]["key"]
            elif kind == "text":
                self.assertIn(role, clients, f"{where}: {role} has sent nothing yet")
                for line in body.splitlines():
                    self.assertTrue(line.startswith("< "), f"{where}: {line!r} does not start with '< '")
                    clients[role].expect(line[2:])
            elif kind == "sh" and role == "walkthrough":
                script = body.replace("127.0.0.1:7681", f"127.0.0.1:{self.port}")
                run = subprocess.run(["bash", "-euo", "pipefail", "-c", script], cwd=self.place, env=environment,
                                     capture_output=True, text=True, timeout=120)
                print(f"{where}:\n{run.stdout}{run.stderr}", file=sys.stderr)
                self.assertEqual(run.returncode, 0, f"{where} failed:\n{run.stdout}{run.stderr}")
                if "asked the running hub" in run.stderr:
                    self.wait_for_log("places reloaded")  # the hub reads places again on the loop, just after
                media = re.search(r'\{"media":"([0-9a-f]{64})"\}', run.stdout)
                if media:
                    values["media"] = media.group(1)
        for client in clients.values():
            self.assertEqual(client.refusals, {}, f"{client.name}: refusals the README does not show")

        # Every request the walk-through's prose shows inline is one of the blocks' lines, so none goes untried.
        tried = {json.dumps(json.loads(line), sort_keys=True) for kind, _, body, _ in found if kind == "json"
                 for line in body.replace("<media id>", "M").splitlines()}
        section = self.readme.split("## Try it", 1)[1].split("\n## ", 1)[0]
        for span in re.findall(r"`(\{[^`]*\"op\":[^`]*\})`", section):
            try:
                request = json.loads(span.replace("<media id>", "M"))
            except ValueError:
                continue  # a shape such as {"ev":"pos",…}, not a request
            if "id" in request and "\u2026" not in span:  # `…` marks a template, not a line to paste
                self.assertIn(json.dumps(request, sort_keys=True), tried, f"README.md: {span} is in no block")


if __name__ == "__main__":
    unittest.main(verbosity=2)
