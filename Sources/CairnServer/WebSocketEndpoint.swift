// The WebSocket side of the port: the table of open connections, upgrades (only on `/ws`, with an optional bearer
// token), inbound messages assembled from fragments within the size cap, outbound bytes and latest-wins slots, and
// closes with a code and a reason. It hands every connection event to the `ConnectionHandler` and is that
// handler's `Outbound`; it knows frames, not what a message means. Everything here runs on the service thread; the
// entry points assert it.
//
// Writing: what a loop turn queues for a connection is gathered and written as one frame when the turn ends
// (`flush`, called by the service loop), straight from there when lws holds nothing of an earlier frame. Only when
// lws still buffers the unsent part of an earlier frame (the socket would not take it all) does the connection wait
// for a writable callback, which lws withholds until that part has drained; so frames never interleave, and a
// slow reader's pending bytes stay with us, bounded (`maxOutboundBytes`, latest-wins slots). On plain sockets the
// turn's frames go to the kernel in one io_uring submission (`SendBatch`, `server.io_uring`); what a socket does not
// take of its frame is handed to lws as raw bytes, which it buffers like the rest of a partial lws_write.
import CLws
import CairnLoop
import CairnWire
import Glibc
import Logging

/// WebSocket connections of one server. Loop thread only.
final class WebSocketEndpoint {
    private let configuration: ServerConfiguration
    private let handler: any ConnectionHandler
    private let observer: any TransportObserver
    private let confinement: LoopConfinement
    private let logger: Logger

    /// Open connections by dense id (a slot and its generation; see `ConnectionTable`). This field, `queued` and
    /// `writeReceipts` skip the run-time exclusivity check, as the per-delivery fields of `ConnectionState` do.
    @exclusivity(unchecked) private var connections = ConnectionTable()
    /// Bearer tokens seen at the upgrade, by wsi address, until the connection is established or gone.
    private var pendingTokens: [UInt: String] = [:]
    /// Set at shutdown: new connections are closed at once, new messages dropped.
    var draining = false
    /// Connections opened plus connections closed, since the start (`HeapTrim` watches it for bursts).
    private(set) var changes = 0
    /// Receipt time (monotonic ns) of the message the handler is handling now; 0 outside `received`.
    private var currentReceiptAt: UInt64 = 0
    /// Scratch for the receipt times of the positions in one write (reused, so timing allocates nothing).
    @exclusivity(unchecked) private var writeReceipts: [UInt64] = []
    /// Connections given something to write in this loop turn, each once, in the order they were first given it.
    @exclusivity(unchecked) private var queued: [ConnectionState] = []
    /// The list being flushed (swapped with `queued`, so neither allocates per turn).
    private var flushing: [ConnectionState] = []
    /// The end of a turn's sends in one submission; nil where each frame is an lws_write of its own (TLS, the
    /// option off, or io_uring refused by the kernel).
    private(set) var sendBatch: SendBatch?
    /// The connection of each entry in `sendBatch`, by index.
    @exclusivity(unchecked) private var batched: [ConnectionState] = []
    /// Frames a socket took only part of (or none of) in a batch, their rest handed to lws (tests read it).
    private(set) var batchRemainders = 0
    /// The lws context, set once it exists: what `lws_cancel_service` wakes when a close queued something outside
    /// the part of a loop turn that ends with `flush` (a close made by an lws timeout, with the poll() loop).
    var context: OpaquePointer?

    init(
        configuration: ServerConfiguration, handler: any ConnectionHandler, observer: any TransportObserver,
        confinement: LoopConfinement, logger: Logger
    ) {
        self.configuration = configuration
        self.handler = handler
        self.observer = observer
        self.confinement = confinement
        self.logger = logger
        if configuration.ioUring && !configuration.usesTLS {
            switch SendBatch.make() {
            case .success(let batch):
                sendBatch = batch
                batched.reserveCapacity(Int(SendBatch.defaultEntries))
                logger.info("a loop turn's frames go out in io_uring submissions of up to \(SendBatch.defaultEntries)")
            case .failure(let error):
                logger.warning("io_uring unavailable (\(error)); each frame is written with a send() of its own")
            }
        }
    }

