// `cairn seed` end to end: fixtures written by the command are accepted by a hub started on the same directory, and
// with --storage-url by a node started on the same shared PostgreSQL database (the cluster load test's seeding).
import CairnTestSupport
import Foundation
import Glibc
import Testing

extension ServerIntegration {
    @Suite struct SeedCommandTests {
        @Test func seededUsersConnectWithTheirTokensAndSeeTheirFriends() throws {
            let data = NSTemporaryDirectory() + "cairn-seed-\(UUID().uuidString)"
            let out = data + "-tokens.json"
            defer {
                try? FileManager.default.removeItem(atPath: data)
                try? FileManager.default.removeItem(atPath: out)
            }
            let seed = try TestServerProcess(arguments: [
                "seed", "--users", "30", "--friends", "3", "--graph", "clustered",
                "--data", data, "--out", out,
            ])
            #expect(try seed.waitForExit(timeout: 60) == 0, "output: \(seed.output)")
            let file =
                try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: out))) as! [String: Any]
            let users = try #require(file["users"] as? [[String: Any]])
            #expect(users.count == 30)

            let server = try TestServerProcess(arguments: ["serve", "--port", "0", "--data", data])
            let port = try server.waitForListeningPort(timeout: 60)
            let first = users[0]
            let token = try #require(first["token"] as? String)
            let friendIDs = try #require(first["friends"] as? [Int])
            let a = try WebSocketClient(port: port, path: "/ws?token=\(token)", timeout: 10)
            let listed = try #require(try a.requestOK("friend.list")["friends"] as? [[String: Any]])
            #expect(Set(listed.compactMap { $0["id"] as? Int }) == Set(friendIDs))
            _ = try a.requestOK("friends.watch")
            let friend = try #require(users.first { $0["id"] as? Int == friendIDs[0] })
            let b = try WebSocketClient(
                port: port, headers: ["Authorization": "Bearer \(friend["token"] as! String)"],
                timeout: 10)
            _ = try b.requestOK("pos", ["lat": 1.5, "lon": 2.5])
            let pos = try a.nextEvent("pos")
            #expect(pos["user"] as? Int == friendIDs[0])

            server.signal(SIGTERM)
            #expect(try server.waitForExit(timeout: 15) == 0)

            // Seeding the same prefix again is one clear line, without any usage text.
            let again = try TestServerProcess(arguments: [
                "seed", "--users", "2", "--friends", "1", "--data", data,
                "--out", out + ".2",
            ])
            #expect(try again.waitForExit(timeout: 60) == 1)
            #expect(again.output.contains("already exist"))
            #expect(!again.output.contains("Usage"), "\(again.output)")
        }

        @Test func theTokensFileIsPrivate() throws {
            let data = NSTemporaryDirectory() + "cairn-seed-\(UUID().uuidString)"
            let out = data + "-tokens.json"
            defer {
                try? FileManager.default.removeItem(atPath: data)
                try? FileManager.default.removeItem(atPath: out)
            }
            // Even a file that exists with a wider mode ends up owner-only.
            #expect(
                FileManager.default.createFile(
                    atPath: out, contents: Data("old".utf8),
                    attributes: [.posixPermissions: 0o644]))
            let seed = try TestServerProcess(arguments: [
                "seed", "--users", "4", "--friends", "1", "--data", data,
                "--out", out,
            ])
            #expect(try seed.waitForExit(timeout: 60) == 0, "output: \(seed.output)")
            let mode = try FileManager.default.attributesOfItem(atPath: out)[.posixPermissions] as? Int
            #expect(mode == 0o600)
            #expect(try Data(contentsOf: URL(fileURLWithPath: out)).first == UInt8(ascii: "{"))
        }

        @Test func badSeedOptionsAreRefused() throws {
            let bad = try TestServerProcess(arguments: ["seed", "--users", "3", "--friends", "3", "--out", "/dev/null"])
            #expect(try bad.waitForExit(timeout: 30) != 0)
            #expect(bad.output.contains("--friends"))
        }

        @Test(.enabled(if: PostgresServerProcess.isAvailable, "PostgreSQL is not installed"))
        func seedingTheSharedStoreServesEveryNodeOnIt() throws {
            let url = try PostgresServerProcess.freshURL()
            let out = NSTemporaryDirectory() + "cairn-seed-pg-\(UUID().uuidString)-tokens.json"
            let data = NSTemporaryDirectory() + "cairn-seed-pg-\(UUID().uuidString)"
            defer {
                try? FileManager.default.removeItem(atPath: out)
                try? FileManager.default.removeItem(atPath: data)
            }
            let seed = try TestServerProcess(arguments: [
                "seed", "--users", "12", "--friends", "3", "--storage-url", url, "--out", out,
            ])
            #expect(try seed.waitForExit(timeout: 60) == 0, "output: \(seed.output)")
            #expect(seed.output.contains("shared store"), "\(seed.output)")
            let file =
                try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: out))) as! [String: Any]
            let users = try #require(file["users"] as? [[String: Any]])
            #expect(users.count == 12)

            // A node on the shared database (its own data directory holds no accounts) knows the seeded users.
            let server = try TestServerProcess(arguments: [
                "serve", "--host", "127.0.0.1", "--port", "0", "--data", data, "--storage-url", url,
                "--storage-connections", "2",
            ])
            let port = try server.waitForListeningPort(timeout: 60)
            let first = users[5]
            let token = try #require(first["token"] as? String)
            let friendIDs = try #require(first["friends"] as? [Int])
            #expect(!friendIDs.isEmpty)
            let client = try WebSocketClient(port: port, path: "/ws?token=\(token)", timeout: 10)
            let listed = try #require(try client.requestOK("friend.list")["friends"] as? [[String: Any]])
            #expect(Set(listed.compactMap { $0["id"] as? Int }) == Set(friendIDs))
            client.close()
            server.signal(SIGTERM)
            #expect(try server.waitForExit(timeout: 15) == 0)
            #expect(!FileManager.default.fileExists(atPath: data + "/cairn.sqlite"))

            // The same prefix again: refused in one line, as for a data directory.
            let again = try TestServerProcess(arguments: [
                "seed", "--users", "2", "--friends", "1", "--storage-url", url, "--out", out + ".2",
            ])
            #expect(try again.waitForExit(timeout: 60) == 1)
            #expect(again.output.contains("already exist"), "\(again.output)")
            try? FileManager.default.removeItem(atPath: out + ".2")
        }

        @Test func aStorageURLMustBePostgresAndExcludesADataDirectory() throws {
            let notPostgres = try TestServerProcess(arguments: [
                "seed", "--users", "3", "--friends", "1", "--storage-url", "mysql://x@127.0.0.1/db",
                "--out", "/dev/null",
            ])
            #expect(try notPostgres.waitForExit(timeout: 30) != 0)
            #expect(notPostgres.output.contains("--storage-url"), "\(notPostgres.output)")
            let both = try TestServerProcess(arguments: [
                "seed", "--users", "3", "--friends", "1", "--storage-url", "postgresql://x@127.0.0.1:1/db",
                "--data", "/tmp/nowhere", "--out", "/dev/null",
            ])
            #expect(try both.waitForExit(timeout: 30) != 0)
            #expect(both.output.contains("exclude each other"), "\(both.output)")
        }
    }
}
