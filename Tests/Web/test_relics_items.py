"""Relics and items in the web app, in a real browser against a real hub (see harness.py).

Relics: a relic another user leaves where alice stands appears on her map live; opening it asks for its password
(a wrong one is said so, the right one shows the text); alice leaves a relic with a photo through the page (uploaded
to /v1/media) and the other user, standing there, opens it and fetches the photo; a relic deleted by its creator
vanishes from the map.
Items: alice creates a bucket and an item through the page, pairs a tracker (its key shown once), the tracker
reports over OsmAnd's HTTP protocol and the item appears on the map live, with its battery; locating it shows the
distance and directions links; with its alert on, leaving it behind shows a notification and coming back another;
a safe zone is added and drawn. No request leaves the hub's origin and the console stays clean.

Run: python3 Tests/Web/test_relics_items.py (needs what harness.py needs).
"""
import json
import os
import tempfile
import time
import unittest
import urllib.request

from selenium.webdriver.common.by import By

from harness import WAIT, BrowserTest, Peer, png

EIFFEL = (48.8584, 2.2945)


class RelicsAndItemsTests(BrowserTest):
    # Left-behind alerts at once (no grace time), so the test need not wait a minute.
    hub_flags = ("--left-behind-grace", "0")

    def located(self):
        self.wait(lambda d: "You are at 48.85840" in d.find_element(By.CSS_SELECTOR, ".my-position").text,
                  "the page placing alice from the browser's geolocation")

    def notice_text(self):
        return self.driver.find_element(By.CSS_SELECTOR, ".notice").text

    def test_a_relic_appears_opens_with_its_password_is_left_with_a_photo_and_vanishes(self):
        Peer(self.hub, "alice", "Alice").close()
        bob = Peer(self.hub, "bob", "Bob")
        # Bob stands a few metres from the tower: two reports of one place make his position trusted.
        bob.request("pos", lat=48.8585, lon=2.2946)
        bob.request("pos", lat=48.8585, lon=2.2946)

        self.sign_in("alice")
        self.located()
        self.tab("Relics")
        self.wait(lambda d: "No relic" in d.find_element(By.CSS_SELECTOR, ".relic-hint").text,
                  "the relics hint once alice's position is confirmed")

        # Bob leaves a locked relic where alice stands: it appears on her map without a reload.
        made = bob.request("relic.create", text="Under the tower", radius=100, password="sesame")["relic"]
        self.wait(lambda d: d.find_elements(By.CSS_SELECTOR, f"#map [data-relic='{made['id']}']"), "the relic marker")
        marker = self.driver.find_element(By.CSS_SELECTOR, f"#map [data-relic='{made['id']}']")
        self.assertEqual(marker.get_attribute("data-locked"), "true")
        self.assertNotIn("Under the tower", self.driver.page_source)  # a marker carries no content
        self.wait(lambda d: "relic" in self.notice_text(), "the notice of a relic here")
        row = self.driver.find_element(By.CSS_SELECTOR, f".relic-list li[data-relic='{made['id']}']")
        self.assertIn("in reach", row.text)
        self.shot("relics-nearby")

        # Opening asks for the password; a wrong one is said so; the right one shows the text.
        row.find_element(By.XPATH, ".//button[starts-with(normalize-space(.), 'Open')]").click()
        self.wait(lambda d: d.find_element(By.CSS_SELECTOR, "dialog.relic-view").is_displayed(), "the dialog")
        self.field("Relic password").send_keys("guess")
        self.button("Unlock").click()
        self.wait(lambda d: "Wrong password" in d.find_element(By.CSS_SELECTOR, "dialog.relic-view").text,
                  "the wrong password said")
        self.field("Relic password").send_keys("sesame")
        self.button("Unlock").click()
        self.wait(lambda d: "Under the tower" in d.find_element(By.CSS_SELECTOR, "dialog.relic-view").text,
                  "the relic's text")
        self.assertIn("Bob", self.driver.find_element(By.CSS_SELECTOR, "dialog.relic-view").text)
        self.shot("relic-opened")
        self.button("Close").click()

        # Alice leaves a relic with a photo; bob, standing there, opens it and gets the photo.
        photo = png(os.path.join(tempfile.mkdtemp(prefix="cairn-web-png-"), "tower.png"))
        self.field("Message").send_keys("Alice was here")
        self.field("Photo or video").send_keys(photo)
        radius = self.field("Opens within")
        radius.clear()
        radius.send_keys("60")
        self.button("Leave relic").click()
        self.wait(lambda d: "Alice was here" in d.find_element(By.CSS_SELECTOR, ".my-relics").text,
                  "alice's relic among hers")
        mine = bob.request("relic.nearby")["relics"]
        left = [r for r in mine if r["id"] != made["id"]]
        self.assertEqual(len(left), 1)
        self.assertEqual(left[0]["radius"], 60)
        opened = bob.request("relic.open", relic=left[0]["id"])["relic"]
        self.assertEqual(opened["text"], "Alice was here")
        with urllib.request.urlopen(f"{self.origin}{opened['media_url']}", timeout=WAIT) as reply:
            self.assertEqual(reply.headers["Content-Type"], "image/png")
            self.assertEqual(reply.read(), open(photo, "rb").read())
        self.driver.execute_script("document.querySelector('.relics').scrollIntoView()")
        self.shot("relics-mine")

        # Bob deletes his: it vanishes from alice's map.
        bob.request("relic.delete", relic=made["id"])
        self.wait(lambda d: not d.find_elements(By.CSS_SELECTOR, f"#map [data-relic='{made['id']}']"),
                  "the deleted relic gone")
        self.assert_clean()
        bob.close()

    def test_an_item_tracked_located_left_behind_and_a_safe_zone(self):
        Peer(self.hub, "alice", "Alice").close()
        self.sign_in("alice")
        self.located()
        self.tab("Items")

        # A bucket and an item, through the page.
        self.field("New bucket").send_keys("Gear")
        self.button("Create").click()
        self.wait(lambda d: d.find_elements(By.CSS_SELECTOR, ".bucket-view h3"), "the new bucket opened")
        self.field("Item name").send_keys("Bike")
        self.button("Add item").click()
        self.wait(lambda d: d.find_elements(By.CSS_SELECTOR, ".bucket-items li[data-item]"), "the new item")
        item = int(self.driver.find_element(By.CSS_SELECTOR, ".bucket-items li[data-item]").get_attribute("data-item"))

        # Pairing a tracker shows its key once, with the address to report to.
        self.click(By.CSS_SELECTOR, "button[aria-label='Pair a tracker with Bike']", "the Pair tracker button")
        prompt = self.wait(lambda d: d.switch_to.alert, "the device id prompt")
        prompt.send_keys("bike-tag-1")
        prompt.accept()
        key = self.wait(lambda d: d.find_element(By.CSS_SELECTOR, ".tracker-key").text, "the tracker's key")
        self.assertEqual(len(key), 43)
        self.assertIn("active", self.driver.find_element(By.CSS_SELECTOR, ".locate-result").text)
        self.shot("items-paired")

        # The tracker reports over OsmAnd's protocol: the item appears on the map live, with its battery.
        # Each fix timed minutes after the last, as a tag reporting every few minutes does (the hub's speed filter
        # would drop a jump of hundreds of metres within a second).
        start = int(time.time()) - 900

        def report(lat, lon, minutes):
            url = (f"{self.origin}/v1/ingest/osmand?id=bike-tag-1&key={key}&lat={lat}&lon={lon}&batt=76"
                   f"&timestamp={start + minutes * 60}")
            with urllib.request.urlopen(url, timeout=WAIT) as reply:
                self.assertEqual(reply.status, 200)
        report(48.8620, 2.2890, 0)
        self.wait(lambda d: d.find_elements(By.CSS_SELECTOR, f"#map [data-item='{item}']"), "the item on the map")
        pin = self.driver.find_element(By.CSS_SELECTOR, f"#map [data-item='{item}']")
        self.assertEqual(pin.get_attribute("data-lat"), "48.862")
        self.assertEqual(pin.get_attribute("title"), "Bike")
        self.wait(lambda d: "battery 76 %" in d.find_element(By.CSS_SELECTOR, f"li[data-item='{item}']").text,
                  "the battery in the item's row")

        # Locating: the distance from alice and directions links to the fix.
        self.click(By.CSS_SELECTOR, "button[aria-label='Locate Bike']", "the Locate button")
        self.wait(lambda d: "from you" in d.find_element(By.CSS_SELECTOR, ".locate-result").text, "the distance")
        google = self.driver.find_element(By.LINK_TEXT, "Google Maps").get_attribute("href")
        self.assertIn("destination=48.862000,2.289000", google)
        self.assertIn("origin=48.858", google)
        self.shot("items-located")

        # Alert on: the tracker reports again, far from alice, and she is told; then it comes back to her.
        self.click(By.XPATH, f"//li[@data-item='{item}']//label[contains(., 'Alert if left behind')]/input",
                   "the alert checkbox")
        self.wait(lambda d: "told if you leave Bike behind" in self.notice_text(), "the alert turned on")
        report(48.8625, 2.2880, 5)
        self.wait(lambda d: "You left Bike behind" in self.notice_text(), "the left-behind notification")
        self.assertIn("left-behind", self.driver.find_element(By.CSS_SELECTOR, f"#map [data-item='{item}']")
                      .get_attribute("class"))
        self.shot("items-left-behind")
        report(EIFFEL[0], EIFFEL[1], 10)
        self.wait(lambda d: "Bike is with you again" in self.notice_text(), "the reunion")

        # A safe zone around alice, listed and drawn.
        self.field("New safe zone").send_keys("Home")
        self.button("Add zone").click()
        self.wait(lambda d: "Home" in d.find_element(By.CSS_SELECTOR, ".zone-list").text, "the safe zone listed")
        self.shot("items-zone")
        self.assert_clean()


if __name__ == "__main__":
    unittest.main(verbosity=2)
