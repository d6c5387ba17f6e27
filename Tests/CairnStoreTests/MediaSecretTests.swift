// The media URL secret: created once from the injected random source with mode 0600, then read back unchanged.
import CairnCrypto
import CairnStore
import Foundation
import Testing

@Suite(.timeLimit(.minutes(5)))
struct MediaSecretTests {
    struct Fixed: RandomSource {
        let byte: UInt8
        func bytes(_ count: Int) -> [UInt8] { [UInt8](repeating: byte, count: count) }
    }

    @Test func createdOnceThenReadBack() throws {
        let dir = temporaryDirectory()
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let first = try MediaSecret.loadOrCreate(directory: dir, random: Fixed(byte: 7))
        #expect(first == [UInt8](repeating: 7, count: 32))
        let attributes = try FileManager.default.attributesOfItem(atPath: dir + "/media.key")
        #expect((attributes[.posixPermissions] as? Int) == 0o600)
        let second = try MediaSecret.loadOrCreate(directory: dir, random: Fixed(byte: 9))
        #expect(second == first)
        // No temporary file is left behind.
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir) == ["media.key"])
    }

    @Test func aDamagedSecretIsAnError() throws {
        let dir = temporaryDirectory()
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        #expect(FileManager.default.createFile(atPath: dir + "/media.key", contents: Data([1, 2, 3])))
        #expect(throws: MediaFileError.self) {
            _ = try MediaSecret.loadOrCreate(directory: dir, random: Fixed(byte: 7))
        }
    }
}