    /// No connection is open.
    var isEmpty: Bool { connections.isEmpty }
    /// Open connections.
    var count: Int { connections.count }

    // MARK: Connection events (from the lws callback)

    /// Accepts WebSocket upgrades only on `/ws` and remembers a bearer token from the header or `?token=`.
    func filterUpgrade(_ wsi: OpaquePointer) -> Int32 {
        let path = RequestHeaders.value(wsi, cairn_lws_token_get_uri()) ?? ""
        guard path == "/ws" || path == "/ws/" else {
            logger.debug("refused WebSocket upgrade on \(path)")
            return 1
        }
        if let token = RequestHeaders.bearerToken(wsi) {
            pendingTokens[UInt(bitPattern: wsi)] = token
            return 0
        }
        var buffer = [CChar](repeating: 0, count: 256)
        let found = buffer.withUnsafeMutableBufferPointer { b -> String? in
            guard let value = lws_get_urlarg_by_name(wsi, "token=", b.baseAddress, Int32(b.count)) else { return nil }
            return String(cString: value)
        }
        if let found, !found.isEmpty { pendingTokens[UInt(bitPattern: wsi)] = found }
        return 0
    }

    /// Forgets a token stored for a wsi that is going away. An upgrade can fail after the filter stored one (lws
    /// then reports CLOSED, not CLOSED_HTTP): it must not outlive the wsi, or the next connection given the same
    /// address would inherit it.
    func forget(_ wsi: OpaquePointer) {
        pendingTokens[UInt(bitPattern: wsi)] = nil
    }

    func opened(wsi: OpaquePointer, session: UnsafeMutableRawPointer) {
        let state = connections.insert { ConnectionState(id: $0, wsi: wsi) }
        if lws_get_network_wsi(wsi) == wsi { state.socket = lws_get_socket_fd(wsi) }
        state.lastHeard = Self.milliseconds()
        let id = state.id
        session.storeBytes(of: id, as: UInt64.self)
        observer.connectionOpened()
        changes += 1
        let token = pendingTokens.removeValue(forKey: UInt(bitPattern: wsi))
        if draining {
            close(state, code: CloseCode.goingAway.rawValue, reason: "server shutting down")
            return
        }
        handler.connectionOpened(id, token: token, peer: Self.peerAddress(wsi))
    }

    /// The numeric source address of the connection (no name lookup), nil when lws cannot tell.
    private static func peerAddress(_ wsi: OpaquePointer) -> String? {
        var buffer = [CChar](repeating: 0, count: 64)
        let found = buffer.withUnsafeMutableBufferPointer { b -> String? in
            guard let text = lws_get_peer_simple(wsi, b.baseAddress, b.count) else { return nil }
            return String(cString: text)
        }
        guard let found, !found.isEmpty else { return nil }
        return found
    }

    func connection(for session: UnsafeMutableRawPointer?) -> ConnectionState? {
        guard let session else { return nil }
        let id = session.load(as: UInt64.self)
        return id == 0 ? nil : connections[id]
    }

    /// Handles one chunk of an inbound message.
    func received(_ state: ConnectionState, bytes: UnsafeRawBufferPointer) {
        // One clock read per chunk: it stamps the keepalive and, for a whole text message, its receipt.
        let now = MonotonicTime.now()
        heard(state, at: now)
        let wsi = state.wsi
        // After an oversized message, or once closing, the rest of what the client sends is read and dropped:
        // dropping the socket with unread input would make the kernel reset it, and the client could lose the
        // close frame (and its code) in the reset.
        if state.closing { return }
        if lws_is_first_fragment(wsi) != 0 && state.inbound.isEmpty {
            state.inboundIsBinary = lws_frame_is_binary(wsi) != 0
        }
        let remaining = Int(lws_remaining_packet_payload(wsi))
        if state.inbound.count + bytes.count + remaining > configuration.maxMessageBytes {
            state.resetInbound()
            close(
                state, code: CloseCode.messageTooBig.rawValue,
                reason: "message exceeds \(configuration.maxMessageBytes) bytes")
            return
        }
        state.inbound.append(contentsOf: bytes)
        guard lws_is_final_fragment(wsi) != 0 && remaining == 0 else { return }
        if draining {
            state.resetInbound()
            return
        }
        observer.messageReceived(bytes: state.inbound.count)
        if state.inboundIsBinary {
            handler.receivedBinary(state.id)
        } else {
            currentReceiptAt = now
            state.inbound.withUnsafeBytes { handler.received(state.id, frame: $0) }
            currentReceiptAt = 0
        }
        state.resetInbound()
    }

