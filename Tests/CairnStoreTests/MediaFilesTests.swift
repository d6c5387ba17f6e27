import Foundation
import Testing

// Content-addressed media files: atomic placement, deduplication, removal, and the sweeps of stale files.
@testable import CairnStore

@Suite(.timeLimit(.minutes(5)))
struct MediaFilesTests {
    static let id = String(repeating: "0a", count: 32)

    private func madeDirectory() throws -> String {
        let dir = temporaryDirectory()
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        return dir
    }

    @Test func writesOnceAndDeduplicates() throws {
        let dir = try madeDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let files = try MediaFiles(root: dir + "/media")
        #expect(try files.write(Self.id, bytes: [1, 2, 3]))
        #expect(files.path(for: Self.id) == dir + "/media/0a/" + Self.id)
        #expect(FileManager.default.contents(atPath: files.path(for: Self.id)) == Data([1, 2, 3]))
        #expect(files.contains(Self.id, size: 3))
        #expect(!files.contains(Self.id, size: 4))
        #expect(try files.write(Self.id, bytes: [1, 2, 3]) == false)
        // Nothing is left in the temporary folder.
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir + "/media/tmp").isEmpty)
        let attributes = try FileManager.default.attributesOfItem(atPath: files.path(for: Self.id))
        #expect((attributes[.posixPermissions] as? Int) == 0o600)
    }

    @Test func aTruncatedFileIsReplaced() throws {
        let dir = try madeDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let files = try MediaFiles(root: dir + "/media")
        try files.write(Self.id, bytes: [1])
        #expect(try files.write(Self.id, bytes: [1, 2, 3]))
        #expect(FileManager.default.contents(atPath: files.path(for: Self.id)) == Data([1, 2, 3]))
    }

    @Test func removeIsIdempotent() throws {
        let dir = try madeDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let files = try MediaFiles(root: dir + "/media")
        try files.write(Self.id, bytes: [9])
        try files.remove(Self.id)
        #expect(!files.contains(Self.id, size: 1))
        try files.remove(Self.id)
    }

    @Test func listsOldFilesAndSweepsOldTemporaries() throws {
        let dir = try madeDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let files = try MediaFiles(root: dir + "/media")
        try files.write(Self.id, bytes: [9])
        #expect(FileManager.default.createFile(atPath: dir + "/media/tmp/upload-left", contents: Data([1])))
        let future = Int64(Date().timeIntervalSince1970 * 1000) + 60_000
        #expect(files.ids(modifiedBefore: 0).isEmpty)
        #expect(files.ids(modifiedBefore: future) == [Self.id])
        #expect(files.removeTemporaries(modifiedBefore: 0) == 0)
        #expect(files.removeTemporaries(modifiedBefore: future) == 1)
        #expect(!FileManager.default.fileExists(atPath: dir + "/media/tmp/upload-left"))
    }
}
