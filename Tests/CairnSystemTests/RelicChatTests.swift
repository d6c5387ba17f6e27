// Relics and chat over real sockets with several clients: a relic cannot be opened from afar, walking into it
// pushes `relic.appear` and opening then works, a wrong password is refused, expiry is pushed and then refuses
// opening, only the creator deletes, and chat works between friends only, with paging and unread counts. Relics
// and messages survive kill -9. The expiry test drives a manual clock the hub reads, so nothing waits a minute.
import CairnCore
import CairnTestSupport
import Foundation
import Glibc
import Testing

extension ServerIntegration {
    @Suite struct RelicChatTests {
        /// Alice leaves relics at 48.85, 2.35; Bob walks. 0.001° of latitude is about 111 m.
        func scene(_ hub: RunningHub) throws -> (alice: (WebSocketClient, Int), bob: (WebSocketClient, Int)) {
            let alice = try hub.member("alice")
            let bob = try hub.member("bob")
            try stand(alice.0, 48.85, 2.35)
            return (alice, bob)
        }

        /// Reports a fix twice: relics trust a session's first fix only once a second one confirms it.
        func stand(_ client: WebSocketClient, _ lat: Double, _ lon: Double) throws {
            for _ in 0..<2 { _ = try client.requestOK("pos", ["lat": lat, "lon": lon]) }
        }

        func relicID(_ reply: [String: Any]) throws -> Int {
            try #require((reply["relic"] as? [String: Any])?["id"] as? Int, "no relic in \(reply)")
        }

        @Test func farIsTooFarWalkingInAppearsAndOpens() throws {
            let hub = try RunningHub()
            defer { hub.removeData() }
            let (alice, bob) = try scene(hub)
            let id = try relicID(try alice.0.requestOK("relic.create", ["text": "under the bridge", "radius": 50]))
            try stand(bob.0, 48.852, 2.35)
            let far = try bob.0.request("relic.open", ["relic": id])
            #expect(errorCode(far) == "too_far")
            let distance = try #require((far["error"] as? [String: Any])?["distance"] as? Int)
            #expect((215...230).contains(distance))
            let markers = try #require(try bob.0.requestOK("relic.nearby")["relics"] as? [[String: Any]])
            #expect(markers.map { $0["id"] as? Int } == [id])
            #expect(markers[0]["text"] == nil)
            try bob.0.send(["op": "pos", "lat": 48.8502, "lon": 2.35])
            let appear = try bob.0.nextEvent("relic.appear")
            #expect((appear["relic"] as? [String: Any])?["id"] as? Int == id)
            let open = try bob.0.requestOK("relic.open", ["relic": id])
            #expect((open["relic"] as? [String: Any])?["text"] as? String == "under the bridge")
            try bob.0.send(["op": "pos", "lat": 48.852, "lon": 2.35])  // walking out
            let vanish = try bob.0.nextEvent("relic.vanish")
            #expect(vanish["id"] as? Int == id)
        }

        @Test func aRelicsMediaIsServedThroughTheSignedURLItHandsOut() throws {
            let hub = try RunningHub()
            defer { hub.removeData() }
            let (alice, aliceToken) = try hub.registered("alice")
            try stand(alice, 48.85, 2.35)
            let (bob, _) = try hub.registered("bob")
            let picture: [UInt8] = [0xFF, 0xD8, 0xFF, 0xE0] + Array("a photo left under the bridge".utf8)
            let upload = try HTTPClient.post(
                port: hub.port, path: "/v1/media", body: picture, contentType: "image/jpeg",
                headers: ["Authorization": "Bearer \(aliceToken)"], timeout: 20)
            #expect(upload.status == 201)
            let media = try #require(try upload.jsonObject()["media"] as? String)
            // Bob cannot attach Alice's upload to a relic of his own.
            try stand(bob, 48.8501, 2.35)
            #expect(
                errorCode(try bob.request("relic.create", ["text": "", "radius": 50, "media": media])) == "not_found")
            let id = try relicID(try alice.requestOK("relic.create", ["text": "look", "radius": 50, "media": media]))
            let open = try #require(try bob.requestOK("relic.open", ["relic": id])["relic"] as? [String: Any])
            #expect(open["media"] as? String == media)
            let url = try #require(open["media_url"] as? String)
            let fetched = try HTTPClient.get(port: hub.port, path: url)
            #expect(fetched.status == 200)
            #expect(fetched.body == picture)
            #expect(fetched.headers["content-type"] == "image/jpeg")
            // The signature covers the id: pointing the same signature at other media is refused.
            let other = url.replacingOccurrences(of: media, with: String(repeating: "0", count: 64))
            #expect(try HTTPClient.get(port: hub.port, path: other).status == 403)
            var tampered = Array(url.utf8)
            tampered[tampered.count - 2] =
                tampered[tampered.count - 2] == UInt8(ascii: "A") ? UInt8(ascii: "B") : UInt8(ascii: "A")
            #expect(try HTTPClient.get(port: hub.port, path: String(decoding: tampered, as: UTF8.self)).status == 403)
            // Markers never carry the media.
            let markers = try #require(try bob.requestOK("relic.nearby")["relics"] as? [[String: Any]])
            #expect(markers.first?["media"] == nil && markers.first?["media_url"] == nil)
        }

        @Test func wrongPasswordIsRefusedAndTheRightOneOpens() throws {
            let hub = try RunningHub()
            defer { hub.removeData() }
            let (alice, bob) = try scene(hub)
            let id = try relicID(
                try alice.0.requestOK("relic.create", ["text": "vault", "radius": 30, "password": "open sesame"]))
            try stand(bob.0, 48.8501, 2.35)
            let wrong = try bob.0.request("relic.open", ["relic": id, "password": "guess"])
            #expect(errorCode(wrong) == "wrong_password")
            let right = try bob.0.requestOK("relic.open", ["relic": id, "password": "open sesame"])
            #expect((right["relic"] as? [String: Any])?["text"] as? String == "vault")
        }