    /// The writable callback: writes everything pending as one frame, or performs a pending close. Returns false to
    /// close.
    func writable(_ state: ConnectionState) -> Bool {
        state.awaitingWritable = false
        if state.hasPending {
            guard write(state) else { return false }
            if state.pendingClose != nil { requestWritable(state) }
            return true
        }
        if let close = state.pendingClose {
            if state.drainsOnClose { return drainingClose(state, code: close.code, reason: close.reason) }
            setCloseReason(state.wsi, code: close.code, reason: close.reason)
            return false
        }
        return true
    }

    /// lws' frame type for a close frame (`LWS_WRITE_CLOSE`, 4, which its public header leaves to `lws_close_reason`).
    private static let writeClose = lws_write_protocol(rawValue: 4)

    /// The close of a connection that floods (from a writable callback, once what was pending is written). lws'
    /// own close would go on reading while it waits for the client's answer and drop the socket on the next data
    /// frame, with the client's flood unread: the kernel then resets the connection, and a client still sending
    /// sees a reset (1006), not the close frame. So the close frame is written here, the write side shut once lws
    /// holds none of it (the client reads the frame and then the end of the stream), and the socket is closed after
    /// `closeTimeoutSeconds` by the timeout set in `close`; the client's frames are not read meanwhile.
    private func drainingClose(_ state: ConnectionState, code: UInt16, reason: String) -> Bool {
        let wsi = state.wsi
        if !state.closeFrameWritten {
            state.closeFrameWritten = true
            let payload = [UInt8(code >> 8), UInt8(code & 0xFF)] + Array(reason.utf8.prefix(120))
            var frame = [UInt8](repeating: 0, count: ConnectionState.pre) + payload
            let written = frame.withUnsafeMutableBufferPointer {
                lws_write(wsi, $0.baseAddress! + ConnectionState.pre, payload.count, Self.writeClose)
            }
            if written < payload.count { return false }
        }
        if lws_partial_buffered(wsi) != 0 {
            requestWritable(state)  // lws still holds part of the frame; it sends it before this callback comes
            return true
        }
        shutdown(lws_get_socket_fd(wsi), Int32(SHUT_WR))
        return true
    }

    /// The end of a loop turn: writes what the turn queued, one frame per connection. A connection whose earlier
    /// frame lws has not finished sending, or that already waits for a writable callback, or that is closing
    /// (its close waits for one), is left to that callback, which writes everything pending then.
    func flush() {
        confinement.assertOnLoop()
        guard !queued.isEmpty else { return }
        swap(&queued, &flushing)
        for state in flushing {
            state.isQueued = false
            guard !state.isGone, !state.closing, !state.awaitingWritable, state.hasPending else { continue }
            if lws_partial_buffered(state.wsi) != 0 {
                requestWritable(state)
            } else if let batch = sendBatch, state.socket >= 0 {
                add(state, to: batch)
            } else if !write(state) {
                abandon(state)
            }
        }
        submitBatch()
        flushing.removeAll(keepingCapacity: flushing.count <= 4096)
    }

    /// A write outside a callback failed (the peer is gone), and there it cannot return -1: has lws close the
    /// connection on its next turn, and wakes the loop for it (lws' zero-second timer alone waits for the next
    /// wake-up).
    private func abandon(_ state: ConnectionState) {
        lws_set_timeout(state.wsi, PENDING_TIMEOUT_USER_OK, LWS_TO_KILL_ASYNC)
        lws_cancel_service(lws_get_context(state.wsi))
    }

