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
import subprocess
import tempfile
import unittest

from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import Select
from websockets.sync.client import connect

from harness import WAIT, BrowserTest, Peer, ROOT, binary, png


class FriendMapTests(BrowserTest):
    def prepare_hub(self, data):
        # Three places of Paris, imported as an operator does before the hub starts.
        places = os.path.join(data, "paris.csv")
        with open(places, "w", encoding="utf-8") as out:
            out.write("name,lat,lon,category\n"
                      "Eiffel Tower,48.8584,2.2945,monument\nLouvre,48.8606,2.3376,museum\n"
                      "Sacré-Cœur,48.8867,2.3431,church\n")
        subprocess.run([binary(), "places", "import", places, "--data", data], cwd=ROOT, check=True,
                       capture_output=True)

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
        self.tab("Places")
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
        self.tab("Friends")
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
        self.assert_clean()

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


class ProfileTests(BrowserTest):
    def test_a_friend_photo_on_the_map_and_ones_own_profile_edited(self):
        alice = Peer(self.hub, "alice", "Alice")
        bob = Peer(self.hub, "bob", "Bob")
        self.befriend(alice, bob)
        alice.close()
        folder = tempfile.mkdtemp(prefix="cairn-web-png-")
        bob.request("profile.set", photo=bob.upload(png(os.path.join(folder, "bob.png"), rgb=(30, 120, 200))))
        bob.request("pos", lat=48.85, lon=2.35)

        # Bob's photo stands for him on alice's map and in her list, fetched from the hub under its signed URL.
        self.sign_in("alice")
        self.wait(lambda d: d.find_elements(By.CSS_SELECTOR, f"#map [data-user='{bob.id}'] img"), "bob's photo")
        source = self.driver.find_element(By.CSS_SELECTOR, f"#map [data-user='{bob.id}'] img").get_attribute("src")
        self.assertTrue(source.startswith(f"{self.origin}/v1/media/"), source)
        self.wait(lambda d: d.execute_script(
            f"const i = document.querySelector(\"#map [data-user='{bob.id}'] img\"); return i.complete && "
            "i.naturalWidth > 0"), "the photo loaded")
        self.assertTrue(self.driver.find_elements(By.CSS_SELECTOR, f"li[data-friend='{bob.id}'] .avatar img"))

        # Alice edits her own: name, bio and photo, seen by bob.
        self.button("Profile").click()
        name = self.wait(lambda d: self.field("Display name"), "the profile dialog")
        name.clear()
        name.send_keys("Alice L.")
        self.field("Bio").send_keys("Climbs rocks.")
        self.field("Photo").send_keys(png(os.path.join(folder, "alice.png")))
        self.shot("profile")
        self.button("Save profile").click()
        self.wait(lambda d: "Signed in as Alice L." in d.find_element(By.CSS_SELECTOR, ".whoami").text,
                  "the new name in the bar")
        seen = bob.request("user.get", user=alice_id(bob))["user"]
        self.assertEqual((seen["name"], seen["bio"]), ("Alice L.", "Climbs rocks."))
        self.assertTrue(seen["photo_url"].startswith("/v1/media/"))
        self.assert_clean()
        bob.close()


def alice_id(peer):
    return peer.request("friend.list")["friends"][0]["id"]


class CrowdTests(BrowserTest):
    # Many accounts from one address: no sign-up limit.
    hub_flags = ("--signups-per-address", "0")

    def test_a_crowd_is_clustered_and_every_friend_keeps_an_element(self):
        alice = Peer(self.hub, "alice", "Alice")
        crowd = []
        for n in range(32):
            friend = Peer(self.hub, f"friend{n}", f"Friend {n}")
            self.befriend(alice, friend)
            # Within a few hundred metres of each other: drawn over one another unless clustered.
            friend.request("pos", lat=48.85 + (n % 8) * 0.001, lon=2.35 + (n // 8) * 0.001)
            crowd.append(friend)
        alice.close()
        self.sign_in("alice")
        self.wait(lambda d: len(d.find_elements(By.CSS_SELECTOR, "#map [data-user]")) == 32, "an element per friend")
        self.wait(lambda d: d.find_elements(By.CSS_SELECTOR, "#map .friend-cluster"), "clusters")
        self.driver.execute_script("window.scrollTo(0, 0)")
        self.shot("crowd")
        # Each element says where its friend is, clustered or not.
        element = self.driver.find_element(By.CSS_SELECTOR, f"#map [data-user='{crowd[9].id}']")
        self.assertEqual((element.get_attribute("data-lat"), element.get_attribute("data-lon")), ("48.851", "2.351"))
        # A move of a clustered friend is read from its element too.
        crowd[9].request("pos", lat=48.8515, lon=2.3515)
        self.wait(lambda d: d.find_element(By.CSS_SELECTOR, f"#map [data-user='{crowd[9].id}']")
                  .get_attribute("data-lat") == "48.8515", "the clustered friend's move")
        # Fewer than twenty left on the map: no clusters, a marker each.
        for friend in crowd[:13]:
            friend.request("share.set", user=alice.id, level="hidden")
        self.wait(lambda d: len(d.find_elements(By.CSS_SELECTOR, "#map [data-user]")) == 19, "19 friends left")
        self.assertEqual(self.driver.find_elements(By.CSS_SELECTOR, "#map .friend-cluster"), [])
        self.assertEqual(len(self.driver.find_elements(By.CSS_SELECTOR, "#map .friend-marker[data-user]")), 19)
        self.assert_clean()
        for friend in crowd:
            friend.close()


if __name__ == "__main__":
    unittest.main(verbosity=2)
