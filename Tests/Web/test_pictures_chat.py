"""The web app's Pictures and Chat tabs in a real browser against a real hub: the page signs in as alice (standing at
the Eiffel Tower through the DevTools geolocation), the other users are played over the WebSocket.

What it proves, through the page's elements (a card per picture with data-picture, a message per element with
data-message, the Chat tab's badge with data-unread, labelled controls, named buttons, role=alert): pictures: a
friend's picture nearby shows live; a like from the page reaches the hub and sorting by likes puts it first; a
report (a reason, words for "something else") takes the picture away from the page; the page posts a picture through
its file input and the hub has it; ghost mode's refusal to place a picture is shown; events: a private event refuses
a wrong password in the alert and shows its pictures after the right one (new ones live); an event created on the
page is private on the hub; one's own picture is deleted; "More" pages through more than a page, nearest first, each
picture once. Chat: a friend's message shows live with the unread badge; opening the conversation marks it read on
the hub; "Earlier" pages back; the page sends with the keyboard and the friend receives it; a message from the
user's other device shows, and its read mark clears the badge; a refusal (not friends any more) is shown. No request
leaves the hub's origin; no console errors. Screenshots of both tabs at a desktop's and a phone's width go to the
folder the test prints.

Run: python3 Tests/Web/test_pictures_chat.py (needs `swift build` or CAIRN_BIN, chromium, chromium-driver,
selenium==4.51.0 and websockets from PyPI).
"""
import json
import os
import struct
import tempfile
import time
import unittest
import urllib.request
import zlib

from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support.ui import Select
from websockets.sync.client import connect

from harness import WAIT, BrowserTest, Peer

HERE = {"lat": 48.8584, "lon": 2.2945}  # where the browser's geolocation puts alice


def png(red, green, blue, width=96, height=64):
    """A small real PNG of one colour (different colours, different media ids)."""
    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)
    rows = b"".join(b"\x00" + bytes((red, green, blue)) * width for _ in range(height))
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b"")


class Person(Peer):
    """A peer that keeps the events it hears (Peer drops them while it waits for a reply) and uploads media."""

    def __init__(self, hub, username, name, login=False):
        self.heard = []
        if not login:
            super().__init__(hub, username, name)
            return
        self.hub = hub
        self.ws = connect(f"ws://127.0.0.1:{hub.port}/ws", subprotocols=["cairn.v1"], open_timeout=10)
        self.next_id = 0
        reply = self.request("login", username=username, password="password1")
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
                if "ev" in message:
                    self.heard.append(message)
        raise AssertionError(f"no reply to {op}")

    def event(self, name, matching=lambda event: True):
        """The first event `name` heard (now or within WAIT) that `matching` accepts."""
        deadline = time.time() + WAIT
        while True:
            for event in self.heard:
                if event["ev"] == name and matching(event):
                    self.heard.remove(event)
                    return event
            if time.time() > deadline:
                raise AssertionError(f"no {name} event")
            try:
                for line in self.ws.recv(timeout=max(0.1, deadline - time.time())).split("\n"):
                    message = json.loads(line)
                    if "ev" in message:
                        self.heard.append(message)
            except TimeoutError:
                pass

    def upload(self, data, kind="image/png"):
        request = urllib.request.Request(
            f"http://127.0.0.1:{self.hub.port}/v1/media", data=data, method="POST",
            headers={"Authorization": f"Bearer {self.token}", "Content-Type": kind})
        with urllib.request.urlopen(request, timeout=WAIT) as reply:
            return json.loads(reply.read())["media"]

    def post(self, caption, colour, **fields):
        media = self.upload(png(*colour))
        return self.request("picture.post", media=media, caption=caption, **fields)["picture"]