    /// Frames what is pending straight into the batch (submitting the batch first when it is full). A frame larger
    /// than a whole batch, or one met after the batch failed, is an lws_write of its own.
    private func add(_ state: ConnectionState, to batch: SendBatch) {
        let payload = state.framePayloadLength
        guard ConnectionState.frameHeaderLength(payload: payload) + payload <= batch.capacityBytes else {
            if !write(state) { abandon(state) }
            return
        }
        var placed = place(state, payload: payload, in: batch)
        if placed == nil && batch.count > 0 {
            submitBatch()
            // Settling the batch leaves this connection's pending output as it was; it is sized again all the same.
            if sendBatch != nil { placed = place(state, payload: state.framePayloadLength, in: batch) }
        }
        guard let placed else {
            if !write(state) { abandon(state) }
            return
        }
        batched.append(state)
        observer.frameSent(bytes: placed)
    }

    /// Writes the connection's frame, of `payload` bytes (its `framePayloadLength`), into the batch; the payload's
    /// length, or nil (and nothing taken from the connection) when the batch has no room for it.
    private func place(_ state: ConnectionState, payload: Int, in batch: SendBatch) -> Int? {
        let length = ConnectionState.frameHeaderLength(payload: payload) + payload
        let added = batch.add(fd: state.socket, length: length) {
            state.moveFrame(into: $0, payload: payload, receivedAt: &writeReceipts)
        }
        return added ? payload : nil
    }

    /// Sends the batch and settles each entry: a socket that took part of its frame (or none) has the rest handed
    /// to lws as raw bytes, which lws sends as the socket drains, before any later frame (`flush` waits for that);
    /// a failed send closes its connection. A failed submission ends batching for this server (logged once).
    private func submitBatch() {
        guard let batch = sendBatch, batch.count > 0 else { return }
        let failure = batch.submit()
        for (index, state) in batched.enumerated() {
            switch batch.outcome(index) {
            case .sent(let taken):
                let rest = batch.bytes(index, from: taken)
                if !rest.isEmpty && !handOver(rest, of: state) { abandon(state) }
            case .notSubmitted:
                if !handOver(batch.bytes(index, from: 0), of: state) { abandon(state) }
            case .failed, .unknown:
                abandon(state)
            }
        }
        recordReceipts()
        batched.removeAll(keepingCapacity: true)
        batch.reset()
        if let failure {
            logger.error("io_uring submission failed (\(failure)); each frame is now written with a send() of its own")
            sendBatch = nil
        }
    }

    /// Gives lws the unsent rest of a frame to send as is (LWS_WRITE_HTTP is lws' raw write, no framing): lws
    /// sends what the socket takes, buffers the rest, and asks for a writable callback. False on an error.
    private func handOver(_ rest: UnsafeRawBufferPointer, of state: ConnectionState) -> Bool {
        batchRemainders += 1
        let bytes = UnsafeMutablePointer(mutating: rest.baseAddress!.assumingMemoryBound(to: UInt8.self))
        return lws_write(state.wsi, bytes, rest.count, LWS_WRITE_HTTP) >= rest.count
    }

    // MARK: Keepalive

    /// The client answered a ping, or sent anything: it is alive (`at`: monotonic nanoseconds, now by default).
    func heard(_ state: ConnectionState, at nanoseconds: UInt64 = MonotonicTime.now()) {
        state.lastHeard = Self.milliseconds(nanoseconds)
        state.pinged = false
    }

    /// Monotonic milliseconds, wrapping every 49 days; differences (`&-`) are right for spans shorter than that.
    private static func milliseconds(_ nanoseconds: UInt64 = MonotonicTime.now()) -> UInt32 {
        UInt32(truncatingIfNeeded: nanoseconds / 1_000_000)
    }

