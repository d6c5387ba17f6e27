"""What the browser tests share: a real hub started from the build (`Hub`), users played over the WebSocket
(`Peer`), and `BrowserTest`, a unittest case with headless Chromium (Debian's chromium and chromium-driver, driven by
Selenium) pointed at the hub, its geolocation granted through the DevTools protocol, and helpers that find things by
the page contract (labels, button names, data attributes). Screenshots go to CAIRN_SCREENSHOTS, or a temporary
folder the test prints.
"""
import json
import os
import shutil
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import time
import unittest
import urllib.request
import warnings
import zlib

from selenium import webdriver
from selenium.common.exceptions import NoSuchElementException, StaleElementReferenceException, TimeoutException
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import Select, WebDriverWait
from websockets.sync.client import connect

# websockets 17 would have its sync connections opened in `with` blocks; these live across the test on purpose.
warnings.filterwarnings("ignore", category=DeprecationWarning)

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
WAIT = 15  # seconds any one thing may take to show; far above what it takes, bounded so a failure ends
TEST_LIMIT = 300  # seconds one whole test may take, hub and browser included (one takes about 10)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def binary():
    if os.environ.get("CAIRN_BIN"):
        return os.environ["CAIRN_BIN"]
    path = subprocess.run(["swift", "build", "--show-bin-path"], cwd=ROOT, capture_output=True, text=True,
                          check=True).stdout.strip()
    return os.path.join(path, "cairn")


def png(path, rgb=(200, 80, 20), size=8):
    """Writes a small real PNG (one colour) for the upload fields."""
    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)
    rows = b"".join(b"\x00" + bytes(rgb) * size for _ in range(size))
    with open(path, "wb") as out:
        out.write(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", size, size, 8, 2, 0, 0, 0))
                  + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b""))
    return path


class Hub:
    """`cairn serve` on a free loopback port with its own data directory; can be stopped and started again."""

    def __init__(self, flags=()):
        self.flags = list(flags)
        self.port = free_port()
        self.data = tempfile.mkdtemp(prefix="cairn-web-")
        self.log = open(os.path.join(self.data, "hub.log"), "ab")
        self.process = None

    def start(self):
        self.process = subprocess.Popen(
            [binary(), "serve", "--host", "127.0.0.1", "--port", str(self.port), "--data", self.data,
             # A cheap password hash: a register or sign-in on a busy machine must not run into the test's waits.
             "--scrypt-cost", "10", *self.flags], cwd=ROOT, stdout=self.log, stderr=self.log)
        deadline = time.time() + 60
        while time.time() < deadline:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{self.port}/healthz", timeout=2) as reply:
                    if reply.status == 200:
                        return
            except OSError:
                time.sleep(0.2)
        raise RuntimeError("the hub did not start; see " + self.log.name)

    def stop(self):
        if self.process and self.process.poll() is None:
            self.process.send_signal(signal.SIGINT)
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()

    def remove(self):
        self.stop()
        self.log.close()
        shutil.rmtree(self.data, ignore_errors=True)


class Peer:
    """A user played over the WebSocket (the other side of the friendship)."""

    def __init__(self, hub, username, name):
        self.hub = hub
        self.ws = connect(f"ws://127.0.0.1:{hub.port}/ws", subprotocols=["cairn.v1"], open_timeout=10)
        self.next_id = 0
        reply = self.request("register", username=username, password="password1", name=name)
        self.id = reply["user"]["id"]
        self.token = reply["token"]

    def request(self, op, **fields):
        self.next_id += 1
        wanted = self.next_id
        self.ws.send(json.dumps({"id": wanted, "op": op, **fields}))
        deadline = time.time() + WAIT
        while time.time() < deadline:
            for line in self.ws.recv(timeout=WAIT).split("\n"):
                message = json.loads(line)
                if message.get("id") == wanted:
                    if not message["ok"]:
                        raise AssertionError(f"{op}: {message['error']}")
                    return message
        raise AssertionError(f"no reply to {op}")

    def upload(self, path, content_type="image/png"):
        """Uploads a file to /v1/media with this user's token; returns the media id."""
        with open(path, "rb") as source:
            body = source.read()
        request = urllib.request.Request(f"http://127.0.0.1:{self.hub.port}/v1/media", data=body, method="POST",
                                         headers={"Authorization": f"Bearer {self.token}",
                                                  "Content-Type": content_type})
        with urllib.request.urlopen(request, timeout=WAIT) as reply:
            return json.loads(reply.read())["media"]

    def reconnect(self):
        self.ws = connect(f"ws://127.0.0.1:{self.hub.port}/ws", subprotocols=["cairn.v1"], open_timeout=10)
        self.request("auth", token=self.token)

    def close(self):
        self.ws.close()


class TimeLimitExceeded(Exception):
    """A test ran past its time limit (its own type, so no `except TimeoutError` on the way takes it for a wait's
    timeout)."""


