// Live settings across nodes: two real `cairn serve` processes sharing one real PostgreSQL database and one real
// redis-server. An admin's change through node a is answered by `admin.settings.get` through node b moments later
// (the control channel's kind 10 makes b read the stored settings again), and a reset to the default through b
// shows on a. Each is polled with a deadline; nothing waits a fixed time.
import CairnTestSupport
import Foundation
import Testing

extension ServerIntegration {
    @Suite(
        .enabled(if: RedisServerProcess.isAvailable, "redis-server is not installed"),
        .enabled(if: PostgresServerProcess.isAvailable, "PostgreSQL is not installed"))
    struct ClusterSettingsTests {
        /// The configured default of `chat_text_limit`.
        static let defaultChatLimit = 4000

        /// Gives `user` the admin role in the shared database, with SQL as an operator would (`cairn user
        /// grant-admin` works on a data directory's SQLite).
        static func grantAdmin(_ user: Int, url: String) throws {
            let versions = (try? FileManager.default.contentsOfDirectory(atPath: "/usr/lib/postgresql")) ?? []
            let psql =
                (versions.sorted(by: >).map { "/usr/lib/postgresql/\($0)/bin/psql" } + ["/usr/bin/psql"])
                .first { FileManager.default.isExecutableFile(atPath: $0) } ?? "/usr/bin/psql"
            let process = Process()
            process.executableURL = URL(fileURLWithPath: psql)
            process.arguments = [
                "-q", "-v", "ON_ERROR_STOP=1", url, "-c",
                "INSERT INTO user_roles (user_id, role, granted_at) VALUES (\(user), 'admin', 0)",
            ]
            let output = Pipe()
            process.standardOutput = output
            process.standardError = output
            try process.run()
            let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            process.waitUntilExit()
            #expect(process.terminationStatus == 0, "psql: \(text)")
        }

        /// `chat_text_limit` as `admin.settings.get` answers it through `client`.
        static func chatLimit(_ client: WebSocketClient) throws -> Int? {
            let reply = try client.requestOK("admin.settings.get")
            return (reply["settings"] as? [String: Any])?["chat_text_limit"] as? Int
        }

        /// Asks until `chat_text_limit` is `wanted` or `seconds` have passed; the last answer.
        static func chatLimit(_ client: WebSocketClient, becomes wanted: Int, within seconds: Double) throws -> Int? {
            let deadline = Date().addingTimeInterval(seconds)
            var seen = try chatLimit(client)
            while seen != wanted && Date() < deadline {
                usleep(20_000)
                seen = try chatLimit(client)
            }
            return seen
        }

        @Test func aSettingChangedThroughOneNodeIsInForceOnTheOther() throws {
            let url = try PostgresServerProcess.freshURL()
            let redis = try RedisServerProcess()
            let a = try ControlChannelTests.Node("a", url: url, redis: redis)
            let b = try ControlChannelTests.Node("b", url: url, redis: redis)
            let (rootOnA, root) = try registerMember(port: a.port, "root")
            try Self.grantAdmin(root, url: url)
            let rootOnB = try b.login("root")
            #expect(try Self.chatLimit(rootOnB) == Self.defaultChatLimit)

            // Set through a: in force on a from the reply, on b moments later.
            let set = try rootOnA.requestOK("admin.settings.set", ["settings": ["chat_text_limit": 1234]])
            #expect((set["settings"] as? [String: Any])?["chat_text_limit"] as? Int == 1234)
            #expect(try Self.chatLimit(rootOnB, becomes: 1234, within: 10) == 1234)

            // Put back to the default through b: a follows.
            let reset = try rootOnB.requestOK("admin.settings.set", ["settings": ["chat_text_limit": NSNull()]])
            #expect((reset["settings"] as? [String: Any])?["chat_text_limit"] as? Int == Self.defaultChatLimit)
            #expect(try Self.chatLimit(rootOnA, becomes: Self.defaultChatLimit, within: 10) == Self.defaultChatLimit)
        }
    }
}
