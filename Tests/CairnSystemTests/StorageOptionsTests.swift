// Where the maintenance commands look for the hub's data when nothing names it (StorageOptions): ./data of the
// directory they run in, only where it holds a hub's database; run from anywhere else they are refused, naming --data
// and --config, and make no ./data there. `seed`, which makes data, may still create the default directory.
import CairnTestSupport
import Foundation
import Testing

extension ServerIntegration {
    @Suite struct StorageOptionsTests {
        /// Runs `cairn` in `directory` to its end; answers its exit status and output.
        static func cairn(_ arguments: [String], in directory: String) throws -> (status: Int32, output: String) {
            let process = try TestServerProcess(arguments: arguments, in: directory)
            let status = try process.waitForExit(timeout: 60)
            return (status, process.output)
        }

        @Test func withoutHubDataTheDefaultIsRefusedNamingTheOptions() throws {
            let dir = NSTemporaryDirectory() + "cairn-nodata-\(UUID().uuidString)"
            try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(atPath: dir) }
            try Data("lat,lon,name\n46.0,7.7,Somewhere\n".utf8).write(to: URL(fileURLWithPath: dir + "/p.csv"))

            for command in [
                ["user", "list"], ["user", "create", "carol"], ["places", "import", "p.csv"],
                ["user", "delete", "carol"], ["backup", "--out", "b.sqlite"],
            ] {
                let refused = try Self.cairn(command, in: dir)
                #expect(refused.status == 1, "\(command): \(refused.output)")
                #expect(refused.output.contains("no hub data in ./data"), "\(command): \(refused.output)")
                #expect(refused.output.contains("--data DIR") && refused.output.contains("--config FILE"))
                #expect(!FileManager.default.fileExists(atPath: dir + "/data"), "\(command) made ./data")
            }

            // seed makes data: the default directory is created, and then the other commands use it.
            let seeded = try Self.cairn(["seed", "--users", "3", "--friends", "1", "--out", "tokens.json"], in: dir)
            #expect(seeded.status == 0, "\(seeded.output)")
            let listed = try Self.cairn(["user", "list"], in: dir)
            #expect(listed.status == 0 && listed.output.split(separator: "\n").count == 4, "\(listed.output)")
        }
    }
}
