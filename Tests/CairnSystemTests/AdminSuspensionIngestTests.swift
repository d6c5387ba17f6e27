// Suspension reaches trackers, over real HTTP: once an admin suspends the only owner of a bucket, its tracker's
// reports are refused 403 `suspended` in every format (OsmAnd, OwnTracks with and without a position, Overland) and
// nothing is stored; after `admin.user.unsuspend` the same report is taken again. A suspension for a time ends by
// itself: login and the tracker are refused during it and taken once it has run out, with nobody lifting it.
import CairnApp
import CairnCore
import CairnTestSupport
import CairnTrackers
import Foundation
import Testing

extension ServerIntegration {
    @Suite struct AdminSuspensionIngestTests {
        @Test func aSuspendedOwnersTrackerIsRefusedInEveryFormatUntilLifted() async throws {
            let hub = try RunningHub()
            defer { hub.removeData() }
            let (root, _) = try hub.member("root")
            try AdminTests().grantAdmin("root", in: hub)
            let alice = try hub.member("alice")
            let gear = try hub.bucket(alice.0, "Gear")
            let bike = try hub.item(alice.0, bucket: gear, "Bike")
            let tracker = try hub.activeTracker(alice.0, item: bike, device: "bike-1")
            let now = Int(Date().timeIntervalSince1970)
            func osmand(_ seconds: Int) throws -> HTTPResponse {
                try HTTPClient.get(
                    port: hub.port,
                    path: "/v1/ingest/osmand?id=bike-1&key=\(tracker.key)&lat=48.85&lon=2.35&timestamp=\(seconds)")
            }
            #expect(try osmand(now - 60).status == 200)

            _ = try root.requestOK("admin.user.suspend", ["user": alice.1, "reason": "abuse"])
            let refused = try osmand(now - 30)
            #expect(refused.status == 403)
            #expect(refused.headers["content-type"] == "application/json")
            #expect((try refused.jsonObject()["error"] as? String)?.hasPrefix("suspended") == true, "\(refused.text)")
            let basic = OwnTracksIngestTests.basic("bike-1", tracker.key)
            let location = #"{"_type":"location","lat":48.86,"lon":2.35,"tst":\#(now - 20),"acc":10}"#
            #expect(try OwnTracksIngestTests.post(hub, location, basic).status == 403)
            // A message with nothing to store is refused the same way: the device learns it is shut out.
            #expect(try OwnTracksIngestTests.post(hub, #"{"_type":"lwt","tst":1}"#, basic).status == 403)
            let batch =
                #"{"locations":[\#(OverlandIngestTests.point(2.35, 48.87, OverlandIngestTests.iso(now - 10)))]}"#
            #expect(try OverlandIngestTests.post(hub, batch, key: tracker.key).status == 403)
            let stored = try #require(try await hub.app.store.trackerFix(tracker: Int64(tracker.id)))
            #expect(stored.ts == Int64(now - 60) * 1000)

            _ = try root.requestOK("admin.user.unsuspend", ["user": alice.1])
            #expect(try osmand(now - 5).status == 200)
            let after = try #require(try await hub.app.store.trackerFix(tracker: Int64(tracker.id)))
            #expect(after.ts == Int64(now - 5) * 1000)
        }

        @Test func aTimedSuspensionEndsByItselfForLoginAndTrackers() throws {
            let hub = try RunningHub()
            defer { hub.removeData() }
            let (root, _) = try hub.member("root")
            try AdminTests().grantAdmin("root", in: hub)
            let alice = try hub.member("alice")
            let bike = try hub.item(alice.0, bucket: try hub.bucket(alice.0, "Gear"), "Bike")
            let tracker = try hub.activeTracker(alice.0, item: bike, device: "bike-1")
            let now = Int(Date().timeIntervalSince1970)
            let report = "/v1/ingest/osmand?id=bike-1&key=\(tracker.key)&lat=48.85&lon=2.35&timestamp=\(now - 60)"
            _ = try root.requestOK("admin.user.suspend", ["user": alice.1, "reason": "cool off", "for": 2])
            let login = try hub.client()
            #expect(
                errorCode(try login.request("login", ["username": "alice", "password": "password1"])) == "suspended")
            #expect(try HTTPClient.get(port: hub.port, path: report).status == 403)
            Thread.sleep(forTimeInterval: 2.2)
            #expect(try login.request("login", ["username": "alice", "password": "password1"])["ok"] as? Bool == true)
            #expect(try HTTPClient.get(port: hub.port, path: report).status == 200)
        }
    }
}
