// The maintenance commands on the PostgreSQL database several hubs share, with the real binary and a real server:
// `cairn user grant-admin` / `grant-ops` / `revoke-admin` through `--storage-url`, `CAIRN_STORAGE_URL` or a
// configuration file's `storage.url` (`--config`, `CAIRN_CONFIG`) change the role a running hub on that database
// checks at its next request; `cairn places import` writes places the hub serves once it reads them again; and the
// backup the operations guide gives (pg_dump, then pg_restore into an emptied database) brings back the accounts and
// their roles.
import CairnTestSupport
import Foundation
import Testing

extension ServerIntegration {
    @Suite(.enabled(if: PostgresServerProcess.isAvailable, "PostgreSQL is not installed"))
    struct MaintenancePostgresTests {
        typealias Node = SharedStoreTests.Node

        /// Runs `cairn` with `arguments` (and `environment`) to its end; answers its exit status and output.
        static func cairn(_ arguments: [String], _ environment: [String: String] = [:]) throws -> (Int32, String) {
            let process = try TestServerProcess(arguments: arguments, environment: environment)
            let status = try process.waitForExit(timeout: 60)
            return (status, process.output)
        }

        /// Whether `client` may use the admin ops (the hub asks the store at each request).
        static func isAdmin(_ client: WebSocketClient) throws -> Bool {
            let reply = try client.request("admin.users")
            if reply["ok"] as? Bool == true { return true }
            #expect((reply["error"] as? [String: Any])?["code"] as? String == "forbidden", "\(reply)")
            return false
        }

        @Test func rolesChangeInTheSharedDatabase() throws {
            let url = try PostgresServerProcess.freshURL()
            let hub = try Node("a", url: url)
            let (ada, _) = try registerMember(port: hub.port, "ada")
            #expect(try !Self.isAdmin(ada))

            let granted = try Self.cairn(["user", "grant-admin", "ada"], ["CAIRN_STORAGE_URL": url])
            #expect(granted.0 == 0 && granted.1.contains("granted admin to 'ada'"), "\(granted.1)")
            #expect(try Self.isAdmin(ada), "the hub finds the role in the database")
            let again = try Self.cairn(["user", "grant-admin", "ada", "--storage-url", url])
            #expect(again.0 == 0 && again.1.contains("'ada' already has admin"), "\(again.1)")
            let ops = try Self.cairn(["user", "grant-ops", "--storage-url", url, "ada"])
            #expect(ops.0 == 0 && ops.1.contains("granted ops to 'ada'"), "\(ops.1)")
            let unknown = try Self.cairn(["user", "grant-ops", "--storage-url", url, "nobody"])
            #expect(unknown.0 == 1 && unknown.1.contains("no user named 'nobody'"), "\(unknown.1)")

            let revoked = try Self.cairn(["user", "revoke-admin", "--storage-url", url, "ada"])
            #expect(revoked.0 == 0 && revoked.1.contains("revoked admin from 'ada'"), "\(revoked.1)")
            #expect(try !Self.isAdmin(ada))
        }

        /// A hub whose `storage.url` is only in its configuration file: `--config FILE` (or `CAIRN_CONFIG`) is all
        /// `user` needs to act on that database rather than on a data directory.
        @Test func theStorageURLComesFromTheConfigurationFile() throws {
            let url = try PostgresServerProcess.freshURL()
            let hub = try Node("a", url: url)
            let (ada, _) = try registerMember(port: hub.port, "ada")
            let config = NSTemporaryDirectory() + "cairn-pgconfig-\(UUID().uuidString).toml"
            defer { try? FileManager.default.removeItem(atPath: config) }
            try "[storage]\nurl = \"\(url)\"\n".write(toFile: config, atomically: true, encoding: .utf8)

            let granted = try Self.cairn(["user", "grant-admin", "--config", config, "ada"])
            #expect(granted.0 == 0 && granted.1.contains("granted admin to 'ada'"), "\(granted.1)")
            #expect(try Self.isAdmin(ada), "the hub finds the role in the database")
            let revoked = try Self.cairn(["user", "revoke-admin", "ada"], ["CAIRN_CONFIG": config])
            #expect(revoked.0 == 0 && revoked.1.contains("revoked admin from 'ada'"), "\(revoked.1)")
            #expect(try !Self.isAdmin(ada))
            // A data directory named beside the file's URL is refused, naming where the URL came from.
            let both = try Self.cairn(["user", "grant-admin", "--config", config, "--data", hub.data, "ada"])
            #expect(both.0 == 1 && both.1.contains("storage URL (storage.url in \(config))"), "\(both.1)")
            #expect(try !Self.isAdmin(ada))
        }

