// The configuration as operators meet it, through the real `cairn` executable: `config check` lists every problem
// and exits non-zero (or prints "FILE: OK"), `serve --config` applies the file under the environment and flags,
// `config show` names each value's source, `serve --help` documents every option, and `health` probes /healthz.
import CairnConfig
import CairnTestSupport
import Foundation
import Glibc
import Testing

extension ServerIntegration {
    @Suite struct ConfigCommandTests {
        static func workDirectory() throws -> String {
            let dir = NSTemporaryDirectory() + "cairn-cfg-\(UUID().uuidString)"
            try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
            return dir
        }

        @Test func checkPrintsOKForAGoodFile() throws {
            let dir = try Self.workDirectory()
            defer { try? FileManager.default.removeItem(atPath: dir) }
            try "[server]\nport = 8080\n".write(toFile: dir + "/good.toml", atomically: true, encoding: .utf8)
            let check = try TestServerProcess(arguments: ["config", "check", dir + "/good.toml"])
            #expect(try check.waitForExit(timeout: 30) == 0)
            #expect(check.output == "\(dir)/good.toml: OK\n")
        }

        @Test func checkNamesEveryWrongKeyAndValue() throws {
            let dir = try Self.workDirectory()
            defer { try? FileManager.default.removeItem(atPath: dir) }
            try """
            [server]
            prot = 8080
            [connections]
            ping_interval = 0
            [log]
            level = "chatty"
            """.write(toFile: dir + "/bad.toml", atomically: true, encoding: .utf8)
            let check = try TestServerProcess(arguments: ["config", "check", dir + "/bad.toml"])
            #expect(try check.waitForExit(timeout: 30) == 1)
            let lines = check.output.split(separator: "\n").map(String.init)
            #expect(lines.count == 3, "\(check.output)")
            #expect(lines.contains("\(dir)/bad.toml: unknown key 'server.prot' (did you mean 'server.port'?)"))
            #expect(
                lines.contains(
                    "\(dir)/bad.toml: connections.ping_interval = 0 is out of range: "
                        + "expected an integer in 1...3600 (seconds)"))
            #expect(lines.contains { $0.contains("log.level = \"chatty\" is not a valid choice") })
            #expect(!check.output.contains(": OK"))
        }