def limit_time(test, seconds=TEST_LIMIT):
    """Fails `test`, by name, once it has run `seconds`: SIGALRM interrupts even a blocked wait (a socket read, a
    driver call), so a hang ends the test instead of the run. Cleared when the test's clean-ups have run."""
    def expire(signum, frame):
        raise TimeLimitExceeded(f"{test.id()} ran past its time limit of {seconds} s")
    signal.signal(signal.SIGALRM, expire)
    signal.alarm(seconds)
    test.addCleanup(signal.alarm, 0)


class BrowserTest(unittest.TestCase):
    """A hub and a browser for each test; `prepare_hub(data)` runs before the hub starts (import places, say), and
    `hub_flags` are added to its command line."""

    hub_flags = ()

    def prepare_hub(self, data):
        pass

    def setUp(self):
        limit_time(self)
        self.hub = Hub(self.hub_flags)
        self.prepare_hub(self.hub.data)
        self.hub.start()
        self.addCleanup(self.hub.remove)
        self.origin = f"http://127.0.0.1:{self.hub.port}"
        self.shots = os.environ.get("CAIRN_SCREENSHOTS") or tempfile.mkdtemp(prefix="cairn-screens-")
        os.makedirs(self.shots, exist_ok=True)
        print(f"screenshots: {self.shots}", file=sys.stderr)
        options = webdriver.ChromeOptions()
        options.binary_location = "/usr/bin/chromium"
        for flag in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--window-size=1280,900"):
            options.add_argument(flag)
        options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
        self.driver = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)
        self.addCleanup(self.driver.quit)
        self.driver.execute_cdp_cmd("Browser.grantPermissions", {"origin": self.origin, "permissions": ["geolocation"]})
        self.driver.execute_cdp_cmd(
            "Emulation.setGeolocationOverride", {"latitude": 48.8584, "longitude": 2.2945, "accuracy": 30})

    def wait(self, condition, what):
        try:
            return WebDriverWait(self.driver, WAIT, ignored_exceptions=[StaleElementReferenceException]).until(
                lambda d: condition(d))
        except TimeoutException:
            self.shot("failure")
            raise AssertionError(f"timed out waiting for {what}")

    def shot(self, name):
        self.driver.save_screenshot(os.path.join(self.shots, f"{name}.png"))

    def field(self, label):
        """The input a label starting with `label` names: the one shown, where hidden tabs hold others so named."""
        fields = [self.driver.find_element(By.ID, found.get_attribute("for")) for found in self.driver.find_elements(
            By.XPATH, f"//label[starts-with(normalize-space(.), '{label}')][@for]")]
        shown = [field for field in fields if field.is_displayed()]
        if not (shown or fields):
            raise NoSuchElementException(f"no field labelled {label!r}")
        return (shown or fields)[0]

    def click(self, by, selector, what):
        """Clicks an element found afresh until the click lands: a live list may redraw it between finding and
        clicking (a tracker's report arriving redraws its item's row)."""
        def attempt(driver):
            driver.find_element(by, selector).click()
            return True
        self.wait(attempt, what)

    def button(self, name):
        return self.driver.find_element(By.XPATH, f"//button[normalize-space(.)='{name}']")

    def marker(self, user):
        found = self.driver.find_elements(By.CSS_SELECTOR, f"#map [data-user='{user}']")
        return found[0] if found else None

    def connection(self):
        return self.driver.find_element(By.CSS_SELECTOR, "[data-connection]").get_attribute("data-connection")

    def sign_in(self, username):
        self.driver.get(self.origin + "/")
        self.field("Username").send_keys(username)
        self.field("Password").send_keys("password1")
        # Clicked twice at once (an impatient user): one sign-in, not two that undo each other.
        self.driver.execute_script("arguments[0].click(); arguments[0].click();", self.button("Sign in"))
        self.wait(lambda d: self.connection() == "connected" and d.find_element(By.ID, "map").is_displayed(),
                  "the map after signing in")

    def befriend(self, alice, bob):
        bob.request("friend.request", user=alice.id)
        alice.request("friend.accept", user=bob.id)

    def assert_clean(self):
        """Nothing left the hub's origin, and the console stayed clean (the only errors allowed are the browser's own
        reports of the WebSocket failing while the hub was away)."""
        resources = self.driver.execute_script(
            "return performance.getEntriesByType('resource').map(e => e.name)")
        foreign = [r for r in resources if not r.startswith(self.origin) and not r.startswith("ws://127.0.0.1")]
        self.assertEqual(foreign, [])
        errors = [e for e in self.driver.get_log("browser") if e["level"] == "SEVERE"
                  and "WebSocket connection to" not in e["message"]]
        self.assertEqual(errors, [])

    def tab(self, name):
        """Opens one of the panel's tabs by its name."""
        self.driver.find_element(By.XPATH, f"//*[@role='tab'][starts-with(normalize-space(.), '{name}')]").click()
