import Testing

// The text frame a connection's pending output becomes when the transport frames it itself (for the batch of sends):
// the header in front of the payload, at each length where its form changes, as RFC 6455 §5.2 spells it for a
// server (FIN, text, no mask), and behind it exactly the payload the lws path writes for the same pending output.
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

    /// The frame `state` makes for the batch, through the same room-sizing the endpoint uses.
    private func frame(of state: ConnectionState, receivedAt: inout [UInt64]) -> [UInt8] {
        let payload = state.framePayloadLength
        var frame = [UInt8](repeating: 0xEE, count: ConnectionState.frameHeaderLength(payload: payload) + payload)
        frame.withUnsafeMutableBytes { state.moveFrame(into: $0, payload: payload, receivedAt: &receivedAt) }
        return frame
    }

    /// The payload the lws path writes for what is pending (slots collected into the outbound buffer).
    private func lwsPayload(of state: ConnectionState) -> [UInt8] {
        var receipts: [UInt64] = []
        state.collectLatest(receivedAt: &receipts)
        return Array(state.outbound.dropFirst(ConnectionState.pre))
    }

    @Test(arguments: [1, 125, 126, 127, 65535, 65536, 70000])
    func aFramesHeaderMatchesItsLength(length: Int) throws {
        let state = ConnectionState(id: 1, wsi: try #require(OpaquePointer(bitPattern: 0x10)))
        let payload = (0..<length).map { UInt8(0x20 + $0 % 90) }
        payload.withUnsafeBytes { state.append($0) }
        var receipts: [UInt64] = []
        let frame = frame(of: state, receivedAt: &receipts)
        let header = expectedHeader(length)
        #expect(Array(frame.prefix(header.count)) == header)
        #expect(Array(frame.dropFirst(header.count)) == payload)
        #expect(header.count <= ConnectionState.maxFrameHeader)
        #expect(!state.hasPending && receipts.isEmpty)
    }

    @Test func objectsPendingTogetherAreOneFrameJoinedByNewlines() throws {
        let state = ConnectionState(id: 1, wsi: try #require(OpaquePointer(bitPattern: 0x10)))
        Array(#"{"a":1}"#.utf8).withUnsafeBytes { state.append($0) }
        Array(#"{"b":2}"#.utf8).withUnsafeBytes { state.append($0) }
        var receipts: [UInt64] = []
        #expect(frame(of: state, receivedAt: &receipts) == [0x81, 15] + Array("{\"a\":1}\n{\"b\":2}".utf8))
    }

    /// Plain objects, latest-wins slots, or both: the batch's frame carries the lws path's payload, the slots in the
    /// order their keys first appeared, each slot's receipt time once, and leaves nothing pending.
    @Test(arguments: [(0, 1), (0, 3), (1, 0), (1, 1), (2, 3)])
    func slotsGoStraightIntoTheFrameAsTheLwsPathWouldJoinThem(objects: Int, slots: Int) throws {
        func pending() throws -> ConnectionState {
            let state = ConnectionState(id: 1, wsi: try #require(OpaquePointer(bitPattern: 0x10)))
            for object in 0..<objects { Array(#"{"reply":\#(object)}"#.utf8).withUnsafeBytes { state.append($0) } }
            for slot in 0..<slots {
                state.latest.set(Int64(100 + slot), Array(#"{"old":\#(slot)}"#.utf8), receivedAt: 1)
            }
            for slot in (0..<slots).reversed() {
                state.latest.set(Int64(100 + slot), Array(#"{"pos":\#(slot)}"#.utf8), receivedAt: UInt64(10 + slot))
            }
            return state
        }
        let batched = try pending()
        var receipts: [UInt64] = []
        let frame = frame(of: batched, receivedAt: &receipts)
        let expected = lwsPayload(of: try pending())
        let header = expectedHeader(expected.count)
        #expect(Array(frame.prefix(header.count)) == header)
        #expect(Array(frame.dropFirst(header.count)) == expected)
        #expect(receipts == (0..<slots).map { UInt64(10 + $0) })
        #expect(!batched.hasPending)
        let text = String(decoding: expected, as: UTF8.self)
        #expect(text.split(separator: "\n").count == objects + slots)
        #expect(!text.contains("old"))
    }
}
