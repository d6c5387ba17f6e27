// What a new user sees when a command goes wrong: one clear line naming the problem, never the usage text of
// another command (ArgumentParser prints the root or `serve` usage for errors it does not expect), and a mistyped
// subcommand named as such rather than reported as an unknown `serve` setting.
import CairnTestSupport
import Foundation
import Testing

extension ServerIntegration {
    @Suite struct CommandErrorTests {
        /// Non-empty lines of a finished command's output.
        static func lines(_ process: TestServerProcess) -> [String] {
            process.output.split(separator: "\n").map(String.init)
        }

        @Test func anUnknownUserIsOneLine() throws {
            let hub = try RunningHub()
            defer { hub.removeData() }
            try hub.stop()
            let grant = try TestServerProcess(arguments: [
                "user", "grant-ops", "nosuchuser",
                "--data", hub.dataDirectory,
            ])
            #expect(try grant.waitForExit(timeout: 30) == 1)
            #expect(Self.lines(grant) == ["Error: no user named 'nosuchuser'"], "\(grant.output)")
        }

        @Test func aDirectoryWithoutADatabaseIsNamedAndLeftAlone() throws {
            let missing = NSTemporaryDirectory() + "cairn-nodata-\(UUID().uuidString)"
            let grant = try TestServerProcess(arguments: ["user", "revoke-ops", "ann", "--data", missing])
            #expect(try grant.waitForExit(timeout: 30) == 1)
            #expect(
                Self.lines(grant) == ["Error: no database in \(missing) (is this the hub's data directory?)"],
                "\(grant.output)")
            #expect(!FileManager.default.fileExists(atPath: missing))
        }

        @Test func aMistypedCommandIsNamed() throws {
            let typo = try TestServerProcess(arguments: ["usr", "grant-ops", "ann"])
            #expect(try typo.waitForExit(timeout: 30) == 64)
            #expect(Self.lines(typo).count == 1, "\(typo.output)")
            #expect(typo.output.contains("unknown command 'usr'"))
            #expect(typo.output.contains("user"))
            #expect(!typo.output.contains("Usage"))
        }

        @Test func aMissingStatsCredentialShowsTheStatsUsage() throws {
            let stats = try TestServerProcess(arguments: ["stats"], environment: ["CAIRN_TOKEN": ""])
            #expect(try stats.waitForExit(timeout: 30) == 64)
            #expect(stats.output.contains("give --token"))
            #expect(stats.output.contains("Usage: cairn stats"), "\(stats.output)")
        }

        @Test func theTestOnlyFlagsOfServeRefuseWhatTheyCannotUse() throws {
            let data = NSTemporaryDirectory() + "cairn-flags-\(UUID().uuidString)"
            for (flag, problem) in [
                ("--cluster-apply-delay-ms=-5", "--cluster-apply-delay-ms cannot be negative"),
                ("--clock-offset-ms=soon", "'soon' is invalid for '--clock-offset-ms'"),
            ] {
                let serve = try TestServerProcess(arguments: ["serve", "--data", data, "--port", "0", flag])
                #expect(try serve.waitForExit(timeout: 30) == 64, "\(flag): \(serve.output)")
                #expect(serve.output.contains(problem), "\(flag): \(serve.output)")
            }
            #expect(!FileManager.default.fileExists(atPath: data))
        }
    }
}