class PicturesAndChatTests(BrowserTest):
    def cards(self):
        return [int(e.get_attribute("data-picture"))
                for e in self.driver.find_elements(By.CSS_SELECTOR, ".picture-list [data-picture]")]

    def card(self, picture):
        return self.driver.find_element(By.CSS_SELECTOR, f".picture-list [data-picture='{picture}']")

    def alert_says(self, text):
        alert = self.driver.find_element(By.CSS_SELECTOR, "[role=alert]")
        self.wait(lambda d: alert.is_displayed() and text in alert.text, f"the alert saying {text!r}")

    def unread_badge(self):
        return int(self.driver.find_element(By.CSS_SELECTOR, "[role=tab] .badge[data-unread]")
                   .get_attribute("data-unread"))

    def messages(self):
        return [e.find_element(By.CSS_SELECTOR, ".text").text
                for e in self.driver.find_elements(By.CSS_SELECTOR, ".messages [data-message]")]

    def both_widths(self, name, scroll):
        """Screenshots at a desktop's and a phone's width, the panel scrolled by `scroll` (a script) each time."""
        for width, suffix in ((1280, "desktop"), (412, "phone")):
            self.driver.set_window_size(width, 900)
            self.driver.execute_script(scroll)
            self.shot(f"{name}-{suffix}")
        self.driver.set_window_size(1280, 900)

    # Pictures and events

    def test_pictures_live_liked_reported_posted_and_events_joined_and_created(self):
        Person(self.hub, "alice", "Alice").close()
        bob = Person(self.hub, "bob", "Bob")
        bob.request("pos", lat=48.8590, lon=2.2950)  # some 70 m from alice

        self.sign_in("alice")
        self.tab("Pictures")
        # Once alice's position is known, the list of pictures near her is read (empty yet).
        hint = self.driver.find_element(By.CSS_SELECTOR, ".no-pictures")
        self.wait(lambda d: hint.is_displayed() and "No pictures within" in hint.text, "the empty nearby list")

        # Bob's pictures show live, newest first, with poster, caption, distance and likes.
        first = bob.post("Bob's first", (200, 60, 40))
        self.wait(lambda d: self.cards() == [first["id"]], "bob's first picture, live")
        second = bob.post("Bob's second", (40, 120, 200))
        self.wait(lambda d: self.cards() == [second["id"], first["id"]], "bob's second picture on top, live")
        card = self.card(first["id"])
        self.assertIn("Bob", card.text)
        self.assertIn("Bob's first", card.text)
        self.assertIn("m", card.find_element(By.CSS_SELECTOR, ".facts").text)
        self.assertTrue(self.driver.execute_script(
            "return arguments[0].complete && arguments[0].naturalWidth === 96",
            card.find_element(By.TAG_NAME, "img")), "the picture's image loaded from its signed URL")

        # A like from the page reaches the hub; sorting by likes puts the liked picture first.
        card.find_element(By.XPATH, ".//button[normalize-space(.)='Like']").click()
        self.wait(lambda d: self.card(first["id"]).find_element(By.CSS_SELECTOR, ".likes")
                  .get_attribute("data-likes") == "1", "the like counted on the page")
        self.assertEqual(bob.request("picture.get", picture=first["id"])["picture"]["likes"], 1)
        Select(self.field("Sort by")).select_by_visible_text("Most liked")
        self.wait(lambda d: self.cards() == [first["id"], second["id"]], "the liked picture first")
        self.assertEqual(self.card(first["id"]).find_element(By.CSS_SELECTOR, ".like").text, "Unlike")
        self.both_widths("pictures", "document.querySelector('.tabs').scrollIntoView()")

        # A report needs words for "something else"; once sent, the picture leaves the page (and stays gone).
        self.card(second["id"]).find_element(By.XPATH, ".//button[normalize-space(.)='Report']").click()
        Select(self.driver.find_element(By.ID, f"report-reason-{second['id']}")).select_by_value("other")
        self.shot("report-form")
        self.button("Send report").click()
        self.alert_says("Say what is wrong")
        self.assertIn(second["id"], self.cards())
        self.driver.find_element(By.ID, f"report-text-{second['id']}").send_keys("not a picture of anything")
        self.button("Send report").click()
        self.wait(lambda d: self.cards() == [first["id"]], "the reported picture gone")
        Select(self.field("Sort by")).select_by_visible_text("Newest")
        self.wait(lambda d: self.cards() == [first["id"]], "the reported picture still gone when read again")

        # The page posts a picture through its file input; the hub has it where alice stands.
        with tempfile.NamedTemporaryFile(suffix=".png", delete=False) as file:
            file.write(png(30, 160, 90))
        self.addCleanup(os.remove, file.name)
        self.driver.find_element(By.XPATH, "//summary[normalize-space(.)='Post a picture']").click()
        self.field("Picture").send_keys(file.name)
        self.wait(lambda d: d.find_element(By.CSS_SELECTOR, ".picture-preview").is_displayed(), "the preview")
        self.field("Caption").send_keys("Posted from the page")
        self.button("Post").click()
        self.wait(lambda d: len(self.cards()) == 2, "alice's picture in the list")
        mine = self.cards()[0]
        self.assertIn("Posted from the page", self.card(mine).text)
        self.assertEqual(self.card(mine).find_elements(By.XPATH, ".//button[normalize-space(.)='Report']"), [])
        seen = bob.request("picture.nearby", radius=1000)["pictures"]
        self.assertIn(("Posted from the page", "alice"),
                      [(p.get("caption"), p["by"]["username"]) for p in seen])

        # Ghost mode: a picture that would show where alice stands is refused, and the refusal is shown.
        self.button("Pause 1 h").click()
        self.wait(lambda d: self.button("Resume sharing").is_displayed(), "sharing paused")
        self.field("Picture").send_keys(file.name)
        self.button("Post").click()
        self.alert_says("paused")
        self.assertEqual(len(self.cards()), 2)
        self.button("Resume sharing").click()
        self.wait(lambda d: not self.button("Resume sharing").is_displayed(), "sharing resumed")

        # A private event: a wrong password is refused in the alert; the right one shows its pictures, live too.
        bob.request("event.create", tag="secret", title="Bob's party", password="open sesame")
        party = bob.post("At the party", (120, 40, 160), event="secret")
        self.field("Event tag or title").send_keys("secret")
        self.button("Find events").click()
        self.wait(lambda d: d.find_elements(By.CSS_SELECTOR, ".event-list [data-event='secret']"), "the event found")
        self.driver.find_element(By.CSS_SELECTOR, "button[aria-label='Join #secret']").click()
        self.field("Password for #secret").send_keys("guess" + Keys.ENTER)
        self.alert_says("Wrong password for #secret")
        self.assertEqual(bob.request("event.get", tag="secret")["event"]["pictures"], 1)
        self.field("Password for #secret").send_keys("open sesame" + Keys.ENTER)
        self.wait(lambda d: self.cards() == [party["id"]], "the private event's picture after joining")
        self.assertEqual(self.driver.find_element(By.CSS_SELECTOR, ".pictures-title").text, "#secret")
        later = bob.post("Later at the party", (160, 160, 40), event="secret")
        self.wait(lambda d: self.cards() == [later["id"], party["id"]], "a new picture of the event, live")
        self.shot("event")

        # An event created on the page, with a password: private on the hub, shown (empty) on the page.
        self.driver.find_element(By.XPATH, "//summary[normalize-space(.)='Create an event']").click()
        self.field("Tag").send_keys("#Picnic")
        self.field("Title").send_keys("Sunday picnic")
        self.field("Event password").send_keys("baskets")
        self.button("Create event").click()
        self.wait(lambda d: d.find_element(By.CSS_SELECTOR, ".pictures-title").text == "#picnic", "the new event")
        self.assertEqual(self.cards(), [])
        event = bob.request("event.search", q="picnic")["events"][0]
        self.assertEqual((event["tag"], event["private"], event["member"]), ("picnic", True, False))

        # Back to nearby: alice's own picture and bob's first, as before.
        self.button("Back to nearby").click()
        self.wait(lambda d: self.cards() == [mine, first["id"]], "the nearby list again")

        # Alice deletes her own picture (after saying yes): gone from the page and from the hub.
        self.card(mine).find_element(By.XPATH, ".//button[normalize-space(.)='Delete']").click()
        self.driver.switch_to.alert.accept()
        self.wait(lambda d: self.cards() == [first["id"]], "alice's picture deleted")
        with self.assertRaisesRegex(AssertionError, "not_found"):
            bob.request("picture.get", picture=mine)

        self.assert_clean()
        bob.close()

    def test_paging_with_more_nearest_first(self):
        Person(self.hub, "alice", "Alice").close()
        posted = {}
        # 52 pictures (more than a page of 50) from two posters, each under the hourly limit, at distances that grow.
        for poster, offset in (("bob", 0), ("carol", 26)):
            person = Person(self.hub, poster, poster.title())
            for n in range(26):
                step = offset + n + 1
                person.request("pos", lat=HERE["lat"] + step * 0.0001, lon=HERE["lon"])
                picture = person.post(f"{poster} {n}", (step * 4, 100, 255 - step * 4))
                posted[picture["id"]] = step
            person.close()

        self.sign_in("alice")
        self.tab("Pictures")
        Select(self.field("Sort by")).select_by_visible_text("Nearest")
        self.wait(lambda d: len(self.cards()) == 50, "the first page")
        more = self.button("More")
        self.assertTrue(more.is_displayed())
        more.click()
        self.wait(lambda d: len(self.cards()) == 52, "the second page after More")
        self.assertFalse(self.button("More").is_displayed())
        # Every picture once, nearest first.
        self.assertEqual(self.cards(), sorted(posted, key=lambda picture: posted[picture]))
        self.assert_clean()

    # Chat

    def test_chat_live_unread_read_earlier_sent_and_refused(self):
        alice = Person(self.hub, "alice", "Alice")
        bob = Person(self.hub, "bob", "Bob")
        carol = Person(self.hub, "carol", "Carol")
        self.befriend(alice, bob)
        self.befriend(alice, carol)
        alice.close()
        # More than a page of history: the oldest need "Earlier".
        for n in range(1, 53):
            bob.request("chat.send", to=alice.id, text=f"old {n}")

        self.sign_in("alice")
        self.wait(lambda d: self.unread_badge() == 52, "the unread count on the Chat tab")
        badge = self.driver.find_element(By.CSS_SELECTOR, "[role=tab] .badge[data-unread]")
        self.assertTrue(badge.is_displayed())

        # A message arriving while another tab is shown: the badge counts it.
        hello = bob.request("chat.send", to=alice.id, text="Hello Alice")["message"]
        self.wait(lambda d: self.unread_badge() == 53, "the live message counted")
        self.tab("Chat")
        row = self.driver.find_element(By.CSS_SELECTOR, f".conversation-list [data-conversation='{bob.id}']")
        self.wait(lambda d: "Hello Alice" in row.text and "53" in row.text, "the conversation with its unread count")
        self.shot("chat-list")

        # Opening it shows the latest page, oldest first, and marks it read on the hub.
        phone = Person(self.hub, "alice", "Alice", login=True)  # alice's other device
        row.find_element(By.TAG_NAME, "button").click()
        self.wait(lambda d: self.messages()[-1:] == ["Hello Alice"], "the conversation")
        self.assertEqual(self.messages(), [f"old {n}" for n in range(4, 53)] + ["Hello Alice"])
        self.wait(lambda d: self.unread_badge() == 0, "the badge cleared")
        unread = phone.request("chat.list")["conversations"][0]["unread"]
        self.assertEqual(unread, 0)
        self.assertEqual(phone.event("chat.read")["upto"], hello["id"])

        # Earlier pages back to the first message.
        self.button("Earlier").click()
        self.wait(lambda d: len(self.messages()) == 53, "the earlier messages")
        self.assertEqual(self.messages()[:3], ["old 1", "old 2", "old 3"])
        self.assertFalse(self.button("Earlier").is_displayed())

        # The page sends with the keyboard; bob receives it.
        self.field("Message").send_keys("Hi Bob" + Keys.ENTER)
        sent = bob.event("chat.msg", lambda e: e["message"]["from"] == phone.id)["message"]
        self.assertEqual(sent["text"], "Hi Bob")
        self.wait(lambda d: d.find_elements(By.CSS_SELECTOR, f".messages [data-message='{sent['id']}'].mine"),
                  "the sent message in the conversation")
        self.assertEqual(self.field("Message").get_attribute("value"), "")

        # Bob's answer shows live and, the conversation being on screen, is read at once.
        answer = bob.request("chat.send", to=alice.id, text="Nice to hear from you")["message"]
        self.wait(lambda d: self.messages()[-1:] == ["Nice to hear from you"], "bob's answer, live")
        self.assertEqual(phone.event("chat.read", lambda e: e["upto"] == answer["id"])["unread"], 0)
        self.assertEqual(self.unread_badge(), 0)

        # What alice writes on her other device shows here too, as hers.
        other = phone.request("chat.send", to=bob.id, text="(sent from my phone)")["message"]
        self.wait(lambda d: d.find_elements(By.CSS_SELECTOR, f".messages [data-message='{other['id']}'].mine"),
                  "the other device's message")
        self.both_widths("chat", "const panel = document.querySelector('.panel'); panel.scrollTop = panel.scrollHeight")

        # The hub restarted under the page: it reconnects by itself and reads the open conversation again. The message
        # is sent as soon as the hub is up, normally before the page is back (its first retry waits at least 250 ms),
        # so it comes from reading again; should the page be back first, it comes live: shown either way.
        self.hub.stop()
        self.wait(lambda d: self.connection() != "connected", "the page noticing the hub is gone")
        self.hub.start()
        bob.reconnect()
        phone.reconnect()
        carol.reconnect()
        back = bob.request("chat.send", to=alice.id, text="Back again")["message"]
        self.wait(lambda d: self.connection() == "connected", "the page reconnected")
        self.wait(lambda d: d.find_elements(By.CSS_SELECTOR, f".messages [data-message='{back['id']}']"),
                  "the message sent around the restart")
        self.wait(lambda d: self.unread_badge() == 0, "the message read, the conversation being shown")

        # With the Friends tab shown, a message waits unread; read on the other device, the count clears here.
        self.tab("Friends")
        waiting = bob.request("chat.send", to=alice.id, text="Are you there?")["message"]
        self.wait(lambda d: self.unread_badge() == 1, "the message counted while the chat is not shown")
        phone.request("chat.read", **{"with": bob.id, "upto": waiting["id"]})
        self.wait(lambda d: self.unread_badge() == 0, "the read mark of the other device")

        # A friend's row leads to the conversation; a refusal (not friends any more) is shown, the text kept.
        self.driver.find_element(By.CSS_SELECTOR, "button[aria-label='Chat with Bob']").click()
        self.wait(lambda d: self.messages()[-1:] == ["Are you there?"], "the conversation from the friend's row")
        bob.request("friend.remove", user=alice.id)
        self.field("Message").send_keys("Still there?")
        self.button("Send").click()
        self.alert_says("not your friend")
        self.assertEqual(self.field("Message").get_attribute("value"), "Still there?")

        # A friend without a conversation is chosen from the list, and a first message starts it.
        self.button("← Chats").click()
        Select(self.field("Start a chat with")).select_by_visible_text("Carol")
        self.button("Start chat").click()
        self.wait(lambda d: d.find_element(By.CSS_SELECTOR, ".conversation-title").text == "Carol", "carol's chat")
        self.assertTrue(self.driver.find_element(By.CSS_SELECTOR, ".no-messages").is_displayed())
        self.assertEqual(self.field("Message").get_attribute("value"), "")  # bob's unsent text stays bob's
        self.field("Message").send_keys("Hello Carol" + Keys.ENTER)
        self.assertEqual(carol.event("chat.msg")["message"]["text"], "Hello Carol")

        # Signing out forgets the conversations, the messages and the count.
        self.driver.find_element(By.CSS_SELECTOR, ".sign-out").click()
        self.wait(lambda d: d.find_element(By.CSS_SELECTOR, ".sign-in").is_displayed(), "the sign-in form")
        self.assertEqual(self.driver.find_elements(By.CSS_SELECTOR, "[data-conversation], [data-message]"), [])
        self.assertEqual(self.unread_badge(), 0)

        self.assert_clean()
        phone.close()
        bob.close()
        carol.close()


if __name__ == "__main__":
    unittest.main(verbosity=2)
