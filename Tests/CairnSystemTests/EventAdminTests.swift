// `admin.event.update`, `admin.event.delete` and the PicShare figures of `admin.users` over real sockets: an admin
// makes a public event private (a non-member loses its pictures by every route and stops hearing of new ones, nearby
// or by watching the event), changes its password (members stay, joins need the new one), and opens it again; every
// change is in the audit log without the password; non-admins are forbidden whatever they send, admins' mistakes are
// `not_found` or `bad_request` naming the field; an admin deletes an event under review with its pictures (audited);
// the user list counts pictures posted, likes received and open reports.
import CairnTestSupport
import Foundation
import Testing

extension ServerIntegration {
    @Suite struct EventAdminTests {
        let p = PictureTests()

        func event(_ reply: [String: Any]) -> [String: Any] { (reply["event"] as? [String: Any]) ?? [:] }

        @Test func anAdminMakesAnEventPrivateAndANonMemberLosesIt() throws {
            let hub = try RunningHub()
            defer { hub.removeData() }
            let (root, _) = try hub.member("root")
            try AdminTests().grantAdmin("root", in: hub)
            let alice = try p.poster(hub, "alice")
            let bob = try p.poster(hub, "bob")
            let carol = try p.poster(hub, "carol")
            let first = try #require(
                try p.post(alice, caption: "warming up", event: "party", place: true)["id"] as? Int)
            _ = try bob.client.requestOK("pictures.watch", ["radius": 1_000])
            _ = try carol.client.requestOK("pictures.watch", ["event": "party"])
            #expect(try p.nearby(bob.client) == [first])

            // Non-admins are forbidden, whether the request is valid, invalid or names no event.
            for fields: [String: Any] in [
                ["tag": "party", "password": "secret"], ["tag": "party", "private": true], ["title": 3],
                ["tag": "nothere", "title": "x"],
            ] {
                #expect(errorCode(try bob.client.request("admin.event.update", fields)) == "forbidden")
            }
            // Admins' mistakes, each naming what is wrong; nothing changes.
            #expect(errorCode(try root.request("admin.event.update", ["tag": "nothere", "title": "x"])) == "not_found")
            let needs = try root.request("admin.event.update", ["tag": "party", "private": true])
            #expect(errorCode(needs) == "bad_request" && errorMessage(needs).contains("'password'"))
            let clash = try root.request("admin.event.update", ["tag": "party", "password": "x", "private": false])
            #expect(errorCode(clash) == "bad_request" && errorMessage(clash).contains("'private'"))
            let typed = try root.request("admin.event.update", ["tag": "party", "title": 3])
            #expect(errorCode(typed) == "bad_request" && errorMessage(typed).contains("'title'"))
            #expect(event(try bob.client.requestOK("event.get", ["tag": "party"]))["private"] as? Bool == false)

            let made = event(
                try root.requestOK(
                    "admin.event.update", ["tag": "#Party", "title": "Closed party", "password": "secret"]))
            #expect(made["private"] as? Bool == true)
            #expect(made["title"] as? String == "Closed party")
            // Bob, not a member: not nearby, not in the event, not by id, not in search.
            #expect(try p.nearby(bob.client).isEmpty)
            #expect(try p.nearby(bob.client, sort: "likes").isEmpty)
            #expect(errorCode(try bob.client.request("event.pictures", ["tag": "party"])) == "forbidden")
            #expect(errorCode(try bob.client.request("picture.get", ["picture": first])) == "forbidden")
            #expect(p.ids(try bob.client.requestOK("picture.search", ["q": "warming"])).isEmpty)
            // Alice, who posted to it, is a member and still sees her picture.
            #expect(p.ids(try alice.client.requestOK("event.pictures", ["tag": "party"])) == [first])
            // A new picture of the event reaches neither bob's nearby watch nor carol's watch of the event; a public
            // one posted after it reaches bob first.
            let second = try #require(try p.post(alice, event: "party", place: true)["id"] as? Int)
            let open = try #require(try p.post(alice, caption: "outside")["id"] as? Int)
            let pushed = try bob.client.nextEvent("picture.new")
            #expect((pushed["picture"] as? [String: Any])?["id"] as? Int == open)
            _ = try carol.client.requestOK("event.get", ["tag": "party"])
            #expect(!carol.client.queuedObjects.contains { $0["ev"] as? String == "picture.new" })
            #expect(errorCode(try carol.client.request("pictures.watch", ["event": "party"])) == "forbidden")

            // A new password: bob, who joined with the old one, stays a member; carol needs the new one.
            _ = try bob.client.requestOK("event.join", ["tag": "party", "password": "secret"])
            _ = try root.requestOK("admin.event.update", ["tag": "party", "password": "changed"])
            #expect(event(try bob.client.requestOK("event.get", ["tag": "party"]))["member"] as? Bool == true)
            #expect(p.ids(try bob.client.requestOK("event.pictures", ["tag": "party"])) == [second, first])
            let stale = try carol.client.request("event.join", ["tag": "party", "password": "secret"])
            #expect(errorCode(stale) == "wrong_password")
            // Public again (password null), the title cleared: carol sees everything.
            let opened = event(
                try root.requestOK("admin.event.update", ["tag": "party", "password": NSNull(), "title": NSNull()]))
            #expect(opened["private"] as? Bool == false)
            #expect(opened["title"] == nil || opened["title"] is NSNull)
            #expect(p.ids(try carol.client.requestOK("event.pictures", ["tag": "party"])) == [second, first])

