// `cairn backup` against a hub that is running and writing: the copy is a complete database that a new hub starts
// from (restore = put the file in an empty data directory), it never overwrites a file, and a missing database is
// named. With the hubs on PostgreSQL (storage.url), `backup` says to use pg_dump, and `user` and `places` refuse a
// data directory given beside the database's URL rather than work on data no hub reads.
import CairnStore
import CairnTestSupport
import Foundation
import Testing

extension ServerIntegration {
    @Suite struct BackupCommandTests {
        @Test func backsUpALiveStoreAndRestoresIt() throws {
            let hub = try RunningHub()
            defer { hub.removeData() }
            let work = NSTemporaryDirectory() + "cairn-backup-\(UUID().uuidString)"
            try FileManager.default.createDirectory(atPath: work, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(atPath: work) }
            let (_, token) = try hub.registered("ada")
            let (ada, _) = try hub.member("grace")

            // Back up while the hub runs and a client keeps it busy.
            let out = work + "/cairn-backup.sqlite"
            let backup = try TestServerProcess(arguments: ["backup", "--data", hub.dataDirectory, "--out", out])
            for i in 0..<20 { _ = try ada.requestOK("whoami", ["n": i]) }
            #expect(try backup.waitForExit(timeout: 60) == 0, "\(backup.output)")
            #expect(backup.output.contains("backed up"))
            #expect(backup.output.contains("schema v"))
            // Written after the backup: must not be in it.
            _ = try hub.registered("late")

            // A second backup to the same file is refused; the first stays intact.
            let again = try TestServerProcess(arguments: ["backup", "--data", hub.dataDirectory, "--out", out])
            #expect(try again.waitForExit(timeout: 60) == 1)
            #expect(again.output.contains("already exists"))
            try hub.stop()

            // Restore: the backup becomes cairn.sqlite of an empty data directory.
            let restored = work + "/restored"
            try FileManager.default.createDirectory(atPath: restored, withIntermediateDirectories: true)
            try FileManager.default.copyItem(atPath: out, toPath: restored + "/" + SQLiteStore.fileName)
            let second = try RunningHub(dataDirectory: restored)
            let c = try second.client()
            #expect(try c.request("login", ["username": "ada", "password": "password1"])["ok"] as? Bool == true)
            #expect(try c.request("auth", ["token": token])["ok"] as? Bool == true)
            #expect(try c.request("login", ["username": "late", "password": "password1"])["ok"] as? Bool == false)
            try second.stop()
        }

        @Test func aMissingDatabaseIsNamed() throws {
            let empty = NSTemporaryDirectory() + "cairn-nodb-\(UUID().uuidString)"
            let backup = try TestServerProcess(arguments: ["backup", "--data", empty, "--out", empty + ".sqlite"])
            #expect(try backup.waitForExit(timeout: 30) == 1)
            #expect(backup.output.contains("no database at \(empty)/cairn.sqlite"))
            #expect(!FileManager.default.fileExists(atPath: empty + ".sqlite"))
        }

        @Test func backupNamesPgDumpWhenTheHubsUsePostgreSQL() throws {
            let data = NSTemporaryDirectory() + "cairn-pgcli-\(UUID().uuidString)"
            defer { try? FileManager.default.removeItem(atPath: data) }
            let url = "postgresql://cairn@127.0.0.1:1/cairn"
            let shared = ["CAIRN_STORAGE_URL": url]
            let backup = try TestServerProcess(
                arguments: ["backup", "--data", data, "--out", data + ".sqlite"], environment: shared)
            let flagged = try TestServerProcess(arguments: ["backup", "--storage-url", url, "--out", data + ".sqlite"])
            for (name, process) in [("CAIRN_STORAGE_URL", backup), ("--storage-url", flagged)] {
                #expect(try process.waitForExit(timeout: 30) == 1, "\(name): \(process.output)")
                #expect(process.output.contains("back it up with pg_dump"), "\(name): \(process.output)")
                #expect(process.output.contains("\"Backing up PostgreSQL\""), "\(name): \(process.output)")
            }
            let user = try TestServerProcess(
                arguments: ["user", "grant-ops", "--data", data, "ada"], environment: shared)
            #expect(try user.waitForExit(timeout: 30) == 1)
            #expect(user.output.contains("both --data and a storage URL (CAIRN_STORAGE_URL)"), "\(user.output)")
            let places = try TestServerProcess(arguments: ["places", "list", "--data", data, "--storage-url", url])
            #expect(try places.waitForExit(timeout: 30) == 1)
            #expect(places.output.contains("both --data and a storage URL (--storage-url)"), "\(places.output)")
            #expect(!FileManager.default.fileExists(atPath: data + "/cairn.sqlite"), "no SQLite made on the side")
            #expect(!FileManager.default.fileExists(atPath: data + ".sqlite"))
        }
    }
}