    /// Once a second (the transport's sweep): pings each connection silent for `pingIntervalSeconds` (once until it
    /// is heard from again), and drops one silent for `idleTimeoutSeconds`. lws' own keepalive (its retry policy's
    /// validity timers) is off: it re-sorts a list of every connection's timer on each ping and pong, a walk over all
    /// of them each time, which at 10,000 connections took a seventh of the loop's time in bursts every interval.
    /// Here one pass over the connection table a second does it. A connection lws still holds unsent bytes for is not
    /// pinged (the ping would wait behind them anyway). It is dropped once silent for the timeout, and also once lws
    /// has held unsent bytes for it at every pass for the timeout: a client that trickles bytes in but reads nothing
    /// would otherwise never be silent (lws' own ping, stuck behind those bytes, used to end it).
    func keepAlive() {
        confinement.assertOnLoop()
        let now = Self.milliseconds()
        let ping = UInt32(clamping: configuration.pingIntervalSeconds) &* 1000
        let idle = UInt32(clamping: configuration.idleTimeoutSeconds) &* 1000
        var dropped = 0
        // A one-byte payload: lws does not report a pong with an empty one (RECEIVE_PONG). One buffer for the pass
        // (lws writes each ping's header into its headroom).
        var pingFrame = [UInt8](repeating: 0, count: ConnectionState.pre + 1)
        pingFrame[ConnectionState.pre] = 0x6B
        for state in connections where !state.closing && !state.isGone {
            let silent = now &- state.lastHeard
            let backlogged = state.awaitingWritable || lws_partial_buffered(state.wsi) != 0
            if backlogged {
                if state.backloggedSince == nil { state.backloggedSince = now }
            } else {
                state.backloggedSince = nil
            }
            if silent >= idle || state.backloggedSince.map({ now &- $0 >= idle }) == true {
                logger.debug("dropping connection \(state.id): silent for \(silent) ms, or not reading")
                drop(state)
                dropped += 1
            } else if silent >= ping && !state.pinged && !backlogged {
                state.pinged = true
                let written = pingFrame.withUnsafeMutableBufferPointer {
                    lws_write(state.wsi, $0.baseAddress! + ConnectionState.pre, 1, LWS_WRITE_PING)
                }
                if written < 0 {
                    drop(state)
                    dropped += 1
                }
            }
        }
        // One wake-up for all of them (lws' zero-second timers alone wait for the next one).
        if dropped > 0, let context { lws_cancel_service(context) }
    }

    /// Ends a connection without a close frame (its client is not answering) on lws' next turn.
    private func drop(_ state: ConnectionState) {
        state.closing = true
        lws_set_timeout(state.wsi, PENDING_TIMEOUT_USER_OK, LWS_TO_KILL_ASYNC)
    }

    /// A peer sent a close frame: lws answers it and drops the connection; nothing more is queued for it.
    func peerClosing(_ state: ConnectionState) {
        state.closing = true
        state.resetOutbound()
        state.latest.removeAll()
    }

    /// Writes the plain objects and the latest-wins slots as one text frame. lws sends what the socket takes and
    /// keeps the rest itself (then the next frame waits for a writable callback, see `flush`). False on an error.
    private func write(_ state: ConnectionState) -> Bool {
        state.collectLatest(receivedAt: &writeReceipts)
        let length = state.outbound.count - ConnectionState.pre
        let written = state.outbound.withUnsafeMutableBytes { buffer in
            lws_write(
                state.wsi, buffer.baseAddress!.assumingMemoryBound(to: UInt8.self) + ConnectionState.pre,
                length, LWS_WRITE_TEXT)
        }
        state.resetOutbound()
        recordWrite(bytes: length)
        return written >= length
    }

    /// Asks lws for a writable callback (a flag in lws, so asking twice is harmless).
    private func requestWritable(_ state: ConnectionState) {
        state.awaitingWritable = true
        lws_callback_on_writable(state.wsi)
    }

    /// Puts the connection on this turn's flush list (once).
    private func queue(_ state: ConnectionState) {
        guard !state.isQueued else { return }
        state.isQueued = true
        queued.append(state)
    }

    func closed(_ session: UnsafeMutableRawPointer?) {
        guard let session else { return }
        let id = session.load(as: UInt64.self)
        guard id != 0, let state = connections.remove(id) else { return }
        changes += 1
        state.isGone = true
        session.storeBytes(of: 0, as: UInt64.self)
        handler.connectionClosed(id)
        // A close made by an lws timeout runs in lws' timer phase, which with the poll() loop is followed by the
        // wait, not by `flush`: wake the loop so what the close queued (friends told) goes out now. With libev, and
        // for closes seen while serving sockets, `flush` follows anyway and the wake-up costs one empty turn.
        if !queued.isEmpty, let context { lws_cancel_service(context) }
    }

