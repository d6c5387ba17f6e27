// Storage faults under a real `cairn serve` on SQLite, on a small tmpfs of the test's own (root only: skipped
// elsewhere, and run in CI, which runs as root). A full disk: writes are refused with a typed error and not applied,
// reads and positions go on, writes succeed again once space returns, without a restart, and every acknowledged
// write survives a kill -9. A data directory that cannot be written (a read-only mount): the hub refuses to start
// and names it.
import CairnTestSupport
import Foundation
import Testing

extension ServerIntegration {
    @Suite(.enabled(if: TmpfsMount.isAvailable, "\(TmpfsMount.unavailable)"))
    struct DiskFaultTests {
        static func serve(data: String) throws -> (TestServerProcess, Int) {
            let hub = try TestServerProcess(arguments: [
                "serve", "--host", "127.0.0.1", "--port", "0", "--data", data, "--scrypt-cost", "10",
                "--signups-per-address", "0",
            ])
            return (hub, try hub.waitForListeningPort(timeout: 60))
        }

        /// `bucket.create` named `name`, sent again after the pause it is told to take when over the rate.
        static func createBucket(_ client: WebSocketClient, _ name: String) throws -> [String: Any] {
            while true {
                let reply = try client.request("bucket.create", ["name": name])
                guard errorCode(reply) == "rate_limited" else { return reply }
                let pause = ((reply["error"] as? [String: Any])?["retry_after_ms"] as? Int) ?? 100
                Thread.sleep(forTimeInterval: Double(pause) / 1000)
            }
        }

        static func bucketNames(_ client: WebSocketClient) throws -> Set<String> {
            let buckets = try #require(try client.requestOK("bucket.list")["buckets"] as? [[String: Any]])
            return Set(buckets.compactMap { $0["name"] as? String })
        }

        @Test func aFullDiskRefusesWritesKeepsReadsAndRecoversWithoutARestart() throws {
            let disk = try TmpfsMount(bytes: 16 << 20)
            let data = disk.path + "/data"
            var (hub, port) = try Self.serve(data: data)
            let (alice, _) = try registerMember(port: port, "alice")
            let (bob, _) = try registerMember(port: port, "bob")
            var acknowledged: Set<String> = []
            #expect(try Self.createBucket(alice, "before")["ok"] as? Bool == true)
            acknowledged.insert("before")

            try disk.fill()
            // SQLite may still find room (pages it holds, a WAL it reuses): the disk refuses within a bounded number
            // of writes (each one grows the WAL), and the first refusal is the typed storage error.
            var refused: (name: String, reply: [String: Any])?
            for index in 0..<150 {
                let name = "k\(index)"
                let reply = try Self.createBucket(alice, name)
                if reply["ok"] as? Bool == true {
                    acknowledged.insert(name)
                } else {
                    refused = (name, reply)
                    break
                }
            }
            let (refusedName, refusal) = try #require(refused, "no write was refused on a full disk")
            #expect(errorCode(refusal) == "internal", "\(refusal)")
            #expect(errorMessage(refusal).contains("not applied"), "\(refusal)")
            // Reads, positions and the health check go on; the refused write is not there.
            _ = try bob.requestOK("pos", ["lat": 48.85, "lon": 2.35])
            #expect(try Self.bucketNames(alice) == acknowledged)
            #expect(try HTTPClient.get(port: port, path: "/healthz").status == 200)

            // Space returns: the next write succeeds, no restart.
            try disk.empty()
            #expect(try Self.createBucket(alice, "after")["ok"] as? Bool == true)
            acknowledged.insert("after")
            #expect(!acknowledged.contains(refusedName))

            // Every acknowledged write survives a kill -9.
            hub.kill()
            _ = try hub.waitForExit(timeout: 10)
            (hub, port) = try Self.serve(data: data)
            let again = try WebSocketClient(port: port, timeout: 10)
            _ = try again.requestOK("login", ["username": "alice", "password": "password1"])
            #expect(try Self.bucketNames(again) == acknowledged)
            hub.kill()
            _ = try hub.waitForExit(timeout: 10)
        }

        @Test func aDataDirectoryThatCannotBeWrittenIsRefusedAtStartAndNamed() throws {
            let readOnly = try TmpfsMount(bytes: 1 << 20, readOnly: true)
            let hub = try TestServerProcess(arguments: [
                "serve", "--host", "127.0.0.1", "--port", "0", "--data", readOnly.path, "--scrypt-cost", "10",
            ])
            let status = try hub.waitForExit(timeout: 30)
            #expect(status != 0)
            #expect(!hub.output.contains("listening on"), "\(hub.output)")
            #expect(hub.output.contains(readOnly.path), "\(hub.output)")
            #expect(hub.output.contains("Read-only file system"), "\(hub.output)")

            // A data directory to be made inside it: refused the same way.
            let nested = try TestServerProcess(arguments: [
                "serve", "--host", "127.0.0.1", "--port", "0", "--data", readOnly.path + "/data", "--scrypt-cost", "10",
            ])
            #expect(try nested.waitForExit(timeout: 30) != 0)
            #expect(nested.output.contains(readOnly.path + "/data"), "\(nested.output)")
        }
    }
}