        @Test func checkNamesCrossFieldProblemsInTheSamePass() throws {
            let dir = try Self.workDirectory()
            defer { try? FileManager.default.removeItem(atPath: dir) }
            // Two problems of their own (a misspelt key, a value out of range) and a rule across two valid values.
            try """
            [server]
            prot = 8080
            [storage]
            snapshot_interval = 0
            [connections]
            ping_interval = 60
            idle_timeout = 30
            """.write(toFile: dir + "/three.toml", atomically: true, encoding: .utf8)
            let check = try TestServerProcess(arguments: ["config", "check", dir + "/three.toml"])
            #expect(try check.waitForExit(timeout: 30) == 1)
            let lines = check.output.split(separator: "\n").map(String.init)
            #expect(lines.count == 3, "\(check.output)")
            #expect(lines.contains { $0.contains("unknown key 'server.prot'") })
            #expect(lines.contains { $0.contains("storage.snapshot_interval = 0 is out of range") })
            #expect(
                lines.contains(
                    "\(dir)/three.toml: connections.idle_timeout (30 s) must be greater than "
                        + "connections.ping_interval (60 s)"))
        }

        @Test func serveReadsTheFileUnderEnvironmentAndFlags() throws {
            let dir = try Self.workDirectory()
            defer { try? FileManager.default.removeItem(atPath: dir) }
            // The file asks for port 1 (privileged: would fail) and a 0.5 s auth timeout; the flag wins for the
            // port, the file's auth timeout applies, and CAIRN_CONFIG names the file.
            try """
            [server]
            port = 1
            [connections]
            auth_timeout = 0.5
            [storage]
            directory = "\(dir)/data"
            [accounts]
            scrypt_cost = 10
            """.write(toFile: dir + "/cairn.toml", atomically: true, encoding: .utf8)
            let server = try TestServerProcess(
                arguments: ["serve", "--port", "0"],
                environment: ["CAIRN_CONFIG": dir + "/cairn.toml"])
            let port = try server.waitForListeningPort(timeout: 60)
            let idle = try WebSocketClient(port: port, timeout: 10)
            #expect(try idle.expectClose(timeout: 10).code == 4508)
            #expect(FileManager.default.fileExists(atPath: dir + "/data/cairn.sqlite"))
            let health = try TestServerProcess(arguments: ["health", "--port", "\(port)"])
            #expect(try health.waitForExit(timeout: 30) == 0, "\(health.output)")
            #expect(health.output.hasPrefix("healthy: {"))
            server.signal(SIGTERM)
            #expect(try server.waitForExit(timeout: 15) == 0)
            let gone = try TestServerProcess(arguments: ["health", "--port", "\(port)", "--timeout", "2"])
            #expect(try gone.waitForExit(timeout: 30) == 1)
        }

        @Test func showNamesTheSourceOfEachValue() throws {
            let dir = try Self.workDirectory()
            defer { try? FileManager.default.removeItem(atPath: dir) }
            try "[server]\nport = 9000\nhost = \"127.0.0.2\"\n".write(
                toFile: dir + "/c.toml", atomically: true,
                encoding: .utf8)
            let show = try TestServerProcess(
                arguments: ["config", "show", "--config", dir + "/c.toml", "--port", "9100"],
                environment: ["CAIRN_HOST": "127.0.0.3", "CAIRN_MAX_SPEED": ""])
            #expect(try show.waitForExit(timeout: 30) == 0, "\(show.output)")
            let lines = Set(show.output.split(separator: "\n").map(String.init))
            #expect(lines.contains("port = 9100  # flag --port"))
            #expect(lines.contains("host = \"127.0.0.3\"  # environment CAIRN_HOST"))
            #expect(lines.contains("max_speed = 300  # default"))
            #expect(lines.contains("# certificate is not set"))
        }

        @Test func aBadFileStopsServeWithEveryProblem() throws {
            let dir = try Self.workDirectory()
            defer { try? FileManager.default.removeItem(atPath: dir) }
            try "[server]\nport = \"x\"\nhots = 1\n".write(toFile: dir + "/bad.toml", atomically: true, encoding: .utf8)
            let server = try TestServerProcess(arguments: [
                "serve", "--config", dir + "/bad.toml", "--data", dir + "/d",
                "--bogus", "1",
            ])
            #expect(try server.waitForExit(timeout: 30) == 78)
            #expect(server.output.contains("(3 problems)"), "\(server.output)")
            #expect(server.output.contains("server.port = \"x\" is a string"))
            #expect(server.output.contains("unknown key 'server.hots' (did you mean 'server.host'?)"))
            #expect(server.output.contains("unknown option '--bogus'"))
            #expect(!FileManager.default.fileExists(atPath: dir + "/d"))
        }

        @Test func serveHelpDocumentsEveryOption() throws {
            let help = try TestServerProcess(arguments: ["serve", "--help"])
            #expect(try help.waitForExit(timeout: 30) == 0)
            for option in ConfigurationOptions.all {
                #expect(help.output.contains("--\(option.flag) <\(option.unit)>"), "--\(option.flag) missing")
                #expect(help.output.contains(option.environmentVariable))
            }
            #expect(help.output.contains("--config"))
        }

        @Test func exampleCommandPrintsAFileThatPassesCheck() throws {
            let dir = try Self.workDirectory()
            defer { try? FileManager.default.removeItem(atPath: dir) }
            let example = try TestServerProcess(arguments: ["config", "example"])
            #expect(try example.waitForExit(timeout: 30) == 0)
            try example.output.write(toFile: dir + "/example.toml", atomically: true, encoding: .utf8)
            let check = try TestServerProcess(arguments: ["config", "check", dir + "/example.toml"])
            #expect(try check.waitForExit(timeout: 30) == 0, "\(check.output)")
        }
    }
}
