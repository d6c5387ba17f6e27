// Pictures and events over real sockets (seed 004): posting nearby and to events, likes, deletion, reports hiding a
// picture from its reporter at once and from everyone at the threshold, pages that stay stable while pictures
// arrive, search, live `picture.new`, and a private event whose pictures never reach a non-member by any route.
// 0.001° of latitude is about 111 m.
import CairnApp
import CairnCore
import CairnTestSupport
import Foundation
import Testing

extension ServerIntegration {
    @Suite struct PictureTests {
        /// A registered user with a token and an uploaded JPEG.
        struct Poster {
            let client: WebSocketClient
            let id: Int
            let token: String
            let media: String
        }

        func poster(_ hub: RunningHub, _ name: String, lat: Double = 48.85, lon: Double = 2.35) throws -> Poster {
            let c = try hub.client()
            let reply = try c.requestOK("register", ["username": name, "password": "password1"])
            let token = try #require(reply["token"] as? String)
            let id = try #require((reply["user"] as? [String: Any])?["id"] as? Int)
            _ = try c.requestOK("pos", ["lat": lat, "lon": lon])
            let media = try upload(hub, token, [0xFF, 0xD8, 0xFF, 0xE0] + Array("photo of \(name)".utf8))
            return Poster(client: c, id: id, token: token, media: media)
        }

        func upload(_ hub: RunningHub, _ token: String, _ bytes: [UInt8], type: String = "image/jpeg") throws
            -> String
        {
            let upload = try HTTPClient.post(
                port: hub.port, path: "/v1/media", body: bytes, contentType: type,
                headers: ["Authorization": "Bearer \(token)"], timeout: 20)
            #expect(upload.status == 201, "\(String(decoding: upload.body, as: UTF8.self))")
            return try #require(try upload.jsonObject()["media"] as? String)
        }

        /// Posts `p`'s upload; to an event it is placed (at the poster's position) only with `place`.
        func post(_ p: Poster, caption: String? = nil, event: String? = nil, place: Bool = false) throws -> [String:
            Any]
        {
            var fields: [String: Any] = ["media": p.media]
            if let caption { fields["caption"] = caption }
            if let event { fields["event"] = event }
            if place { fields["place"] = true }
            return try #require(try p.client.requestOK("picture.post", fields)["picture"] as? [String: Any])
        }

        func ids(_ reply: [String: Any]) -> [Int] {
            ((reply["pictures"] as? [[String: Any]]) ?? []).compactMap { $0["id"] as? Int }
        }

        func nearby(_ c: WebSocketClient, radius: Double = 1_000, sort: String? = nil) throws -> [Int] {
            var fields: [String: Any] = ["radius": radius]
            if let sort { fields["sort"] = sort }
            return ids(try c.requestOK("picture.nearby", fields))
        }