    /// Closes every connection (shutdown).
    func closeAll(code: UInt16, reason: String) {
        for state in Array(connections) { close(state, code: code, reason: reason) }
    }

    private func close(_ state: ConnectionState, code: UInt16, reason: String) {
        guard !state.closing else { return }
        state.closing = true
        state.pendingClose = (code, reason)
        if code == CloseCode.tooManyRequests.rawValue {
            // A flood, or one connection too many from an address: nothing more of it is read.
            state.drainsOnClose = true
            lws_rx_flow_control(state.wsi, 0)
            let peer = Self.peerAddress(state.wsi) ?? "an unknown address"
            logger.info("closing connection \(state.id) from \(peer) with \(code): \(reason)")
        }
        requestWritable(state)
        // The close frame goes out from a writable callback; a client that stopped reading never gives one, so
        // lws drops the connection after a few seconds (`closeTimeoutSeconds`) regardless.
        lws_set_timeout(
            state.wsi, pending_timeout(rawValue: PENDING_TIMEOUT_USER_REASON_BASE.rawValue + 1),
            Int32(clamping: configuration.closeTimeoutSeconds))
    }

    private func setCloseReason(_ wsi: OpaquePointer, code: UInt16, reason: String) {
        var bytes = Array(reason.utf8.prefix(120))
        bytes.withUnsafeMutableBufferPointer { b in
            lws_close_reason(wsi, lws_close_status(rawValue: UInt32(code)), b.baseAddress, b.count)
        }
    }

    /// Counts one written frame and times the positions it carried (receipt to hand-over to lws_write).
    private func recordWrite(bytes: Int) {
        observer.frameSent(bytes: bytes)
        recordReceipts()
    }

    /// Times the positions written since the last call (receipt to hand-over to the kernel or lws).
    private func recordReceipts() {
        guard !writeReceipts.isEmpty else { return }
        let now = MonotonicTime.now()
        for receivedAt in writeReceipts {
            observer.fanoutLatency(nanoseconds: MonotonicTime.elapsed(from: receivedAt, to: now))
        }
        writeReceipts.removeAll(keepingCapacity: true)
    }

    // MARK: Gauges

    /// Objects in latest-wins slots and bytes waiting, over all connections (walks every connection).
    func pending() -> (coalesced: Int, bytes: Int) {
        var coalesced = 0
        var bytes = 0
        for state in connections {
            coalesced += state.latest.count
            bytes += state.pendingBytes
        }
        return (coalesced, bytes)
    }
}

extension WebSocketEndpoint: Outbound {
    /// Queues one JSON object for a connection, to be written at the end of this loop turn.
    func send(_ connection: ConnectionID, _ json: UnsafeRawBufferPointer) {
        confinement.assertOnLoop()
        guard let state = connections[connection], !state.closing else { return }
        if state.outbound.count + json.count + 1 - ConnectionState.pre > configuration.maxOutboundBytes {
            state.resetOutbound()
            close(state, code: CloseCode.outboundOverflow.rawValue, reason: "client is not reading fast enough")
            return
        }
        state.append(json)
        queue(state)
    }

    /// Replaces whatever is pending for the connection under `key` (in place: the order is that of first appearance);
    /// the slots are bounded by the number of keys.
    func sendLatest(_ connection: ConnectionID, key: Int64, _ json: [UInt8]) {
        confinement.assertOnLoop()
        guard let state = connections[connection], !state.closing else { return }
        // The receipt of the frame being handled; a position sent from elsewhere (a job) is timed from now.
        let receivedAt = currentReceiptAt != 0 ? currentReceiptAt : MonotonicTime.now()
        state.latest.set(key, json, receivedAt: receivedAt)
        queue(state)
    }

    /// Drops what is pending under `key`.
    func dropLatest(_ connection: ConnectionID, key: Int64) {
        confinement.assertOnLoop()
        connections[connection]?.latest.remove(key)
    }

    /// Closes a connection after what is already queued for it has been written.
    func close(_ connection: ConnectionID, code: UInt16, reason: String) {
        confinement.assertOnLoop()
        guard let state = connections[connection] else { return }
        close(state, code: code, reason: reason)
    }
}
