// A real `cairn serve` on a real PostgreSQL that stops answering (every server process SIGSTOPped): a request that
// needs the database is answered `unavailable` within the documented bound (`storage.statement_timeout` plus 2 s),
// nothing of it is applied, requests that need no database (positions, `/healthz`) keep being answered meanwhile,
// and once the server runs again the hub uses it again without a restart. The database is this test's own.
import CairnTestSupport
import Foundation
import Testing

extension ServerIntegration {
    @Suite(.enabled(if: PostgresServerProcess.isAvailable, "PostgreSQL is not installed"))
    struct StoreOutageTests {
        static func elapsed(since start: ContinuousClock.Instant) -> Double {
            let (seconds, attoseconds) = (ContinuousClock.now - start).components
            return Double(seconds) + Double(attoseconds) / 1e18
        }

        @Test func aFrozenDatabaseIsAnsweredUnavailableWithinTheBoundWhileOthersAreServed() throws {
            let server = try PostgresServerProcess.dedicated()
            let url = try server.freshURL()
            let data = NSTemporaryDirectory() + "cairn-outage-\(UUID().uuidString)"
            defer { try? FileManager.default.removeItem(atPath: data) }
            let hub = try TestServerProcess(arguments: [
                "serve", "--host", "127.0.0.1", "--port", "0", "--data", data, "--scrypt-cost", "10",
                "--signups-per-address", "0", "--storage-url", url, "--storage-connections", "2",
                "--storage-statement-timeout", "1",
            ])
            defer { hub.kill() }
            let port = try hub.waitForListeningPort(timeout: 60)
            let alice = try WebSocketClient(port: port, timeout: 20)
            _ = try alice.requestOK("register", ["username": "alice", "password": "password1"])
            let bob = try WebSocketClient(port: port, timeout: 20)
            _ = try bob.requestOK("register", ["username": "bob", "password": "password1"])

            try server.pause()
            var resumed = false
            defer { if !resumed { try? server.resume() } }
            // The bound: the 1 s statement timeout plus the client's 2 s grace; 4 s of slack for a loaded machine.
            let bound = 1.0 + 2.0 + 4.0
            let start = ContinuousClock.now
            try alice.send(["id": 1, "op": "bucket.create", "name": "keys"])
            // Meanwhile bob, who needs no database, is served at once, and the hub says it is up.
            _ = try bob.requestOK("pos", ["lat": 48.85, "lon": 2.35])
            #expect(try HTTPClient.get(port: port, path: "/healthz").status == 200)
            let refused = try alice.nextReply(id: 1, timeout: bound + 5)
            let answeredAfter = Self.elapsed(since: start)
            #expect(errorCode(refused) == "unavailable", "\(refused)")
            #expect(answeredAfter < bound, "answered after \(answeredAfter) s")
            // A second request while still frozen is answered within the bound too.
            let again = try alice.request("bucket.create", ["name": "wallet"], timeout: bound + 5)
            #expect(errorCode(again) == "unavailable", "\(again)")

            try server.resume()
            resumed = true
            // Back: the hub makes new connections by itself; the refused creates left nothing behind.
            let back = ContinuousClock.now
            var created: [String: Any] = [:]
            while Self.elapsed(since: back) < bound {
                created = try alice.request("bucket.create", ["name": "bag"], timeout: bound + 5)
                if errorCode(created) != "unavailable" { break }
                Thread.sleep(forTimeInterval: 0.05)
            }
            #expect(created["ok"] as? Bool == true, "\(created)")
            // One connection back is not the pool back: another may still be in its second of failing at once after a
            // failed reconnect (a busy machine makes that likely), so the read is retried the same way.
            var listed: [String: Any] = [:]
            while Self.elapsed(since: back) < 2 * bound {
                listed = try alice.request("bucket.list", timeout: bound + 5)
                if errorCode(listed) != "unavailable" { break }
                Thread.sleep(forTimeInterval: 0.05)
            }
            let buckets = try #require(listed["buckets"] as? [[String: Any]], "\(listed)")
            #expect(buckets.compactMap { $0["name"] as? String } == ["bag"])
        }
    }
}