        @Test func postLikeUnlikeDeleteAndDownload() throws {
            let hub = try RunningHub()
            defer { hub.removeData() }
            let alice = try poster(hub, "alice")
            let bob = try poster(hub, "bob", lat: 48.851)
            let picture = try post(alice, caption: "the bridge at dawn")
            let id = try #require(picture["id"] as? Int)
            #expect((picture["by"] as? [String: Any])?["username"] as? String == "alice")
            #expect(picture["caption"] as? String == "the bridge at dawn")
            #expect(picture["lat"] as? Double == 48.85)
            #expect(picture["likes"] as? Int == 0)
            let seen = try #require(
                (try bob.client.requestOK("picture.nearby", ["radius": 500])["pictures"] as? [[String: Any]])?.first)
            #expect(seen["id"] as? Int == id)
            #expect((100...120).contains(seen["distance"] as? Int ?? -1))
            #expect(try nearby(bob.client, radius: 50).isEmpty)  // 111 m away
            // Likes are idempotent and counted once per user.
            for _ in 0..<2 { #expect(try bob.client.requestOK("picture.like", ["picture": id])["likes"] as? Int == 1) }
            #expect(try alice.client.requestOK("picture.like", ["picture": id])["likes"] as? Int == 2)
            let liked = try bob.client.requestOK("picture.get", ["picture": id])["picture"] as? [String: Any]
            #expect(liked?["liked"] as? Bool == true)
            #expect(liked?["likes"] as? Int == 2)
            for _ in 0..<2 {
                #expect(try bob.client.requestOK("picture.unlike", ["picture": id])["likes"] as? Int == 1)
            }
            // The image through its signed URL, and as an attachment through the download URL.
            let url = try #require(seen["url"] as? String)
            let shown = try HTTPClient.get(port: hub.port, path: url)
            #expect(shown.status == 200)
            #expect(shown.headers["content-disposition"] == nil)
            let download = try HTTPClient.get(port: hub.port, path: try #require(seen["download_url"] as? String))
            #expect(download.status == 200)
            #expect(download.body == shown.body)
            #expect(download.headers["content-disposition"]?.hasPrefix("attachment") == true)
            // Only the poster deletes.
            #expect(errorCode(try bob.client.request("picture.delete", ["picture": id])) == "not_owner")
            #expect(try alice.client.requestOK("picture.delete", ["picture": id])["picture"] as? Int == id)
            #expect(try nearby(bob.client).isEmpty)
            #expect(errorCode(try bob.client.request("picture.get", ["picture": id])) == "not_found")
            #expect(errorCode(try bob.client.request("picture.like", ["picture": id])) == "not_found")
        }

        @Test func postRefusals() throws {
            let hub = try RunningHub { $0.hub.pictureSettings.postsPerHour = 2 }
            defer { hub.removeData() }
            let alice = try poster(hub, "alice")
            let bob = try poster(hub, "bob")
            // Someone else's upload, a video, a missing position, a long caption, a bad tag, a guest.
            #expect(errorCode(try bob.client.request("picture.post", ["media": alice.media])) == "not_found")
            let video = try upload(
                hub, bob.token, [0, 0, 0, 0x18] + Array("ftypmp42 a short clip".utf8), type: "video/mp4")
            #expect(errorCode(try bob.client.request("picture.post", ["media": video])) == "bad_request")
            let (carol, carolToken) = try hub.registered("carol")
            let carolMedia = try upload(
                hub, carolToken, [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 1, 2], type: "image/png")
            let nowhere = try carol.request("picture.post", ["media": carolMedia])
            #expect(errorCode(nowhere) == "bad_request")
            #expect(errorMessage(nowhere).contains("pos"))
            // To an event, no position is needed.
            _ = try carol.requestOK("picture.post", ["media": carolMedia, "event": "#Picnic"])
            // Ghost mode: paused, dora may not place a picture (nearby, or to an event with `place`), as she may not
            // leave a relic; to an event without `place` it goes and carries no place, for anyone by any route.
            let dora = try poster(hub, "dora")
            _ = try dora.client.requestOK("share.pause")
            for fields: [String: Any] in [
                ["media": dora.media], ["media": dora.media, "event": "picnic", "place": true],
            ] {
                let refused = try dora.client.request("picture.post", fields)
                #expect(errorCode(refused) == "forbidden" && errorMessage(refused).contains("share.pause"))
            }
            let unplaced = try post(dora, event: "picnic")
            #expect(unplaced["lat"] == nil && unplaced["lon"] == nil)
            let unplacedID = try #require(unplaced["id"] as? Int)
            let read = try #require(
                try bob.client.requestOK("picture.get", ["picture": unplacedID])["picture"] as? [String: Any])
            #expect(read["lat"] == nil && read["lon"] == nil)
            #expect(try !nearby(bob.client).contains(unplacedID))
            let long = String(repeating: "é", count: 251)  // 502 bytes
            #expect(
                errorCode(try alice.client.request("picture.post", ["media": alice.media, "caption": long]))
                    == "too_large")
            #expect(
                errorCode(try alice.client.request("picture.post", ["media": alice.media, "event": "no spaces"]))
                    == "bad_request")
            #expect(errorCode(try alice.client.request("picture.post", ["caption": "no media"])) == "bad_request")
            let guest = try hub.client()
            _ = try guest.requestOK("guest")
            _ = try guest.requestOK("pos", ["lat": 48.85, "lon": 2.35])
            #expect(errorCode(try guest.request("picture.post", ["media": alice.media])) == "forbidden")
            // Posts per hour.
            _ = try post(alice)
            _ = try post(alice)
            let third = try alice.client.request("picture.post", ["media": alice.media])
            #expect(errorCode(third) == "rate_limited")
            #expect(try nearby(bob.client).count == 2)
        }

        @Test func reportsHideFromTheReporterAtOnceAndFromEveryoneAtTheThreshold() throws {
            let hub = try RunningHub { $0.hub.pictureSettings.reportThreshold = 2 }
            defer { hub.removeData() }
            let alice = try poster(hub, "alice")
            let bob = try poster(hub, "bob")
            let carol = try poster(hub, "carol")
            let dave = try poster(hub, "dave")
            let id = try #require(try post(alice, caption: "spam spam")["id"] as? Int)
            let keep = try #require(try post(alice, caption: "fine")["id"] as? Int)
            #expect(
                errorCode(try bob.client.request("picture.report", ["picture": id, "reason": "ugly"])) == "bad_request")
            #expect(
                errorCode(try bob.client.request("picture.report", ["picture": id, "reason": "other"])) == "bad_request"
            )
            #expect(
                errorCode(try alice.client.request("picture.report", ["picture": id, "reason": "spam"])) == "forbidden")
            let first = try bob.client.requestOK("picture.report", ["picture": id, "reason": "spam"])
            #expect(first["hidden"] as? Bool == false)
            // Under review: its poster cannot delete it (nor its reports) out of the admins' queue.
            #expect(errorCode(try alice.client.request("picture.delete", ["picture": id])) == "forbidden")
            #expect(try nearby(bob.client) == [keep])  // hidden from its reporter at once
            #expect(errorCode(try bob.client.request("picture.get", ["picture": id])) == "not_found")
            #expect(try nearby(carol.client) == [keep, id])
            // A second report by the same user, and a guest's, do not count.
            _ = try bob.client.requestOK("picture.report", ["picture": id, "reason": "other", "text": "still spam"])
            let guest = try hub.client()
            _ = try guest.requestOK("guest")
            #expect(
                try guest.requestOK("picture.report", ["picture": id, "reason": "spam"])["hidden"] as? Bool == false)
            #expect(try nearby(carol.client) == [keep, id])
            let second = try dave.client.requestOK("picture.report", ["picture": id, "reason": "nudity"])
            #expect(second["hidden"] as? Bool == true)
            #expect(try nearby(carol.client) == [keep])
            #expect(errorCode(try carol.client.request("picture.get", ["picture": id])) == "not_found")
            #expect(errorCode(try carol.client.request("picture.like", ["picture": id])) == "not_found")
        }

        @Test func pagesStayStableWhilePicturesArrive() throws {
            let hub = try RunningHub { $0.hub.picturePageSize = 3 }
            defer { hub.removeData() }
            let alice = try poster(hub, "alice")
            let bob = try poster(hub, "bob")
            var posted: [Int] = []
            for i in 0..<7 {
                _ = try alice.client.requestOK("pos", ["lat": 48.85 + Double(i) * 0.0005, "lon": 2.35])
                posted.append(try #require(try post(alice, caption: "picture \(i)")["id"] as? Int))
            }
            // Likes: pictures 2 and 5 liked by both, 4 by one.
            for (i, likers) in [(2, [alice, bob]), (5, [alice, bob]), (4, [bob])] {
                for p in likers { _ = try p.client.requestOK("picture.like", ["picture": posted[i]]) }
            }
            let expected: [String: [Int]] = [
                "date": posted.reversed(),
                "likes": [posted[5], posted[2], posted[4], posted[6], posted[3], posted[1], posted[0]],
                "distance": posted,  // bob stands at the first one
            ]
            for sort in ["date", "likes", "distance"] {
                var seen: [Int] = []
                var cursor: String?
                var pages = 0
                var late = 0
                repeat {
                    var fields: [String: Any] = ["radius": 2_000, "sort": sort]
                    if let cursor { fields["cursor"] = cursor }
                    let reply = try bob.client.requestOK("picture.nearby", fields)
                    seen += ids(reply)
                    cursor = reply["cursor"] as? String
                    pages += 1
                    if pages == 1 {
                        // A picture arrives between pages where the first one stands; bob walks away (the cursor
                        // keeps his first place).
                        _ = try alice.client.requestOK("pos", ["lat": 48.85, "lon": 2.35])
                        late = try #require(try post(alice, caption: "late \(sort)")["id"] as? Int)
                        _ = try bob.client.requestOK("pos", ["lat": 48.86, "lon": 2.35])
                    }
                } while cursor != nil && pages < 10
                // Never a duplicate; the pictures there at the start all come, in order.
                #expect(Set(seen).count == seen.count, "\(sort)")
                #expect(seen.filter { posted.contains($0) } == expected[sort], "\(sort)")
                // The late one sorts before the cursor by date (newer) and by distance (at distance 0, newer than
                // the first): it is not shown. By likes (none) it sorts after the cursor and is shown.
                #expect(seen.contains(late) == (sort == "likes"), "\(sort)")
                _ = try bob.client.requestOK("pos", ["lat": 48.85, "lon": 2.35])
            }
            // A cursor of one sort is refused by another.
            let first = try bob.client.requestOK("picture.nearby", ["radius": 2_000, "sort": "likes"])
            let cursor = try #require(first["cursor"] as? String)
            let mixed = try bob.client.request("picture.nearby", ["radius": 2_000, "sort": "date", "cursor": cursor])
            #expect(errorCode(mixed) == "bad_request")
            #expect(errorCode(try bob.client.request("picture.nearby", ["radius": 100_000])) == "bad_request")
            #expect(
                errorCode(try bob.client.request("picture.nearby", ["radius": 100, "sort": "size"])) == "bad_request")
        }

        @Test func aPrivateEventsPicturesNeverReachANonMember() throws {
            let hub = try RunningHub()
            defer { hub.removeData() }
            let alice = try poster(hub, "alice")
            let bob = try poster(hub, "bob")
            let carol = try poster(hub, "carol")
            let created = try alice.client.requestOK(
                "event.create", ["tag": "#Wedding", "title": "Our wedding", "password": "rings"])
            let event = try #require(created["event"] as? [String: Any])
            #expect(event["tag"] as? String == "wedding")
            #expect(event["private"] as? Bool == true)
            #expect(errorCode(try bob.client.request("event.create", ["tag": "wedding"])) == "bad_request")
            _ = try bob.client.requestOK("pictures.watch", ["radius": 1_000])
            _ = try carol.client.requestOK("pictures.watch", ["radius": 1_000])
            #expect(errorCode(try bob.client.request("pictures.watch", ["event": "wedding"])) == "forbidden")
            #expect(
                errorCode(try carol.client.request("event.join", ["tag": "wedding", "password": "no"]))
                    == "wrong_password")
            let joined = try carol.client.requestOK("event.join", ["tag": "wedding", "password": "rings"])
            #expect((joined["event"] as? [String: Any])?["member"] as? Bool == true)
            let picture = try post(alice, caption: "first dance #dance", event: "wedding", place: true)
            let id = try #require(picture["id"] as? Int)
            #expect(picture["private"] as? Bool == true)
            // Carol, a member, hears of it and sees it everywhere.
            let pushed = try carol.client.nextEvent("picture.new")
            #expect((pushed["picture"] as? [String: Any])?["id"] as? Int == id)
            #expect(try nearby(carol.client) == [id])
            #expect(ids(try carol.client.requestOK("event.pictures", ["tag": "wedding"])) == [id])
            #expect(ids(try carol.client.requestOK("picture.search", ["q": "dance"])) == [id])
            // Bob, who has not joined: not by any route.
            #expect(try nearby(bob.client).isEmpty)
            #expect(try nearby(bob.client, sort: "distance").isEmpty)
            #expect(try nearby(bob.client, sort: "likes").isEmpty)
            #expect(errorCode(try bob.client.request("event.pictures", ["tag": "wedding"])) == "forbidden")
            #expect(errorCode(try bob.client.request("picture.get", ["picture": id])) == "forbidden")
            #expect(errorCode(try bob.client.request("picture.like", ["picture": id])) == "forbidden")
            #expect(
                errorCode(try bob.client.request("picture.report", ["picture": id, "reason": "spam"])) == "forbidden")
            #expect(ids(try bob.client.requestOK("picture.search", ["q": "dance"])).isEmpty)
            #expect(ids(try bob.client.requestOK("picture.search", ["q": "#wedding"])).isEmpty)
            #expect(
                errorCode(try bob.client.request("picture.post", ["media": bob.media, "event": "wedding"]))
                    == "forbidden")
            // The event itself is findable (to join it), its pictures are not.
            let found = try #require(
                try bob.client.requestOK("event.search", ["q": "wed"])["events"] as? [[String: Any]])
            #expect(found.map { $0["tag"] as? String } == ["wedding"])
            #expect(found.first?["member"] as? Bool == false)
            // A public picture posted now reaches bob's watch; the private one never did.
            let open = try #require(try post(alice, caption: "outside")["id"] as? Int)
            let next = try bob.client.nextEvent("picture.new")
            #expect((next["picture"] as? [String: Any])?["id"] as? Int == open)
            // Only the creator deletes the event, and its pictures go with it.
            #expect(errorCode(try carol.client.request("event.delete", ["tag": "wedding"])) == "not_owner")
            _ = try alice.client.requestOK("event.delete", ["tag": "wedding"])
            #expect(errorCode(try carol.client.request("picture.get", ["picture": id])) == "not_found")
            #expect(errorCode(try carol.client.request("event.get", ["tag": "wedding"])) == "not_found")
        }

        @Test func publicEventsSearchAndWatchingAnEvent() throws {
            let hub = try RunningHub()
            defer { hub.removeData() }
            let alice = try poster(hub, "alice")
            let bob = try poster(hub, "bob", lat: 40.0, lon: -3.0)  // far away
            #expect(errorCode(try bob.client.request("pictures.watch", ["event": "party"])) == "not_found")
            // A post to a missing public event creates it.
            let first = try #require(try post(alice, caption: "warming up", event: "#Party")["id"] as? Int)
            let event = try #require(try bob.client.requestOK("event.get", ["tag": "PARTY"])["event"] as? [String: Any])
            #expect(event["private"] as? Bool == false)
            #expect(event["pictures"] as? Int == 1)
            #expect((event["owner"] as? [String: Any])?["username"] as? String == "alice")
            _ = try bob.client.requestOK("pictures.watch", ["event": "party"])
            let second = try #require(try post(alice, caption: "the cake", event: "party")["id"] as? Int)
            let pushed = try bob.client.nextEvent("picture.new")
            #expect((pushed["picture"] as? [String: Any])?["id"] as? Int == second)
            #expect((pushed["picture"] as? [String: Any])?["event"] as? String == "party")
            #expect(ids(try bob.client.requestOK("event.pictures", ["tag": "party"])) == [second, first])
            _ = try bob.client.requestOK("event.join", ["tag": "party"])  // public: nothing to unlock
            // Search by caption word and by hashtag (the event's or one in the caption).
            _ = try post(alice, caption: "a #Cake on the table")
            #expect(ids(try bob.client.requestOK("picture.search", ["q": "CAKE"])).count == 2)
            #expect(ids(try bob.client.requestOK("picture.search", ["q": "#cake"])).count == 1)
            #expect(ids(try bob.client.requestOK("picture.search", ["q": "#party"])) == [second, first])
            #expect(ids(try bob.client.requestOK("picture.search", ["q": "#party cake"])) == [second])
            _ = try bob.client.requestOK("pictures.unwatch")
            let third = try #require(try post(alice, event: "party")["id"] as? Int)
            // Nothing more arrives: the next reply is the only thing queued.
            _ = try bob.client.requestOK("event.get", ["tag": "party"])
            #expect(!bob.client.queuedObjects.contains { $0["ev"] as? String == "picture.new" })
            #expect(third > second)
            let events = try #require(
                try bob.client.requestOK("event.search", ["q": "#par"])["events"] as? [[String: Any]])
            #expect(events.count == 1)
        }

        @Test func picturesSettingsAreLiveAndTheDailyFiguresCountPictures() throws {
            let hub = try RunningHub()
            defer { hub.removeData() }
            let (root, _) = try hub.member("root")
            try AdminTests().grantAdmin("root", in: hub)
            let alice = try poster(hub, "alice")
            let bob = try poster(hub, "bob")
            let guest = try hub.client()
            let guestToken = try #require(try guest.requestOK("guest")["token"] as? String)
            _ = try guest.requestOK("pos", ["lat": 48.85, "lon": 2.35])
            let guestMedia = try upload(hub, guestToken, [0xFF, 0xD8, 0xFF, 0xE0] + Array("a guest's photo".utf8))
            #expect(errorCode(try guest.request("picture.post", ["media": guestMedia])) == "forbidden")
            let read = try root.requestOK("admin.settings.get")
            let defaults = try #require(read["settings"] as? [String: Any])
            #expect(defaults["report_threshold"] as? Int == 3)
            #expect(defaults["guests_may_post"] as? Bool == false)
            let set = try root.requestOK(
                "admin.settings.set", ["settings": ["guests_may_post": true, "report_threshold": 1]])
            #expect((set["settings"] as? [String: Any])?["report_threshold"] as? Int == 1)
            let byGuest = try #require(
                (try guest.requestOK("picture.post", ["media": guestMedia])["picture"] as? [String: Any])?["id"] as? Int
            )
            let byAlice = try #require(try post(alice)["id"] as? Int)
            _ = try bob.client.requestOK("picture.like", ["picture": byAlice])
            // One member's report is enough now.
            let report = try bob.client.requestOK("picture.report", ["picture": byGuest, "reason": "spam"])
            #expect(report["hidden"] as? Bool == true)
            #expect(try nearby(alice.client) == [byAlice])
            _ = try root.requestOK("admin.settings.set", ["settings": ["max_nearby_radius": 100]])
            #expect(errorCode(try alice.client.request("picture.nearby", ["radius": 200])) == "bad_request")
            #expect(
                errorCode(try root.request("admin.settings.set", ["settings": ["posts_per_hour": 0]])) == "bad_request")
            let stats = try root.requestOK("admin.stats", ["days": 1])
            let today = try #require((stats["rows"] as? [[String: Any]])?.last)
            #expect(today["pictures_posted"] as? Int == 2)
            #expect(today["likes"] as? Int == 1)
            #expect(today["reports_opened"] as? Int == 1)
            #expect(today["reports_resolved"] as? Int == 0)
        }

        @Test func adminsRestoreOrRemoveReportedPicturesAudited() throws {
            let hub = try RunningHub { $0.hub.pictureSettings.reportThreshold = 1 }
            defer { hub.removeData() }
            let (root, _) = try hub.member("root")
            try AdminTests().grantAdmin("root", in: hub)
            let alice = try poster(hub, "alice")
            let bob = try poster(hub, "bob")
            let carol = try poster(hub, "carol")
            let first = try #require(try post(alice, caption: "one")["id"] as? Int)
            let second = try #require(try post(alice, caption: "two")["id"] as? Int)
            _ = try bob.client.requestOK("picture.report", ["picture": first, "reason": "spam"])
            _ = try carol.client.requestOK(
                "picture.report", ["picture": second, "reason": "other", "text": "not mine to show"])
            #expect(try nearby(alice.client).isEmpty)
            for op in ["admin.reports", "admin.picture.restore", "admin.picture.remove"] {
                #expect(errorCode(try bob.client.request(op, ["picture": first])) == "forbidden", "\(op)")
            }
            let queue = try #require(try root.requestOK("admin.reports")["pictures"] as? [[String: Any]])
            #expect(queue.compactMap { ($0["picture"] as? [String: Any])?["id"] as? Int } == [first, second])
            let entry = try #require(queue.last)
            #expect((entry["picture"] as? [String: Any])?["hidden"] as? Bool == true)
            #expect((entry["picture"] as? [String: Any])?["url"] is String)
            let report = try #require((entry["reports"] as? [[String: Any]])?.first)
            #expect(report["reason"] as? String == "other")
            #expect(report["text"] as? String == "not mine to show")
            #expect((report["reporter"] as? [String: Any])?["username"] as? String == "carol")
            // Restore: visible again to everyone but its reporter; its reports leave the open queue.
            _ = try root.requestOK("admin.picture.restore", ["picture": first, "reason": "fine after all"])
            #expect(try nearby(carol.client) == [first])
            #expect(try nearby(bob.client).isEmpty)
            // Remove: gone for everyone, the poster included.
            _ = try root.requestOK("admin.picture.remove", ["picture": second, "reason": "privacy"])
            #expect(errorCode(try alice.client.request("picture.get", ["picture": second])) == "not_found")
            #expect(try nearby(alice.client) == [first])
            #expect(try #require(try root.requestOK("admin.reports")["pictures"] as? [[String: Any]]).isEmpty)
            let resolved = try #require(
                try root.requestOK("admin.reports", ["state": "resolved"])["pictures"] as? [[String: Any]])
            #expect(resolved.count == 2)
            #expect(errorCode(try root.request("admin.picture.remove", ["picture": 999])) == "not_found")
            #expect(errorCode(try root.request("admin.reports", ["state": "closed"])) == "bad_request")
            let audit = try #require(try root.requestOK("admin.audit")["entries"] as? [[String: Any]])
            #expect(audit.prefix(2).map { $0["action"] as? String } == ["picture.remove", "picture.restore"])
            #expect(audit.first?["reason"] as? String == "privacy")
            #expect((audit.first?["target"] as? [String: Any])?["id"] as? Int == second)
            let today = try #require((try root.requestOK("admin.stats", ["days": 1])["rows"] as? [[String: Any]])?.last)
            #expect(today["reports_resolved"] as? Int == 2)
            #expect(today["median_resolve_s"] as? Int == 0)
        }
    }
}
