// One hub per data directory: a second `cairn serve` on a directory a hub serves, and `cairn seed` beside it, exit
// non-zero naming the holder's pid and write nothing, while the commands made to run beside a hub (`user grant-ops`,
// `backup`) keep working; once the hub stops, the directory is free again.
import CairnApp
import CairnTestSupport
import Foundation
import Glibc
import Testing

extension ServerIntegration {
    @Suite struct DataDirectoryLockTests {
        @Test func aSecondHubAndSeedAreRefusedWhileMaintenanceKeepsWorking() throws {
            let dir = NSTemporaryDirectory() + "cairn-lock-\(UUID().uuidString)"
            defer { try? FileManager.default.removeItem(atPath: dir) }
            let data = dir + "/data"
            let hub = try TestServerProcess(arguments: ["serve", "--port", "0", "--data", data, "--scrypt-cost", "10"])
            let port = try hub.waitForListeningPort(timeout: 60)
            let client = try WebSocketClient(port: port, timeout: 10)
            _ = try client.requestOK("register", ["username": "olga", "password": "password1"])

            let second = try TestServerProcess(arguments: ["serve", "--port", "0", "--data", data])
            #expect(try second.waitForExit(timeout: 30) == 1)
            #expect(second.output.contains("in use by a hub (pid \(hub.pid))"), "\(second.output)")
            #expect(!second.output.contains("listening"))

            let seed = try TestServerProcess(arguments: [
                "seed", "--users", "3", "--friends", "1", "--data", data,
                "--out", dir + "/tokens.json",
            ])
            #expect(try seed.waitForExit(timeout: 30) == 1)
            #expect(seed.output.contains("pid \(hub.pid)"), "\(seed.output)")
            #expect(!FileManager.default.fileExists(atPath: dir + "/tokens.json"))

            let grant = try TestServerProcess(arguments: ["user", "grant-ops", "olga", "--data", data])
            #expect(try grant.waitForExit(timeout: 30) == 0, "\(grant.output)")
            let backup = try TestServerProcess(arguments: ["backup", "--data", data, "--out", dir + "/b.sqlite"])
            #expect(try backup.waitForExit(timeout: 30) == 0, "\(backup.output)")
            // The hub was not disturbed.
            #expect(try client.requestOK("whoami")["user"] != nil)

            hub.signal(SIGTERM)
            #expect(try hub.waitForExit(timeout: 15) == 0, "\(hub.output)")
            let later = try TestServerProcess(arguments: [
                "seed", "--users", "3", "--friends", "1", "--data", data,
                "--out", dir + "/tokens.json",
            ])
            #expect(try later.waitForExit(timeout: 60) == 0, "\(later.output)")
        }

        @Test func theLockIsExclusiveWithinAProcessAndReleasedOnStop() throws {
            let dir = NSTemporaryDirectory() + "cairn-lock-\(UUID().uuidString)"
            defer { try? FileManager.default.removeItem(atPath: dir) }
            let hub = try RunningHub(dataDirectory: dir)
            let error = try #require(throws: DataDirectoryLockError.self) {
                _ = try Maintenance(dataDirectory: dir, access: .exclusive(purpose: "cairn seed"))
            }
            #expect(error == .held(directory: dir, pid: getpid(), purpose: "a hub"))
            // Beside the hub, role changes still open the directory.
            let beside = try Maintenance(dataDirectory: dir, access: .besideHub)
            try beside.close()
            try hub.stop()
            let alone = try Maintenance(dataDirectory: dir, access: .exclusive(purpose: "cairn seed"))
            try alone.close()
            let again = try RunningHub(dataDirectory: dir)
            try again.stop()
        }
    }
}
