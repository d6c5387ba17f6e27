"""The web app in a real browser against a real hub: headless Chromium (Debian's chromium and chromium-driver)
driven by Selenium, the hub started from the build, and a second user (bob) played over the WebSocket.

What it proves, through the page contract (labelled inputs, named buttons, role=alert, #map, one element per visible
friend with data-user/data-lat/data-lon/data-level/data-online, data-connection, "Share with <name>"):
signing in; a friend's move appears and updates live; approximate is drawn as approximate, hidden leaves no element,
offline is shown; a reload stays signed in; the hub restarted under the page is reconnected to by itself; a
refusal is shown in the alert; no request leaves the hub's origin; no console errors. Screenshots of the main views
go to a folder the test prints (CAIRN_SCREENSHOTS, or a temporary one).

Run: python3 Tests/Web/test_friend_map.py (needs `swift build`, chromium, chromium-driver, selenium==4.51.0 and
websockets from PyPI).
"""
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import unittest
import urllib.request
import warnings

from selenium import webdriver
from selenium.common.exceptions import StaleElementReferenceException, TimeoutException
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import Select, WebDriverWait
from websockets.sync.client import connect

# websockets 17 would have its sync connections opened in `with` blocks; these live across the test on purpose.
warnings.filterwarnings("ignore", category=DeprecationWarning)

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
WAIT = 15  # seconds any one thing may take to show; far above what it takes, bounded so a failure ends


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


class Hub:
    """`cairn serve` on a free loopback port with its own data directory; can be stopped and started again."""

    def __init__(self):
        self.port = free_port()
        self.data = tempfile.mkdtemp(prefix="cairn-web-")
        self.log = open(os.path.join(self.data, "hub.log"), "ab")
        self.process = None

    def start(self):
        self.process = subprocess.Popen(
            # scrypt at its cheapest (2^10): at the default cost (2^15, 32 MiB a hash) a register on a busy machine
            # could outlast the test's waits; the cost is not what this test is about.
            [binary(), "serve", "--host", "127.0.0.1", "--port", str(self.port), "--data", self.data,
             "--scrypt-cost", "10"],
            cwd=ROOT, stdout=self.log, stderr=self.log)
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

    def reconnect(self):
        self.ws = connect(f"ws://127.0.0.1:{self.hub.port}/ws", subprotocols=["cairn.v1"], open_timeout=10)
        self.request("auth", token=self.token)

    def close(self):
        self.ws.close()


