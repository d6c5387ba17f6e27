// What Cairn writes to disk holds accounts, token digests, positions and the media signing key: the database with
// its -wal and -shm, media.key, the lock file and backups are owner-only (0600) whatever the process umask, and
// `cairn config show` never prints a secret.
import CairnApp
import CairnStore
import CairnTestSupport
import Foundation
import Testing

extension ServerIntegration {
    @Suite struct FileModeTests {
        static func mode(_ path: String) -> Int? {
            (try? FileManager.default.attributesOfItem(atPath: path))?[.posixPermissions] as? Int
        }

        @Test func theDatabaseItsCompanionsAndBackupsAreOwnerOnly() throws {
            // Under the usual umask (022, as in this test process) SQLite would leave its files 0644.
            let hub = try RunningHub()
            defer { hub.removeData() }
            _ = try hub.registered("mona")  // a write, so the -wal and -shm exist
            let dir = hub.dataDirectory
            for name in ["cairn.sqlite", "cairn.sqlite-wal", "cairn.sqlite-shm", "media.key", "cairn.lock"] {
                let mode = Self.mode(dir + "/" + name)
                #expect(mode == 0o600, "\(name): \(String(mode ?? 0, radix: 8))")
            }
            let out = dir + "-backup.sqlite"
            defer { try? FileManager.default.removeItem(atPath: out) }
            _ = try Maintenance.backup(dataDirectory: dir, to: out)
            #expect(Self.mode(out) == 0o600)
            try hub.stop()
        }

        @Test func configShowMasksTheMetricsToken() throws {
            let show = try TestServerProcess(arguments: ["config", "show", "--metrics-token", "s3cret-scrape-token"])
            #expect(try show.waitForExit(timeout: 30) == 0, "\(show.output)")
            #expect(!show.output.contains("s3cret"), "\(show.output)")
            #expect(show.output.contains("token = \"********\"  # flag --metrics-token"), "\(show.output)")
            let fromEnvironment = try TestServerProcess(
                arguments: ["config", "show"],
                environment: ["CAIRN_METRICS_TOKEN": "env-s3cret"])
            #expect(try fromEnvironment.waitForExit(timeout: 30) == 0)
            #expect(!fromEnvironment.output.contains("env-s3cret"))
            #expect(fromEnvironment.output.contains("# environment CAIRN_METRICS_TOKEN"))
        }
    }
}