            let audit = try #require(try root.requestOK("admin.audit")["entries"] as? [[String: Any]])
            let updates = audit.filter { $0["action"] as? String == "event.update" }
            #expect(updates.count == 3)
            #expect((updates.last?["target"] as? [String: Any])?["name"] as? String == "party")
            let written = String(decoding: try JSONSerialization.data(withJSONObject: audit), as: UTF8.self)
            #expect(!written.contains("secret") && !written.contains("\"changed\""))
        }

        @Test func anAdminDeletesAnEventUnderReviewWithItsPictures() throws {
            let hub = try RunningHub()
            defer { hub.removeData() }
            let (root, _) = try hub.member("root")
            try AdminTests().grantAdmin("root", in: hub)
            let alice = try p.poster(hub, "alice")
            let bob = try p.poster(hub, "bob")
            let first = try #require(try p.post(alice, caption: "one", event: "party")["id"] as? Int)
            let second = try #require(try p.post(bob, caption: "two", event: "party")["id"] as? Int)
            _ = try bob.client.requestOK("picture.report", ["picture": first, "reason": "spam"])
            _ = try bob.client.requestOK("pictures.watch", ["event": "party"])
            // Its creator may not delete it while it is under review; a member may not as an admin.
            #expect(errorCode(try alice.client.request("event.delete", ["tag": "party"])) == "forbidden")
            #expect(errorCode(try bob.client.request("admin.event.delete", ["tag": "party"])) == "forbidden")
            // Admins' mistakes.
            #expect(errorCode(try root.request("admin.event.delete", ["tag": "nothere"])) == "not_found")
            #expect(errorCode(try root.request("admin.event.delete", ["tag": "no spaces"])) == "bad_request")
            let long = try root.request(
                "admin.event.delete", ["tag": "party", "reason": String(repeating: "x", count: 501)])
            #expect(errorCode(long) == "bad_request" && errorMessage(long).contains("'reason'"))

            let deleted = try root.requestOK("admin.event.delete", ["tag": "#Party", "reason": "spam ring"])
            #expect(deleted["tag"] as? String == "party")
            #expect(errorCode(try alice.client.request("event.get", ["tag": "party"])) == "not_found")
            for picture in [first, second] {
                #expect(errorCode(try alice.client.request("picture.get", ["picture": picture])) == "not_found")
            }
            let queue = try #require(try root.requestOK("admin.reports")["pictures"] as? [[String: Any]])
            #expect(queue.isEmpty)
            // Bob's watch of the event is gone with it: a new event of the same name is not pushed to him.
            _ = try p.post(alice, caption: "again", event: "party")
            _ = try bob.client.requestOK("event.get", ["tag": "party"])
            #expect(!bob.client.queuedObjects.contains { $0["ev"] as? String == "picture.new" })
            let audit = try #require(try root.requestOK("admin.audit")["entries"] as? [[String: Any]])
            let line = try #require(audit.first { $0["action"] as? String == "event.delete" })
            #expect(line["reason"] as? String == "spam ring")
            #expect(line["detail"] as? String == "pictures=2")
        }

        @Test func theUserListCountsPicturesLikesReceivedAndOpenReports() throws {
            let hub = try RunningHub()
            defer { hub.removeData() }
            let (root, _) = try hub.member("root")
            try AdminTests().grantAdmin("root", in: hub)
            let alice = try p.poster(hub, "alice")
            let bob = try p.poster(hub, "bob")
            let carol = try p.poster(hub, "carol")
            let one = try #require(try p.post(alice, caption: "one")["id"] as? Int)
            let two = try #require(try p.post(alice, caption: "two")["id"] as? Int)
            _ = try p.post(bob)
            _ = try bob.client.requestOK("picture.like", ["picture": one])
            _ = try carol.client.requestOK("picture.like", ["picture": one])
            _ = try carol.client.requestOK("picture.like", ["picture": two])
            _ = try bob.client.requestOK("picture.report", ["picture": two, "reason": "spam"])
            let rows = try #require(try root.requestOK("admin.users")["users"] as? [[String: Any]])
            let byName = Dictionary(uniqueKeysWithValues: rows.map { ($0["username"] as? String ?? "", $0) })
            #expect(byName["alice"]?["pictures"] as? Int == 2)
            #expect(byName["alice"]?["likes_received"] as? Int == 3)
            #expect(byName["alice"]?["open_reports"] as? Int == 1)
            #expect(byName["bob"]?["pictures"] as? Int == 1)
            #expect(byName["bob"]?["likes_received"] as? Int == 0)
            #expect(byName["bob"]?["open_reports"] as? Int == 0)
            _ = try root.requestOK("admin.picture.restore", ["picture": two])
            let after = try #require(try root.requestOK("admin.users", ["q": "alice"])["users"] as? [[String: Any]])
            #expect(after.first?["open_reports"] as? Int == 0)
        }
    }
}
