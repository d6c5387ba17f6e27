// Accepted media types: header parsing and the magic-byte check that an upload is what it claims to be.
import CairnHubTestSupport
import CairnLoop
import CairnMedia
import Testing

@Suite(.timeLimit(.minutes(5)))
struct MediaTypeTests {
    static let jpeg: [UInt8] = [0xFF, 0xD8, 0xFF, 0xE0, 0, 0x10]
    static let png: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0, 0]
    static let webp: [UInt8] = Array("RIFF".utf8) + [1, 0, 0, 0] + Array("WEBPVP8 ".utf8)
    static let mp4: [UInt8] = [0, 0, 0, 0x18] + Array("ftypisom".utf8)

    @Test func parsesAcceptedTypesLeniently() {
        #expect(MediaType(contentType: "image/jpeg") == .jpeg)
        #expect(MediaType(contentType: "Image/PNG") == .png)
        #expect(MediaType(contentType: " image/webp ; q=1") == .webp)
        #expect(MediaType(contentType: "video/mp4") == .mp4)
    }

    @Test(arguments: ["text/html", "image/gif", "image/svg+xml", "", "image/jpeg2", "application/octet-stream"])
    func refusesOtherTypes(type: String) {
        #expect(MediaType(contentType: type) == nil)
    }

    @Test func magicBytesMatchTheirType() {
        let samples: [(MediaType, [UInt8])] = [
            (.jpeg, Self.jpeg), (.png, Self.png), (.webp, Self.webp), (.mp4, Self.mp4),
        ]
        for (type, bytes) in samples {
            for (other, otherBytes) in samples {
                #expect(type.matches(otherBytes) == (type == other), "\(type) vs \(other)")
            }
            #expect(type.matches(bytes))
            #expect(!type.matches(Array(bytes.prefix(2))), "a truncated \(type) header")
        }
    }

    @Test func emptyOrTextBodyMatchesNothing() {
        for type in MediaType.allCases {
            #expect(!type.matches([]))
            #expect(!type.matches(Array("<html><script>alert(1)</script>".utf8)))
        }
    }
}
