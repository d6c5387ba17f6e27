// `cairn backup` against a hub that is running and writing: the copy is a complete database that a new hub starts
// from (restore = put the file in an empty data directory), it never overwrites a file, and a missing database is
// named.
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
    }
}
