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
        #expect(ConnectionState.frameHeaderLength(payload: length) == header.count)
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
    /// order their keys first appeared, each slot's receipt time once, and leaves nothing pending. Past 16 keys the
    /// slots are indexed and a dropped key leaves a dead slot behind; empty objects get no separator before them
    /// while nothing precedes them, as on the lws path; and payloads on both sides of the header's 125/126 step.
    @Test(arguments: [
        (0, 1, 0, 10), (0, 3, 0, 10), (1, 0, 0, 10), (1, 1, 0, 10), (2, 3, 0, 10), (0, 24, 5, 10), (2, 24, 5, 10),
        (0, 1, 0, 125), (0, 1, 0, 126), (0, 2, 0, 62), (0, 2, 0, 63), (1, 3, 0, 0), (0, 3, 0, 0),
    ])
    func slotsGoStraightIntoTheFrameAsTheLwsPathWouldJoinThem(objects: Int, slots: Int, dropped: Int, size: Int)
        throws
    {
        func object(_ text: String) -> [UInt8] {
            let bytes = Array(text.utf8)
            let padded = bytes + [UInt8](repeating: 0x20, count: max(0, size - bytes.count))
            return Array(padded.prefix(size))
        }
        func pending() throws -> ConnectionState {
            let state = ConnectionState(id: 1, wsi: try #require(OpaquePointer(bitPattern: 0x10)))
            for index in 0..<objects { object("{\"reply\":\(index)}").withUnsafeBytes { state.append($0) } }
            for slot in 0..<slots { state.latest.set(Int64(100 + slot), object("{\"old\":\(slot)}"), receivedAt: 1) }
            for slot in (0..<slots).reversed() {
                state.latest.set(Int64(100 + slot), object("{\"pos\":\(slot)}"), receivedAt: UInt64(10 + slot))
            }
            for slot in 0..<dropped { state.latest.remove(Int64(100 + 2 * slot)) }
            return state
        }
        let batched = try pending()
        #expect(batched.latest.isIndexed == (slots > LatestSlots.linearLimit))
        var receipts: [UInt64] = []
        let frame = frame(of: batched, receivedAt: &receipts)
        let expected = lwsPayload(of: try pending())
        let header = expectedHeader(expected.count)
        #expect(Array(frame.prefix(header.count)) == header)
        #expect(Array(frame.dropFirst(header.count)) == expected)
        let kept = (0..<slots).filter { $0 >= 2 * dropped || $0 % 2 == 1 }
        #expect(receipts == kept.map { UInt64(10 + $0) })
        #expect(!batched.hasPending)
        let text = String(decoding: expected, as: UTF8.self)
        #expect(!text.contains("old"))
        if size > 0 { #expect(text.split(separator: "\n").count == objects + kept.count) }
    }
}
