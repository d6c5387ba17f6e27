// The cross-node message format: what is encoded decodes to the same message (several sections, none, negative
// ids, an empty payload), its layout is the documented one, and anything that is not exactly one well-formed
// version-1 message — truncated at any byte, padded, another version, too many sections, a count larger than
// what follows, random bytes — is refused rather than read.
import Testing

@testable import CairnCluster

@Suite(.timeLimit(.minutes(5))) struct FanOutMessageTests {
    static let sample = FanOutMessage(
        kind: 1, subject: 42,
        sections: [
            .init(tag: 0, recipients: [7, 9], payload: Array(#"{"ev":"pos","user":42,"lat":1.5}"#.utf8)),
            .init(tag: 1, recipients: [-3], payload: Array(#"{"ev":"pos","user":42,"approx":true}"#.utf8)),
        ])

    @Test func roundTrips() throws {
        let decoded = try #require(FanOutMessage(decoding: Self.sample.encoded()))
        #expect(decoded == Self.sample)
        let empty = FanOutMessage(kind: 3, subject: -1, sections: [.init(tag: 0, recipients: [5], payload: [])])
        #expect(FanOutMessage(decoding: empty.encoded()) == empty)
        let none = FanOutMessage(kind: 2, subject: Int64.max, sections: [])
        #expect(FanOutMessage(decoding: none.encoded()) == none)
    }

    @Test func layoutIsTheDocumentedOne() {
        let message = FanOutMessage(kind: 2, subject: 258, sections: [.init(tag: 1, recipients: [3], payload: [9])])
        #expect(
            message.encoded() == [
                1, 2, 2, 1, 0, 0, 0, 0, 0, 0,  // version, kind, subject 258
                1,  // one section
                1, 1, 0, 0, 0, 3, 0, 0, 0, 0, 0, 0, 0,  // tag 1, one recipient: 3
                1, 0, 0, 0, 9,  // a one-byte payload
            ])
    }

    @Test func everyTruncationIsRefused() {
        let bytes = Self.sample.encoded()
        for length in 0..<bytes.count {
            #expect(FanOutMessage(decoding: Array(bytes.prefix(length))) == nil, "truncated to \(length)")
        }
    }

    @Test func paddingAnotherVersionAndLyingCountsAreRefused() {
        let bytes = Self.sample.encoded()
        #expect(FanOutMessage(decoding: bytes + [0]) == nil)
        var version = bytes
        version[0] = 2
        #expect(FanOutMessage(decoding: version) == nil)
        var sections = bytes
        sections[10] = 5  // more than maxSections
        #expect(FanOutMessage(decoding: sections) == nil)
        var recipients = bytes
        recipients[12] = 0xFF  // recipient count far beyond what follows
        recipients[15] = 0x7F
        #expect(FanOutMessage(decoding: recipients) == nil)
        var payload = bytes
        payload[12 + 4 + 16] = 0xFF  // first payload's length beyond what follows
        #expect(FanOutMessage(decoding: payload) == nil)
    }

    @Test func garbageIsRefused() {
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<500 {
            let length = Int.random(in: 0..<64, using: &generator)
            var bytes = (0..<length).map { _ in UInt8.random(in: 0...255, using: &generator) }
            if !bytes.isEmpty { bytes[0] = 1 }  // past the version check, into the lengths
            if let message = FanOutMessage(decoding: bytes) {
                #expect(message.encoded() == bytes, "accepted only if it is exactly a message")
            }
        }
        #expect(FanOutMessage(decoding: Array("+12/node-a".utf8)) == nil)
    }

    @Test func atMostFourSectionsAreWritten() throws {
        let section = FanOutMessage.Section(tag: 0, recipients: [1], payload: [1])
        let message = FanOutMessage(kind: 1, subject: 1, sections: Array(repeating: section, count: 6))
        #expect(try #require(FanOutMessage(decoding: message.encoded())).sections.count == 4)
    }
}
