import Testing

// The text frame a connection's pending output becomes when the transport frames it itself (for the batch of sends):
// the header in front of the payload, at each length where its form changes, as RFC 6455 §5.2 spells it for a
// server (FIN, text, no mask), and what is pending unchanged behind it.
@testable import CairnServer

@Suite(.timeLimit(.minutes(1)))
struct ConnectionStateTests {
    /// The header a frame of `length` payload bytes must start with.
    private func expectedHeader(_ length: Int) -> [UInt8] {
        switch length {
        case ..<126: return [0x81, UInt8(length)]
        case ..<65536: return [0x81, 126, UInt8(length >> 8), UInt8(length & 0xFF)]
        default: return [0x81, 127] + (0..<8).map { UInt8(truncatingIfNeeded: UInt64(length) >> (56 - 8 * $0)) }
        }
    }

    @Test(arguments: [1, 125, 126, 127, 65535, 65536, 70000])
    func aFramesHeaderMatchesItsLength(length: Int) throws {
        let state = ConnectionState(id: 1, wsi: try #require(OpaquePointer(bitPattern: 0x10)))
        let payload = (0..<length).map { UInt8(0x20 + $0 % 90) }
        payload.withUnsafeBytes { state.append($0) }
        let frame = state.withTextFrame { Array($0) }
        let header = expectedHeader(length)
        #expect(Array(frame.prefix(header.count)) == header)
        #expect(Array(frame.dropFirst(header.count)) == payload)
        #expect(header.count <= ConnectionState.maxFrameHeader)
    }

    @Test func objectsPendingTogetherAreOneFrameJoinedByNewlines() throws {
        let state = ConnectionState(id: 1, wsi: try #require(OpaquePointer(bitPattern: 0x10)))
        Array(#"{"a":1}"#.utf8).withUnsafeBytes { state.append($0) }
        Array(#"{"b":2}"#.utf8).withUnsafeBytes { state.append($0) }
        let frame = state.withTextFrame { Array($0) }
        #expect(frame == [0x81, 15] + Array("{\"a\":1}\n{\"b\":2}".utf8))
    }
}
