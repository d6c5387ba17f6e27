// What the transport keeps per WebSocket connection: the message being assembled from fragments and the bytes
// waiting to be written (at the end of the loop turn that queued them, or from a writable callback when lws still
// holds part of an earlier frame). Outbound objects are joined with "\n" into one buffer that starts with LWS_PRE
// bytes of headroom, so everything pending goes out as one frame in one lws_write; for the batch of sends
// (`SendBatch`), `moveFrame` writes that same frame straight into the batch, and the slots never pass through the
// buffer. The latest-wins slots (`LatestSlots`) carry the monotonic time each position's frame was received, so the
// write can time the fan-out. The fields touched on every delivery are `@exclusivity(unchecked)`: only the loop
// thread touches them and no access overlaps another of the same field, so the run-time exclusivity check (a
// thread-local access set, about a quarter of the bookkeeping's time in `cairn-bench bookkeeping`) only costs.
import CLws
package import CairnLoop

/// One connection's buffers. Loop thread only. (`package` for `cairn-bench bookkeeping`.)
package final class ConnectionState {
    package static let pre = Int(cairn_lws_pre())
    /// Buffers that grew past this are released after use rather than kept per connection.
    package static let retainedCapacity = 16 * 1024

    package let id: ConnectionID
    let wsi: OpaquePointer
    /// The connection's own TCP socket, on which its frames may go out in a batch of sends (`SendBatch`); -1 for a
    /// WebSocket carried in an HTTP/2 stream (its frames must be wrapped by lws) and until the endpoint sets it.
    var socket: Int32 = -1
    var inbound: [UInt8] = []
    var inboundIsBinary = false
    @exclusivity(unchecked) package var outbound: [UInt8]
    /// Latest-wins slots (e.g. one pending position per friend); written after `outbound`, in the same frame.
    @exclusivity(unchecked) package var latest = LatestSlots()
    var pendingClose: (code: UInt16, reason: String)?
    package var closing = false
    /// Closed for flooding (4429): the client's frames are no longer read, and the close frame is written by us and
    /// followed by the end of our side of the stream (`WebSocketEndpoint.drainingClose`).
    var drainsOnClose = false
    /// The draining close frame has been handed to lws (its last bytes may still be buffered there).
    var closeFrameWritten = false
    /// On the endpoint's list of connections to flush at the end of this loop turn.
    @exclusivity(unchecked) package var isQueued = false
    /// A writable callback was requested for the pending bytes; until it comes, nothing is written directly.
    var awaitingWritable = false
    /// The connection is gone (CLOSED): a flush still holding it skips it.
    var isGone = false
    /// When the client was last heard from, a frame or a pong: monotonic milliseconds, wrapping (`keepAlive`).
    var lastHeard: UInt32 = 0
    /// A ping went out since the client was last heard from.
    var pinged = false
    /// Since when lws has held unsent bytes for the connection at every keepalive pass (monotonic milliseconds,
    /// wrapping); nil while it holds none.
    var backloggedSince: UInt32?

    package init(id: ConnectionID, wsi: OpaquePointer) {
        self.id = id
        self.wsi = wsi
        outbound = [UInt8](repeating: 0, count: Self.pre)
    }

    var hasOutbound: Bool { outbound.count > Self.pre }

    /// Something is waiting to be written: plain objects or latest-wins slots.
    var hasPending: Bool { hasOutbound || !latest.isEmpty }

    /// Bytes waiting to be written.
    var pendingBytes: Int { outbound.count - Self.pre + latest.pendingBytes }

    /// Moves the latest-wins slots into the outbound buffer (in the order their keys first appeared), ready for one
    /// write, and appends each one's receipt time to `receivedAt` (the caller's reused scratch array).
    package func collectLatest(receivedAt: inout [UInt64]) {
        guard !latest.isEmpty else { return }
        latest.drain { bytes, time in
            if hasOutbound { outbound.append(0x0A) }
            outbound.append(contentsOf: bytes)
            receivedAt.append(time)
        }
    }

    /// Appends one JSON object, separated from what is already pending by a newline.
    func append(_ json: UnsafeRawBufferPointer) {
        if hasOutbound { outbound.append(0x0A) }
        outbound.append(contentsOf: json)
    }

    /// The payload of the text frame everything pending makes: plain objects, then the latest-wins slots, joined by
    /// newlines.
    var framePayloadLength: Int { latest.joinedLength(after: outbound.count - Self.pre) }

    /// The bytes of the header of a WebSocket text frame of `payload` bytes sent by a server.
    static func frameHeaderLength(payload: Int) -> Int { payload < 126 ? 2 : payload < 65536 ? 4 : 10 }

    /// Writes a WebSocket text frame's header (FIN, text, unmasked: server to client) for `payload` bytes at `to`;
    /// returns its length.
    static func writeFrameHeader(payload: Int, to header: UnsafeMutableRawPointer) -> Int {
        let length = frameHeaderLength(payload: payload)
        header.storeBytes(of: 0x81, toByteOffset: 0, as: UInt8.self)
        switch length {
        case 2:
            header.storeBytes(of: UInt8(payload), toByteOffset: 1, as: UInt8.self)
        case 4:
            header.storeBytes(of: 126, toByteOffset: 1, as: UInt8.self)
            header.storeBytes(of: UInt8(truncatingIfNeeded: payload >> 8), toByteOffset: 2, as: UInt8.self)
            header.storeBytes(of: UInt8(truncatingIfNeeded: payload), toByteOffset: 3, as: UInt8.self)
        default:
            header.storeBytes(of: 127, toByteOffset: 1, as: UInt8.self)
            for index in 0..<8 {
                let byte = UInt8(truncatingIfNeeded: UInt64(payload) >> (56 - 8 * index))
                header.storeBytes(of: byte, toByteOffset: 2 + index, as: UInt8.self)
            }
        }
        return length
    }

    /// Writes everything pending as one WebSocket text frame (the frame lws_write would make, for the batch of sends
    /// that bypasses it: `SendBatch`) into `frame`, which must hold exactly the header and `payload` bytes
    /// (`framePayloadLength`), and empties what is pending, appending each latest-wins slot's receipt time to
    /// `receivedAt`. The slots' bytes go straight into `frame`, not through `outbound`.
    func moveFrame(into frame: UnsafeMutableRawBufferPointer, payload: Int, receivedAt: inout [UInt64]) {
        // Each write is checked against the room as it is made (no second pass over the slots to size them again).
        precondition(frame.count == Self.frameHeaderLength(payload: payload) + payload, "a frame's room must fit it")
        let base = frame.baseAddress!
        let header = Self.writeFrameHeader(payload: payload, to: base)
        var at = header
        let direct = outbound.count - Self.pre
        if direct > 0 {
            outbound.withUnsafeBytes { at += Self.copy($0[Self.pre...], into: frame, at: at) }
        }
        if !latest.isEmpty {
            latest.drain { bytes, time in
                if at > header {
                    precondition(at < frame.count, "a frame's room must match what is pending")
                    base.storeBytes(of: 0x0A, toByteOffset: at, as: UInt8.self)
                    at += 1
                }
                bytes.withUnsafeBytes { at += Self.copy($0[...], into: frame, at: at) }
                receivedAt.append(time)
            }
        }
        precondition(at == frame.count, "a frame's room must match what is pending")
        if direct > 0 { resetOutbound() }
    }

    /// Copies `bytes` into `frame` at offset `at`, within its bounds; returns how many.
    private static func copy(_ bytes: Slice<UnsafeRawBufferPointer>, into frame: UnsafeMutableRawBufferPointer, at: Int)
        -> Int
    {
        precondition(at + bytes.count <= frame.count, "a frame's room must match what is pending")
        if let source = bytes.base.baseAddress, !bytes.isEmpty {
            (frame.baseAddress! + at).copyMemory(from: source + bytes.startIndex, byteCount: bytes.count)
        }
        return bytes.count
    }

    /// Forgets what was written, keeping the headroom (and a modest capacity).
    package func resetOutbound() {
        if outbound.capacity > Self.retainedCapacity {
            outbound = [UInt8](repeating: 0, count: Self.pre)
        } else {
            outbound.removeLast(outbound.count - Self.pre)
        }
    }

    /// Forgets the assembled inbound message.
    func resetInbound() {
        if inbound.capacity > Self.retainedCapacity { inbound = [] } else { inbound.removeAll(keepingCapacity: true) }
    }
}