class FriendMapTests(unittest.TestCase):
    def setUp(self):
        self.hub = Hub()
        # Three places of Paris, imported as an operator does before the hub starts.
        places = os.path.join(self.hub.data, "paris.csv")
        with open(places, "w", encoding="utf-8") as out:
            out.write("name,lat,lon,category\n"
                      "Eiffel Tower,48.8584,2.2945,monument\nLouvre,48.8606,2.3376,museum\n"
                      "Sacré-Cœur,48.8867,2.3431,church\n")
        subprocess.run([binary(), "places", "import", places, "--data", self.hub.data], cwd=ROOT, check=True,
                       capture_output=True)
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

    # Helpers

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
        for_id = self.driver.find_element(By.XPATH, f"//label[starts-with(normalize-space(.), '{label}')]") \
            .get_attribute("for")
        return self.driver.find_element(By.ID, for_id)

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

    # The test

    def test_friends_move_hide_go_offline_and_the_page_survives_reload_and_restart(self):
        alice = Peer(self.hub, "alice", "Alice")
        bob = Peer(self.hub, "bob", "Bob")
        carol = Peer(self.hub, "carol", "Carol")
        self.befriend(alice, bob)
        self.befriend(alice, carol)
        alice.close()
        bob.request("pos", lat=48.85, lon=2.35, acc=12)
        carol.request("pos", lat=48.87, lon=2.33, acc=40)

        # A refusal is shown, not swallowed.
        self.driver.get(self.origin + "/")
        self.shot("sign-in")
        self.field("Username").send_keys("alice")
        self.field("Password").send_keys("wrong password")
        self.button("Sign in").click()
        alert = self.wait(lambda d: d.find_element(By.CSS_SELECTOR, "[role=alert]"), "the alert")
        self.wait(lambda d: alert.is_displayed() and "Login failed" in alert.text, "the refusal in the alert")
        self.shot("sign-in-refused")

        self.sign_in("alice")
        self.wait(lambda d: self.marker(bob.id) and self.marker(carol.id), "both friends on the map")
        bob_marker = self.marker(bob.id)
        self.assertEqual(bob_marker.get_attribute("data-lat"), "48.85")
        self.assertEqual(bob_marker.get_attribute("data-lon"), "2.35")
        self.assertEqual(bob_marker.get_attribute("data-level"), "precise")
        self.assertEqual(bob_marker.get_attribute("data-online"), "true")
        self.assertIn("Bob", bob_marker.get_attribute("title") or bob_marker.get_attribute("aria-label"))
        self.shot("map")

        # A move appears live.
        bob.request("pos", lat=48.8606, lon=2.3376, acc=8)
        self.wait(lambda d: self.marker(bob.id).get_attribute("data-lat") == "48.8606", "bob's move")
        self.assertEqual(self.marker(bob.id).get_attribute("data-lon"), "2.3376")

        # Approximate: drawn as the cell the hub sent, marked approximate.
        bob.request("share.set", user=alice.id, level="approximate")
        self.wait(lambda d: self.marker(bob.id).get_attribute("data-level") == "approximate", "bob approximate")
        self.assertNotEqual(self.marker(bob.id).get_attribute("data-lat"), "48.8606")
        self.shot("approximate")

        # Hidden: no element at all; shown again when precise.
        bob.request("share.set", user=alice.id, level="hidden")
        self.wait(lambda d: self.marker(bob.id) is None, "bob hidden")
        self.assertIsNotNone(self.marker(carol.id))
        bob.request("share.set", user=alice.id, level="precise")
        bob.request("pos", lat=48.861, lon=2.338)
        self.wait(lambda d: self.marker(bob.id) and self.marker(bob.id).get_attribute("data-lat") == "48.861",
                  "bob shown again")

        # Offline: carol leaves; her last position stays, drawn as offline.
        carol.close()
        self.wait(lambda d: self.marker(carol.id).get_attribute("data-online") == "false", "carol offline")
        self.shot("offline")

        # Friends moving do not take the controls away: the focused control and a chosen duration stay.
        Select(self.driver.find_element(By.CSS_SELECTOR, "select[aria-label='How long, for Bob']")).select_by_value(
            "3600")
        level = self.driver.find_element(By.CSS_SELECTOR, "select[aria-label='Share with Bob']")
        self.driver.execute_script("arguments[0].focus()", level)
        bob.request("pos", lat=48.8612, lon=2.3382)
        self.wait(lambda d: self.marker(bob.id).get_attribute("data-lat") == "48.8612", "bob's next move")
        self.assertEqual(self.driver.execute_script("return document.activeElement.getAttribute('aria-label')"),
                         "Share with Bob")
        self.assertEqual(Select(self.driver.find_element(
            By.CSS_SELECTOR, "select[aria-label='How long, for Bob']")).first_selected_option.get_attribute("value"),
            "3600")

        # Places: the nearest to alice first (she stands at the Eiffel Tower), drawn on the map; found by name with
        # accents and case folded.
        self.button("Nearest places").click()
        self.wait(lambda d: len(d.find_elements(By.CSS_SELECTOR, ".place-list li[data-place]")) == 3, "three places")
        names = [e.text for e in self.driver.find_elements(By.CSS_SELECTOR, ".place-list .place-name")]
        self.assertEqual(names, ["Eiffel Tower", "Louvre", "Sacré-Cœur"])
        self.assertEqual(len(self.driver.find_elements(By.CSS_SELECTOR, "#map [data-place]")), 3)
        self.driver.execute_script("document.querySelector('.places').scrollIntoView()")
        self.shot("places")
        self.field("Place name").send_keys("sacre")
        self.button("Find").click()
        self.wait(lambda d: [e.text for e in d.find_elements(By.CSS_SELECTOR, ".place-list .place-name")]
                  == ["Sacré-Cœur"], "the place found by name")
        self.assertEqual(len(self.driver.find_elements(By.CSS_SELECTOR, "#map [data-place]")), 1)

        # Alice's own sharing control, by its label: bob now sees her approximately, for an hour.
        share = Select(level)
        share.select_by_value("approximate")
        self.wait(lambda d: bob.request("friends.watch")["positions"][0].get("approx") is True,
                  "bob sees alice approximately")

        # A reload stays signed in.
        self.driver.refresh()
        self.wait(lambda d: self.connection() == "connected" and self.marker(bob.id), "the map after a reload")
        self.assertEqual(self.marker(bob.id).get_attribute("data-lat"), "48.8612")
        # What alice shares is read back from the hub, not forgotten with the page.
        share = Select(self.driver.find_element(By.CSS_SELECTOR, "select[aria-label='Share with Bob']"))
        self.wait(lambda d: share.first_selected_option.get_attribute("value") == "approximate",
                  "the sharing control showing approximate after the reload")

        # The hub restarted under the page: the page reconnects by itself and hears the next move.
        self.hub.stop()
        self.wait(lambda d: self.connection() != "connected", "the page noticing the hub is gone")
        self.shot("reconnecting")
        self.hub.start()
        self.wait(lambda d: self.connection() == "connected", "the page reconnected")
        bob.reconnect()
        bob.request("pos", lat=48.8629, lon=2.3364)
        self.wait(lambda d: self.marker(bob.id).get_attribute("data-lat") == "48.8629", "a move after the restart")
        self.shot("after-restart")

        # Nothing left the hub's origin, and the console stayed clean.
        resources = self.driver.execute_script(
            "return performance.getEntriesByType('resource').map(e => e.name)")
        foreign = [r for r in resources if not r.startswith(self.origin) and not r.startswith("ws://127.0.0.1")]
        self.assertEqual(foreign, [])
        # The only errors allowed are the browser's own reports of the WebSocket failing while the hub was away.
        errors = [e for e in self.driver.get_log("browser") if e["level"] == "SEVERE"
                  and "WebSocket connection to" not in e["message"]]
        self.assertEqual(errors, [])

        # A phone's width.
        self.driver.set_window_size(412, 900)
        self.shot("phone")
        self.driver.set_window_size(1280, 900)

        # Signed out everywhere from another device: the page forgets the session and says so.
        other = connect(f"ws://127.0.0.1:{self.hub.port}/ws", subprotocols=["cairn.v1"], open_timeout=10)
        other.send(json.dumps({"id": 1, "op": "login", "username": "alice", "password": "password1"}))
        self.assertTrue(json.loads(other.recv(timeout=WAIT))["ok"])
        other.send(json.dumps({"id": 2, "op": "logout", "all": True}))
        self.wait(lambda d: d.find_element(By.CSS_SELECTOR, ".sign-in").is_displayed(), "the sign-in form again")
        alert = self.driver.find_element(By.CSS_SELECTOR, "[role=alert]")
        self.assertIn("signed out", alert.text)
        self.assertIsNone(self.marker(bob.id))
        self.assertIsNone(self.driver.execute_script("return localStorage.getItem('cairn.token')"))
        self.shot("signed-out")
        other.close()
        bob.close()


if __name__ == "__main__":
    unittest.main(verbosity=2)