        @Test func expiryIsPushedAndOpeningThenFails() throws {
            let clock = ManualClock(start: SystemClock().now())
            let hub = try RunningHub(clock: clock)
            defer { hub.removeData() }
            let (alice, bob) = try scene(hub)
            let id = try relicID(try alice.0.requestOK("relic.create", ["text": "soon gone", "radius": 50, "ttl": 60]))
            try stand(bob.0, 48.8501, 2.35)
            _ = try bob.0.nextEvent("relic.appear")
            clock.advance(by: 60_000)
            let expired = try bob.0.nextEvent("relic.expired", timeout: 10)  // the sweep runs every second
            #expect(expired["id"] as? Int == id)
            let open = try bob.0.request("relic.open", ["relic": id])
            #expect(errorCode(open) == "expired")
            let mine = try #require(try alice.0.requestOK("relic.mine")["relics"] as? [[String: Any]])
            #expect(mine.first?["state"] as? String == "expired")
        }

        @Test func onlyTheCreatorDeletes() throws {
            let hub = try RunningHub()
            defer { hub.removeData() }
            let (alice, bob) = try scene(hub)
            let id = try relicID(try alice.0.requestOK("relic.create", ["text": "mine", "radius": 50]))
            let refused = try bob.0.request("relic.delete", ["relic": id])
            #expect(errorCode(refused) == "not_owner")
            try stand(bob.0, 48.8501, 2.35)
            _ = try bob.0.nextEvent("relic.appear")
            _ = try alice.0.requestOK("relic.delete", ["relic": id])
            let vanish = try bob.0.nextEvent("relic.vanish")
            #expect(vanish["id"] as? Int == id)
            #expect(errorCode(try bob.0.request("relic.open", ["relic": id])) == "not_found")
        }

        @Test func chatBetweenFriendsWithPagingAndUnread() throws {
            let hub = try RunningHub()
            defer { hub.removeData() }
            let alice = try hub.member("alice")
            let bob = try hub.member("bob")
            let eve = try hub.member("eve")
            try hub.befriend(alice, bob)
            #expect(errorCode(try eve.0.request("chat.send", ["to": alice.1, "text": "hi"])) == "not_friends")
            var ids: [Int] = []
            for n in 1...5 {
                let sent = try alice.0.requestOK("chat.send", ["to": bob.1, "text": "message \(n)"])
                ids.append(try #require((sent["message"] as? [String: Any])?["id"] as? Int))
                let pushed = try bob.0.nextEvent("chat.msg")
                #expect((pushed["message"] as? [String: Any])?["text"] as? String == "message \(n)")
            }
            let page = try bob.0.requestOK("chat.history", ["with": alice.1, "limit": 2])
            #expect(
                (page["messages"] as? [[String: Any]])?.map { $0["text"] as? String } == ["message 4", "message 5"])
            #expect(page["more"] as? Bool == true)
            let older = try bob.0.requestOK("chat.history", ["with": alice.1, "limit": 2, "before": ids[3]])
            #expect((older["messages"] as? [[String: Any]])?.map { $0["id"] as? Int } == [ids[1], ids[2]])
            let list = try #require(try bob.0.requestOK("chat.list")["conversations"] as? [[String: Any]])
            #expect(list.count == 1)
            #expect(list[0]["with"] as? Int == alice.1)
            #expect(list[0]["unread"] as? Int == 5)
            let read = try bob.0.requestOK("chat.read", ["with": alice.1, "upto": ids[2]])
            #expect(read["unread"] as? Int == 2)
            let after = try #require(try bob.0.requestOK("chat.list")["conversations"] as? [[String: Any]])
            #expect(after[0]["unread"] as? Int == 2)
            #expect((try eve.0.requestOK("chat.list")["conversations"] as? [Any])?.isEmpty == true)
        }

        @Test func kill9KeepsRelicsAndMessages() throws {
            let data = NSTemporaryDirectory() + "cairn-k9r-\(UUID().uuidString)"
            defer { try? FileManager.default.removeItem(atPath: data) }
            var (server, port) = try startServeProcess(data: data)
            let alice = try registerMember(port: port, "alice")
            let bob = try registerMember(port: port, "bob")
            _ = try alice.0.requestOK("friend.request", ["user": bob.1])
            _ = try bob.0.requestOK("friend.accept", ["user": alice.1])
            try stand(alice.0, 48.85, 2.35)
            let relic = try relicID(try alice.0.requestOK("relic.create", ["text": "kept", "radius": 100]))
            _ = try alice.0.requestOK("chat.send", ["to": bob.1, "text": "kept too"])
            server.kill()
            _ = try server.waitForExit(timeout: 15)
            (server, port) = try startServeProcess(data: data)
            let b = try WebSocketClient(port: port, timeout: 10)
            _ = try b.requestOK("login", ["username": "bob", "password": "password1"])
            try stand(b, 48.8501, 2.35)
            let open = try b.requestOK("relic.open", ["relic": relic])
            #expect((open["relic"] as? [String: Any])?["text"] as? String == "kept")
            let history = try b.requestOK("chat.history", ["with": alice.1])
            #expect((history["messages"] as? [[String: Any]])?.map { $0["text"] as? String } == ["kept too"])
            server.signal(SIGTERM)
            #expect(try server.waitForExit(timeout: 15) == 0)
        }
    }
}
