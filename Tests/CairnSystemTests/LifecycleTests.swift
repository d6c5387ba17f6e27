// The process lifecycle with the real `cairn` executable: SIGTERM closes every client with 1001 and exits 0; an
// account survives a clean restart and a kill -9, because its write was committed before the reply.
import CairnTestSupport
import Foundation
import Glibc
import Testing

extension ServerIntegration {
    @Suite struct LifecycleTests {
        static func serve(_ data: String, extra: [String] = []) throws -> (TestServerProcess, Int) {
            let process = try TestServerProcess(
                arguments: [
                    "serve", "--host", "127.0.0.1", "--port", "0",
                    "--data", data, "--scrypt-cost", "10",
                ] + extra)
            return (process, try process.waitForListeningPort(timeout: 60))
        }

        static func dataDirectory() -> String { NSTemporaryDirectory() + "cairn-life-\(UUID().uuidString)" }

        @Test func sigtermClosesClientsWith1001AndExitsZero() throws {
            let data = Self.dataDirectory()
            defer { try? FileManager.default.removeItem(atPath: data) }
            let (server, port) = try Self.serve(data)
            let a = try WebSocketClient(port: port, timeout: 10)
            _ = try a.requestOK("register", ["username": "kim", "password": "password1"])
            let b = try WebSocketClient(port: port, timeout: 10)
            server.signal(SIGTERM)
            let closeA = try a.expectClose(timeout: 15)
            let closeB = try b.expectClose(timeout: 15)
            #expect(closeA.code == 1001)
            #expect(closeB.code == 1001)
            #expect(!closeA.reason.isEmpty)
            #expect(try server.waitForExit(timeout: 15) == 0, "output: \(server.output)")
        }

        @Test func aSignalDuringStartupIsNotLost() throws {
            let data = Self.dataDirectory()
            defer { try? FileManager.default.removeItem(atPath: data) }
            let server = try TestServerProcess(arguments: [
                "serve", "--port", "0", "--data", data, "--scrypt-cost", "10",
            ])
            _ = try server.waitForLine(containing: "store open", timeout: 60)  // starting, not yet listening
            server.signal(SIGTERM)
            #expect(try server.waitForExit(timeout: 20) == 0, "output: \(server.output)")
        }

        @Test func sigintAlsoExitsZero() throws {
            let data = Self.dataDirectory()
            defer { try? FileManager.default.removeItem(atPath: data) }
            let (server, _) = try Self.serve(data)
            server.signal(SIGINT)
            #expect(try server.waitForExit(timeout: 15) == 0, "output: \(server.output)")
        }

        @Test func accountSurvivesARestart() throws {
            let hub = try RunningHub()
            defer { hub.removeData() }
            let (_, token) = try hub.registered("leo")
            try hub.stop()
            let again = try RunningHub(dataDirectory: hub.dataDirectory)
            let c = try again.client()
            #expect(try c.request("login", ["username": "leo", "password": "password1"])["ok"] as? Bool == true)
            #expect(try c.request("auth", ["token": token])["ok"] as? Bool == true)
            try again.stop()
        }

        @Test func acknowledgedAccountSurvivesKill9() throws {
            let data = Self.dataDirectory()
            defer { try? FileManager.default.removeItem(atPath: data) }
            let (server, port) = try Self.serve(data)
            let c = try WebSocketClient(port: port, timeout: 10)
            let reply = try c.requestOK("register", ["username": "mia", "password": "password1"])
            let token = try #require(reply["token"] as? String)
            server.kill()
            _ = try server.waitForExit(timeout: 15)
            let (restarted, newPort) = try Self.serve(data)
            let d = try WebSocketClient(port: newPort, timeout: 10)
            #expect(try d.request("login", ["username": "mia", "password": "password1"])["ok"] as? Bool == true)
            #expect(try d.request("auth", ["token": token])["ok"] as? Bool == true)
            restarted.signal(SIGTERM)
            #expect(try restarted.waitForExit(timeout: 15) == 0)
        }

        @Test func portInUseFailsWithAClearMessage() throws {
            let data = Self.dataDirectory()
            defer { try? FileManager.default.removeItem(atPath: data) }
            let (server, port) = try Self.serve(data)
            let second = try TestServerProcess(arguments: ["serve", "--port", "\(port)", "--data", data + "-2"])
            defer { try? FileManager.default.removeItem(atPath: data + "-2") }
            let status = try second.waitForExit(timeout: 30)
            #expect(status != 0)
            #expect(second.output.contains("cannot listen"))
            server.signal(SIGTERM)
            _ = try server.waitForExit(timeout: 15)
        }

        @Test func environmentVariablesConfigureAndFlagsWin() throws {
            let data = Self.dataDirectory()
            defer { try? FileManager.default.removeItem(atPath: data) }
            // CAIRN_PORT is garbage but --port is given, so the environment value is never used;
            // CAIRN_AUTH_TIMEOUT has no flag here, so it applies.
            let server = try TestServerProcess(
                arguments: ["serve", "--port", "0", "--data", data, "--scrypt-cost", "10"],
                environment: ["CAIRN_PORT": "not-a-port", "CAIRN_AUTH_TIMEOUT": "0.5"])
            let port = try server.waitForListeningPort(timeout: 60)
            let idle = try WebSocketClient(port: port, timeout: 10)
            let close = try idle.expectClose(timeout: 10)
            #expect(close.code == 4508)
            server.signal(SIGTERM)
            #expect(try server.waitForExit(timeout: 15) == 0)
        }

        @Test func badEnvironmentValueIsRefusedByName() throws {
            let server = try TestServerProcess(
                arguments: ["serve", "--data", Self.dataDirectory()],
                environment: ["CAIRN_PORT": "seventy"])
            #expect(try server.waitForExit(timeout: 30) != 0)
            #expect(server.output.contains("CAIRN_PORT"))
        }
    }
}