        @Test func placesImportIntoTheSharedDatabase() throws {
            let url = try PostgresServerProcess.freshURL()
            let hub = try Node("a", url: url)
            let (ada, _) = try registerMember(port: hub.port, "ada")
            #expect(try Self.cairn(["user", "grant-ops", "--storage-url", url, "ada"]).0 == 0)
            let csv = NSTemporaryDirectory() + "cairn-pgplaces-\(UUID().uuidString).csv"
            defer { try? FileManager.default.removeItem(atPath: csv) }
            try "lat,lon,name,id\n46.02,7.75,Zermatt,z\n46.10,7.23,Verbier,v\n".write(
                toFile: csv, atomically: true, encoding: .utf8)

            let imported = try Self.cairn(["places", "import", csv, "--source", "ski", "--storage-url", url])
            #expect(imported.0 == 0 && imported.1.contains("2 new"), "\(imported.1)")
            #expect(imported.1.contains("SIGHUP or places.reload"), "\(imported.1)")
            let listed = try Self.cairn(["places", "list"], ["CAIRN_STORAGE_URL": url])
            #expect(listed.0 == 0 && listed.1.contains("ski\tplace\t2"), "\(listed.1)")
            _ = try ada.requestOK("places.reload")
            let near = try ada.requestOK("places.nearest", ["lat": 46.0, "lon": 7.7, "limit": 2])
            let names = (near["places"] as? [[String: Any]] ?? []).compactMap { $0["name"] as? String }
            #expect(names == ["Zermatt", "Verbier"])
            let removed = try Self.cairn(["places", "remove", "--source", "ski", "--storage-url", url])
            #expect(removed.0 == 0 && removed.1.contains("removed 2 place(s)"), "\(removed.1)")
        }

        @Test func aPgDumpRestoredIntoAnEmptiedDatabaseBringsBackAccountsAndRoles() throws {
            let server = try PostgresServerProcess.shared.get()
            let url = try PostgresServerProcess.freshURL()
            let schema = try #require(PostgresServerProcess.schema(of: url))
            let dump = NSTemporaryDirectory() + "cairn-\(schema)-\(UUID().uuidString).dump"
            defer { try? FileManager.default.removeItem(atPath: dump) }
            var hub: Node? = try Node("a", url: url)
            _ = try registerMember(port: try #require(hub).port, "ada")
            #expect(try Self.cairn(["user", "grant-admin", "--storage-url", url, "ada"]).0 == 0)

            // As docs/OPERATIONS.md says (here for the one schema the test owns): dump while the hub runs...
            try server.client("pg_dump", ["--format=custom", "--schema=\(schema)", "--file=\(dump)", "postgres"])
            hub = nil  // ...stop the hubs, and restore into an emptied database.
            try server.client("psql", ["-q", "-d", "postgres", "-c", "DROP SCHEMA \(schema) CASCADE"])
            try server.client("pg_restore", ["--no-owner", "--dbname=postgres", dump])

            let restored = try Node("b", url: url)
            let ada = try WebSocketClient(port: restored.port, timeout: 10)
            _ = try ada.requestOK("login", ["username": "ada", "password": "password1"])
            #expect(try Self.isAdmin(ada))
        }
    }
}
