"""The web app against what other people and other sessions do, in a real browser against a real hub (harness.py).

What it proves: a reply that arrives after signing out (the friend list of an account whose start was still under
way) is not drawn, nor kept for the next account signed in on the same page; what one account typed (a relic's
message and password, a place search), the notices it was told and where its map looked are gone when another signs
in; an item its owner hides, or deletes, leaves a viewer's map; a message or a bucket submitted twice at once (a
double click, Enter pressed twice) is sent once; names and texts other people write as one long word (or as markup)
are shown as text and do not widen the page; a tab whose session ends (signed out everywhere) does not take away the
token another tab of the same browser keeps for another account; a flood of a friend's messages (or of changes to a
bucket the user views) costs the page a few requests, not one each, so it stays under the hub's request rate. No
console errors.

Run: python3 Tests/Web/test_sessions_and_peers.py (needs what harness.py needs).
"""
import json
import subprocess
import time
import unittest
import urllib.request

from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys

from harness import WAIT, BrowserTest, Peer, binary

# Installed before the page's own scripts: from the first frame `window.__hold(text)` picks, the page's WebSocket
# holds back every frame (as a slow network would) until `window.__release(done)` hands them over, in order, one task
# each, and then calls `done`.
HOLD = """
(() => {
  const Native = window.WebSocket;
  window.__held = [];
  window.__hold = null;
  let holding = false;
  window.__release = (done) => {
    holding = false;
    const next = () => {
      const deliver = window.__held.shift();
      if (!deliver) return setTimeout(done, 0);
      deliver();
      setTimeout(next, 0);
    };
    next();
  };
  window.WebSocket = class extends Native {
    set onmessage(handler) {
      super.onmessage = handler && ((event) => {
        holding = holding || Boolean(window.__hold && window.__hold(event.data));
        if (holding) window.__held.push(() => handler.call(this, event));
        else handler.call(this, event);
      });
    }
    get onmessage() { return super.onmessage; }
  };
})();
"""

EVIL = '<img src=x onerror="window.__pwned=1">'


