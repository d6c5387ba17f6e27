// `cairn user create | list | set-password | suspend | unsuspend | delete` with the real binary, on a data
// directory's SQLite and on the PostgreSQL database several hubs share, each beside a running hub that signs the
// account in (or refuses it) as the commands say: the generated password works, a suspension refuses the next
// sign-in with its reason and is audited, a new password signs out the old one, and delete removes the account
// (on SQLite only with the hub stopped: it takes the data directory's lock).
import CairnTestSupport
import Foundation
import Testing

extension ServerIntegration {
    @Suite struct UserAccountCommandTests {
        /// Runs `cairn` to its end; answers its exit status and output.
        static func cairn(_ arguments: [String]) throws -> (status: Int32, output: String) {
            let process = try TestServerProcess(arguments: arguments)
            let status = try process.waitForExit(timeout: 60)
            return (status, process.output)
        }

        /// The password a `create` or `set-password` printed.
        static func password(in output: String) throws -> String {
            let range = try #require(output.range(of: "password: "), "\(output)")
            return String(output[range.upperBound...].prefix { !$0.isWhitespace })
        }

        /// A `login` reply's error code, or "ok".
        static func login(port: Int, _ username: String, _ password: String) throws -> String {
            let client = try WebSocketClient(port: port, timeout: 10)
            let reply = try client.request("login", ["username": username, "password": password])
            if reply["ok"] as? Bool == true { return "ok" }
            let error = reply["error"] as? [String: Any]
            return "\(error?["code"] as? String ?? "?"): \(error?["message"] as? String ?? "")"
        }

        /// Everything but delete, beside a hub on `storage`.
        static func exercise(port: Int, storage: [String]) throws {
            let created = try cairn(["user", "create", "ada", "--name", "Ada L."] + storage)
            #expect(created.status == 0 && created.output.contains("created 'ada'"), "\(created.output)")
            let first = try password(in: created.output)
            #expect(try login(port: port, "ada", first) == "ok")

            let taken = try cairn(["user", "create", "ada"] + storage)
            #expect(taken.status == 1 && taken.output.contains("username 'ada' is taken"), "\(taken.output)")
            let bad = try cairn(["user", "create", "Ada Lovelace"] + storage)
            #expect(bad.status == 1 && bad.output.contains("may contain only a-z"), "\(bad.output)")

            let listed = try cairn(["user", "list"] + storage)
            #expect(listed.status == 0 && listed.output.contains("\tada\tAda L.\t-\tactive\t"), "\(listed.output)")

            let suspended = try cairn(["user", "suspend", "ada", "--reason", "spam", "--for", "3600"] + storage)
            #expect(suspended.status == 0 && suspended.output.contains("suspended 'ada' until"), "\(suspended.output)")
            let refused = try login(port: port, "ada", first)
            #expect(refused.hasPrefix("suspended:") && refused.contains("spam"), "\(refused)")
            #expect(try cairn(["user", "list"] + storage).output.contains("\tada\tAda L.\t-\tsuspended until"))
            let noReason = try cairn(["user", "suspend", "ada", "--reason", "  "] + storage)
            #expect(noReason.status == 1 && noReason.output.contains("must not be empty"), "\(noReason.output)")

            let lifted = try cairn(["user", "unsuspend", "ada"] + storage)
            #expect(lifted.status == 0 && lifted.output.contains("lifted the suspension"), "\(lifted.output)")
            #expect(try cairn(["user", "unsuspend", "ada"] + storage).output.contains("'ada' was not suspended"))
            #expect(try login(port: port, "ada", first) == "ok")

            // A device signed in before the new password is signed out by it.
            let device = try WebSocketClient(port: port, timeout: 10)
            let signedIn = try device.request("login", ["username": "ada", "password": first])
            let token = try #require(signedIn["token"] as? String)
            let reset = try cairn(["user", "set-password", "ada"] + storage)
            #expect(reset.status == 0 && reset.output.contains("signed out its"), "\(reset.output)")
            let again = try WebSocketClient(port: port, timeout: 10).request("auth", ["token": token])
            #expect(again["ok"] as? Bool == false, "the old token still signs in: \(again)")
            let second = try password(in: reset.output)
            #expect(try login(port: port, "ada", first).hasPrefix("invalid_credentials"))
            #expect(try login(port: port, "ada", second) == "ok")

            // An admin cannot be suspended, as with admin.suspend.
            #expect(try cairn(["user", "grant-admin", "ada"] + storage).status == 0)
            let admin = try cairn(["user", "suspend", "ada", "--reason", "x"] + storage)
            #expect(admin.status == 1 && admin.output.contains("an admin cannot be suspended"), "\(admin.output)")
            #expect(try cairn(["user", "revoke-admin", "ada"] + storage).status == 0)
            let unknown = try cairn(["user", "suspend", "nobody", "--reason", "x"] + storage)
            #expect(unknown.status == 1 && unknown.output.contains("no user named 'nobody'"), "\(unknown.output)")
        }

        @Test func onADataDirectory() throws {
            let hub = try RunningHub()
            defer { hub.removeData() }
            let storage = ["--data", hub.dataDirectory]
            try Self.exercise(port: hub.port, storage: storage)
            _ = try hub.member("grace")

            let busy = try Self.cairn(["user", "delete", "ada"] + storage)
            #expect(busy.status == 1, "delete waits for the hub to stop: \(busy.output)")
            try hub.stop()
            let deleted = try Self.cairn(["user", "delete", "ada"] + storage)
            #expect(deleted.status == 0 && deleted.output.contains("deleted 'ada'"), "\(deleted.output)")
            let listed = try Self.cairn(["user", "list"] + storage)
            #expect(!listed.output.contains("\tada\t") && listed.output.contains("\tgrace\t"), "\(listed.output)")
        }

        @Test(.enabled(if: PostgresServerProcess.isAvailable, "PostgreSQL is not installed"))
        func onTheSharedDatabase() throws {
            let url = try PostgresServerProcess.freshURL()
            let hub = try SharedStoreTests.Node("a", url: url)
            try Self.exercise(port: hub.port, storage: ["--storage-url", url])
            let deleted = try Self.cairn(["user", "delete", "ada", "--storage-url", url])
            #expect(deleted.status == 0 && deleted.output.contains("deleted 'ada'"), "\(deleted.output)")
            #expect(try Self.login(port: hub.port, "ada", "whatever1").hasPrefix("invalid_credentials"))
        }
    }
}