class SessionsAndPeersTests(BrowserTest):
    def sign_in_here(self, username, name):
        """Signs in through the form of the page as it is (no reload: what the page kept stays in memory)."""
        self.wait(lambda d: self.field("Username").is_displayed(), "the sign-in form")
        for label, value in (("Username", username), ("Password", "password1")):
            field = self.field(label)
            field.clear()
            field.send_keys(value)
        self.button("Sign in").click()
        self.wait(lambda d: self.connection() == "connected"
                  and f"Signed in as {name}" in d.find_element(By.CSS_SELECTOR, ".whoami").text,
                  f"{name} signed in")

    def sign_out(self):
        self.button("Sign out").click()
        self.wait(lambda d: self.field("Username").is_displayed(), "the sign-in form after signing out")

    def scale_metres(self):
        """What the map's scale bar stands for, in metres: small when the map shows a street, large for the world."""
        number, unit = self.driver.find_element(By.CSS_SELECTOR, ".leaflet-control-scale-line").text.split()
        return int(number) * (1000 if unit == "km" else 1)

    def friend_rows(self):
        rows = self.driver.find_elements(By.CSS_SELECTOR, ".friend-list li")
        return [row.get_attribute("textContent") for row in rows]

    def overflows(self):
        """Whether the panel (or an open dialog) is wider than it shows: scrolled sideways to be read."""
        return self.driver.execute_script(
            "return [...document.querySelectorAll('.panel, dialog[open]')]"
            ".some(e => e.scrollWidth > e.clientWidth + 1)")

    def test_a_reply_after_signing_out_is_not_drawn_nor_kept_for_the_next_account(self):
        alice = self.peer("alice", "Alice")
        bob = self.peer("bob", "Bob")
        self.peer("carol", "Carol").close()
        self.befriend(alice, bob)
        alice.close()
        self.driver.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": HOLD})
        self.driver.get(self.origin + "/")
        # Alice's friend list is slow to come; she signs out before it does.
        self.driver.execute_script("window.__hold = (text) => text.includes('\"friends\":[')")
        self.sign_in_form("alice")
        self.wait(lambda d: d.execute_script("return window.__held.length") > 0, "alice's friend list on its way")
        self.sign_out()
        self.driver.execute_script("window.__hold = null")
        # Her friend list arrives now, and then the answer to signing out.
        self.driver.execute_async_script("window.__release(arguments[0])")
        self.assertEqual(self.friend_rows(), [])

        # Carol, signing in on the same page, sees none of alice's friends.
        self.sign_in_here("carol", "Carol")
        self.wait(lambda d: d.find_element(By.CSS_SELECTOR, ".no-friends").is_displayed(), "carol's empty list")
        self.assertEqual(self.friend_rows(), [])
        self.tab("Chat")
        choices = [e.text for e in self.driver.find_elements(By.CSS_SELECTOR, "#chat-friend option")]
        self.assertNotIn("Bob", choices)
        self.assertNotIn("Bob", self.driver.find_element(By.CSS_SELECTOR, ".panel").text)
        self.assert_clean()

    def sign_in_form(self, username):
        self.field("Username").send_keys(username)
        self.field("Password").send_keys("password1")
        self.button("Sign in").click()

    def test_what_one_account_left_is_gone_when_another_signs_in(self):
        # No geolocation: each map shows what its own account knows, nothing placed from the browser.
        self.driver.execute_cdp_cmd("Browser.setPermission", {
            "origin": self.origin, "permission": {"name": "geolocation"}, "setting": "denied"})
        alice = self.peer("alice", "Alice")
        bob = self.peer("bob", "Bob")
        self.peer("carol", "Carol").close()
        self.befriend(alice, bob)
        alice.close()
        bob.request("pos", lat=35.6812, lon=139.7671)  # bob in Tokyo: alice's map goes there

        self.driver.get(self.origin + "/")
        self.sign_in_here("alice", "Alice")
        self.wait(lambda d: self.marker(bob.id), "bob on alice's map")
        self.wait(lambda d: self.scale_metres() <= 5000, "alice's map close to bob's street")
        self.tab("Relics")
        self.field("Message").send_keys("The key is under the mat")
        self.field("Password (optional)").send_keys("hunter2")
        self.tab("Places")
        self.field("Place name").send_keys("Shinjuku")
        self.sign_out()

        self.sign_in_here("carol", "Carol")
        self.tab("Relics")
        self.assertEqual(self.field("Message").get_attribute("value"), "")
        self.assertEqual(self.field("Password (optional)").get_attribute("value"), "")
        self.tab("Places")
        self.assertEqual(self.field("Place name").get_attribute("value"), "")
        # Carol's map is the world, not the street alice was looking at.
        self.assertGreaterEqual(self.scale_metres(), 500_000)
        self.assertFalse(self.marker(bob.id))
        self.shot("next-account")
        self.assert_clean()

    def test_an_item_hidden_or_deleted_by_its_owner_leaves_a_viewers_map(self):
        alice = self.peer("alice", "Alice")
        bob = self.peer("bob", "Bob")
        self.befriend(alice, bob)
        alice.close()
        bucket = bob.request("bucket.create", name="Bob's gear")["bucket"]["id"]
        bob.request("bucket.share", bucket=bucket, user=alice.id, role="viewer")
        item = bob.request("item.create", bucket=bucket, name="Van")["item"]["id"]
        tracker = bob.request("tracker.pair", item=item, device="van-tag")["tracker"]
        bob.request("tracker.activate", tracker=tracker["id"])
        start = int(time.time()) - 900

        def report(lat, lon, minutes):
            url = (f"{self.origin}/v1/ingest/osmand?id=van-tag&key={tracker['key']}&lat={lat}&lon={lon}"
                   f"&timestamp={start + minutes * 60}")
            with urllib.request.urlopen(url, timeout=WAIT) as reply:
                self.assertEqual(reply.status, 200)

        report(48.8600, 2.3000, 0)
        self.sign_in("alice")
        pin = f"#map [data-item='{item}']"
        self.wait(lambda d: d.find_elements(By.CSS_SELECTOR, pin), "bob's van on alice's map")

        # Bob hides it: its position is for the bucket's owners; alice's map no longer shows where it was.
        bob.request("item.update", item=item, hidden=True)
        self.wait(lambda d: not d.find_elements(By.CSS_SELECTOR, pin), "the hidden van gone from alice's map")

        # Shown again from its next report; then deleted: gone again.
        bob.request("item.update", item=item, hidden=False)
        report(48.8610, 2.3010, 5)
        self.wait(lambda d: d.find_elements(By.CSS_SELECTOR, pin), "the van back on alice's map")
        bob.request("item.delete", item=item)
        self.wait(lambda d: not d.find_elements(By.CSS_SELECTOR, pin), "the deleted van gone from alice's map")
        self.assert_clean()

    def test_a_message_or_a_bucket_submitted_twice_at_once_is_sent_once(self):
        alice = self.peer("alice", "Alice")
        bob = self.peer("bob", "Bob")
        self.befriend(alice, bob)
        self.sign_in("alice")
        self.wait(lambda d: d.find_elements(By.CSS_SELECTOR, "button[aria-label='Chat with Bob']"), "bob's row")
        self.driver.find_element(By.CSS_SELECTOR, "button[aria-label='Chat with Bob']").click()
        self.field("Message").send_keys("Only once")
        self.driver.execute_script("arguments[0].click(); arguments[0].click();", self.button("Send"))
        self.wait(lambda d: self.field("Message").get_attribute("value") == "", "the message sent")
        # A second message, sent after: its reply comes after the replies to whatever the page sent before it.
        self.field("Message").send_keys("Then this" + Keys.ENTER)
        texts = lambda: [e.text for e in self.driver.find_elements(By.CSS_SELECTOR, ".messages [data-message] .text")]
        self.wait(lambda d: "Then this" in texts(), "the second message")
        self.assertEqual(texts(), ["Only once", "Then this"])
        history = [m["text"] for m in bob.request("chat.history", **{"with": alice.id})["messages"]]
        self.assertEqual(history, ["Only once", "Then this"])

        self.tab("Items")
        self.field("New bucket").send_keys("Gear")
        self.driver.execute_script("arguments[0].click(); arguments[0].click();", self.button("Create"))
        self.wait(lambda d: d.find_elements(By.CSS_SELECTOR, ".bucket-view h3"), "the new bucket")
        self.field("New bucket").send_keys("Later")
        self.button("Create").click()
        self.wait(lambda d: "Later" in d.find_element(By.CSS_SELECTOR, ".bucket-list").text, "the second bucket")
        names = [b["name"] for b in alice.request("bucket.list")["buckets"]]
        self.assertEqual(names, ["Gear", "Later"])
        self.assert_clean()

    def count_requests(self):
        """From now on the page counts the requests it writes to the hub (`window.__requests`)."""
        self.driver.execute_script("""
            window.__requests = 0;
            const send = WebSocket.prototype.send;
            WebSocket.prototype.send = function (data) {
              window.__requests += String(data).split("\\n").length;
              return send.call(this, data);
            };""")

    def flood(self, peer, lines):
        """Sends `lines` (requests) as `peer` on connections of its own, 150 in one frame each, all at once, and waits
        for their answers (each connection also hears its user's own events, which are not answers)."""
        from websockets.sync.client import connect
        batches = []
        for start in range(0, len(lines), 150):
            ws = connect(f"ws://127.0.0.1:{self.hub.port}/ws", subprotocols=["cairn.v1"], open_timeout=10)
            ws.send(json.dumps({"id": 1_000_000, "op": "auth", "token": peer.token}))
            signed_in = []
            while not signed_in:
                signed_in = [m for m in map(json.loads, ws.recv(timeout=WAIT).split("\n")) if m.get("id") == 1_000_000]
            self.assertTrue(signed_in[0]["ok"])
            batch = lines[start:start + 150]
            ws.send("\n".join(json.dumps({"id": n + 1, **line}) for n, line in enumerate(batch)))
            batches.append((ws, len(batch)))
        for ws, count in batches:
            answers = []
            while len(answers) < count:
                answers += [m for m in map(json.loads, ws.recv(timeout=WAIT).split("\n")) if "ev" not in m]
            self.assertTrue(all(answer["ok"] for answer in answers))
            ws.close()

    def test_a_flood_of_events_from_a_peer_is_not_a_flood_of_requests_from_the_page(self):
        alice = self.peer("alice", "Alice")
        bob = self.peer("bob", "Bob")
        self.befriend(alice, bob)
        alice.close()
        bucket = bob.request("bucket.create", name="Bob's gear")["bucket"]["id"]
        bob.request("bucket.share", bucket=bucket, user=alice.id, role="viewer")
        self.sign_in("alice")
        self.wait(lambda d: d.find_elements(By.CSS_SELECTOR, "button[aria-label='Chat with Bob']"), "bob's row")
        self.driver.find_element(By.CSS_SELECTOR, "button[aria-label='Chat with Bob']").click()
        self.wait(lambda d: d.find_element(By.CSS_SELECTOR, ".no-messages").is_displayed(), "the conversation")
        self.count_requests()

        # 300 messages while the conversation is on screen: all shown, read on the hub, with a few read marks.
        self.flood(bob, [{"op": "chat.send", "to": alice.id, "text": f"spam {n}"} for n in range(300)])
        self.wait(lambda d: len(d.find_elements(By.CSS_SELECTOR, ".messages [data-message]")) == 300, "300 messages")
        phone = self.login("alice")
        self.wait(lambda d: phone.request("chat.list")["conversations"][0]["unread"] == 0, "all read on the hub")
        phone.close()
        self.assertLess(self.driver.execute_script("return window.__requests"), 30)

        # 300 changes to a bucket alice views: read again a few times, and shown as it is in the end.
        self.flood(bob, [{"op": "bucket.update", "bucket": bucket, "name": f"Gear {n}"} for n in range(300)])
        final = bob.request("bucket.get", bucket=bucket)["bucket"]["name"]  # the connections' changes interleave
        self.tab("Items")
        self.wait(lambda d: d.find_element(By.CSS_SELECTOR, ".bucket-list strong").text == final, "the last name")
        self.assertLess(self.driver.execute_script("return window.__requests"), 60)
        self.assertFalse(self.driver.find_element(By.CSS_SELECTOR, "[role=alert]").is_displayed())
        self.assert_clean()

    def test_what_others_write_shows_as_text_and_does_not_widen_the_page(self):
        self.peer("alice", "Alice").close()
        bob = self.peer("bob", (EVIL + "W" * 64)[:64])
        alice = self.login("alice")
        self.befriend(alice, bob)
        bob.request("pos", lat=48.8585, lon=2.2946)
        bob.request("pos", lat=48.8585, lon=2.2946)
        bob.request("chat.send", to=alice.id, text=EVIL + "M" * 600)
        bob.request("relic.create", text=EVIL + "R" * 1500, radius=100)

        self.sign_in("alice")
        self.wait(lambda d: self.marker(bob.id), "bob on the map")
        self.wait(lambda d: len(self.friend_rows()) == 1, "bob's row")
        self.assertIn(EVIL[:20], self.friend_rows()[0])
        self.assertFalse(self.overflows())
        self.tab("Chat")
        self.wait(lambda d: d.find_elements(By.CSS_SELECTOR, ".conversation-open"), "bob's conversation")
        self.driver.find_element(By.CSS_SELECTOR, ".conversation-open").click()
        self.wait(lambda d: d.find_elements(By.CSS_SELECTOR, ".messages [data-message]"), "bob's message")
        self.assertFalse(self.overflows())
        self.shot("long-words-chat")
        self.tab("Relics")
        self.wait(lambda d: d.find_elements(By.CSS_SELECTOR, ".relic-list li button"), "bob's relic listed")
        self.driver.find_element(By.CSS_SELECTOR, ".relic-list li button").click()
        self.wait(lambda d: "RRRR" in d.find_element(By.CSS_SELECTOR, "dialog.relic-view").text, "the relic opened")
        self.assertFalse(self.overflows())
        self.shot("long-words-relic")
        self.assertIsNone(self.driver.execute_script("return window.__pwned"))
        self.assert_clean()

    def test_a_suspended_account_is_signed_out_for_good(self):
        alice = self.peer("alice", "Alice")
        bob = self.peer("bob", "Bob")
        admin = self.peer("admin", "Admin")
        self.befriend(alice, bob)
        bob.request("pos", lat=48.85, lon=2.35)
        subprocess.run([binary(), "user", "grant-admin", "admin", "--data", self.hub.data], check=True,
                       capture_output=True)
        admin = self.login("admin")  # a new session, as an admin
        # The page counts the WebSockets it opens.
        self.driver.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": """
            window.__sockets = 0;
            const Native = window.WebSocket;
            window.WebSocket = class extends Native {
              constructor(...args) { super(...args); window.__sockets += 1; }
            };"""})
        self.sign_in("alice")
        self.wait(lambda d: self.marker(bob.id), "bob on the map")
        opened = self.driver.execute_script("return window.__sockets")

        admin.request("admin.user.suspend", user=alice.id, reason="testing")
        self.wait(lambda d: d.find_element(By.CSS_SELECTOR, ".sign-in").is_displayed(), "the sign-in form again")
        self.assertIn("suspended", self.driver.find_element(By.CSS_SELECTOR, "[role=alert]").text)
        self.assertIsNone(self.marker(bob.id))
        self.assertEqual(self.friend_rows(), [])
        self.assertIsNone(self.driver.execute_script("return localStorage.getItem('cairn.token')"))
        self.assertEqual(self.connection(), "offline")
        # Well past the client's first reconnect delays: no new connection was tried.
        self.driver.execute_async_script("setTimeout(arguments[0], 3000)")
        self.assertEqual(self.driver.execute_script("return window.__sockets"), opened)
        self.assertEqual(self.connection(), "offline")
        self.shot("suspended")

    def peer(self, username, name):
        """A new user played over the WebSocket, closed when the test ends."""
        made = Peer(self.hub, username, name)
        self.addCleanup(made.close)
        return made

    def login(self, username):
        """A peer signed in to an existing account, closed when the test ends."""
        from websockets.sync.client import connect
        peer = Peer.__new__(Peer)
        peer.hub = self.hub
        peer.ws = connect(f"ws://127.0.0.1:{self.hub.port}/ws", subprotocols=["cairn.v1"], open_timeout=10)
        peer.next_id = 0
        reply = peer.request("login", username=username, password="password1")
        peer.id = reply["user"]["id"]
        peer.token = reply["token"]
        self.addCleanup(peer.close)
        return peer

    def test_a_tab_whose_session_ends_leaves_the_token_another_tab_keeps(self):
        for username, name in (("alice", "Alice"), ("carol", "Carol")):
            self.peer(username, name).close()
        self.driver.get(self.origin + "/")
        self.sign_in_here("alice", "Alice")
        first = self.driver.current_window_handle
        # A second tab signs in with the kept token; signing out there signs the first tab out too.
        self.driver.switch_to.new_window("tab")
        second = self.driver.current_window_handle
        self.driver.get(self.origin + "/")
        self.wait(lambda d: "Signed in as Alice" in d.find_element(By.CSS_SELECTOR, ".whoami").text, "the kept token")
        self.sign_out()
        self.sign_in_here("carol", "Carol")
        self.driver.switch_to.window(first)
        self.sign_in_here("alice", "Alice")
        kept = self.driver.execute_script("return localStorage.getItem('cairn.token')")
        self.assertTrue(kept)

        # Carol signs out everywhere (from another device): her tab ends, and leaves alice's token alone.
        self.login("carol").request("logout", all=True)
        self.driver.switch_to.window(second)
        self.wait(lambda d: self.field("Username").is_displayed(), "carol's tab signed out")
        self.assertEqual(self.driver.execute_script("return localStorage.getItem('cairn.token')"), kept)
        self.driver.switch_to.window(first)
        self.driver.refresh()
        self.wait(lambda d: self.connection() == "connected"
                  and "Signed in as Alice" in d.find_element(By.CSS_SELECTOR, ".whoami").text,
                  "alice still signed in after a reload")


if __name__ == "__main__":
    unittest.main(verbosity=2)
