// Drives the WebSocket servers, Cairn and nchan: one libwebsockets client context, one thread, every simulated user a
// WebSocket connection on the node `LoadConfiguration.port(ofUser:)` names. One lws_write per writable callback, as
// lws requires. Incoming frames are split into lines; position events are matched to their send.
// - Cairn: `/ws?token=…` with subprotocol `cairn.v1`. Each user sends `friends.watch` when its connection opens,
//   becomes ready on the reply, then writes a `pos` whenever the session says one is due.
// - nchan: `/ps/<id>?f=<friend ids>`, no subprotocol. The connection publishes to the user's channel and is
//   subscribed to its friends' channels from the handshake on, so the user is ready once it is open. Reports carry
//   their sender (`"user"`), since nchan passes the published bytes on unchanged.
// lws runs on a libev loop (epoll), as the hub does and as the MQTT side runs on epoll, so the tester's wake-ups do
// not scan every descriptor (lws' poll() would) and its own queueing does not count as the server's latency. The loop
// is ours: turned once per iteration, before the session's tick.
import CLws
import Glibc

/// The libwebsockets transport, for Cairn and for nchan.
public final class WebSocketTransport: LoadTransport {
    /// The session it drives.
    public let session: LoadSession
    private var context: OpaquePointer?
    private var wsis: [OpaquePointer?]
    private var watchSent: [Bool]
    private var closeCodes: [Int32]
    private var paths: [UnsafeMutablePointer<CChar>?]
    private var assembly: [Int: [UInt8]] = [:]
    private var cStrings: [UnsafeMutablePointer<CChar>] = []
    private var sources: [UnsafeMutablePointer<CChar>?] = []
    private let protocols: UnsafeMutablePointer<lws_protocols>
    private let scratch: UnsafeMutablePointer<UInt8>
    private let pre = Int(cairn_lws_pre())
    private var timer: UnsafeMutableRawPointer?
    /// The libev loop lws runs on (epoll) and the one-entry `foreign_loops` array lws reads at context creation.
    private var evLoop: UnsafeMutableRawPointer?
    private var foreignLoops: UnsafeMutablePointer<UnsafeMutableRawPointer?>?
    private var finished = false
    private let hostC: UnsafeMutablePointer<CChar>
    private let protocolC: UnsafeMutablePointer<CChar>
    /// nchan rather than Cairn: no subprotocol, no watch request, a path per user.
    private let nchan: Bool

    /// A transport for `session`: configured for `.cairn` and built from a tokens file, or configured for `.nchan`.
    public init(session: LoadSession) {
        self.session = session
        let n = session.workload.count
        wsis = [OpaquePointer?](repeating: nil, count: n)
        watchSent = [Bool](repeating: false, count: n)
        closeCodes = [Int32](repeating: 0, count: n)
        paths = [UnsafeMutablePointer<CChar>?](repeating: nil, count: n)
        hostC = strdup(session.configuration.host)
        nchan = session.configuration.server == .nchan
        protocolC = strdup(nchan ? "nchan-load" : "cairn.v1")
        protocols = UnsafeMutablePointer<lws_protocols>.allocate(capacity: 2)
        protocols.initialize(repeating: lws_protocols(), count: 2)
        protocols[0].name = UnsafePointer(protocolC)
        protocols[0].callback = loadTestLwsCallback
        protocols[0].rx_buffer_size = 16 * 1024
        scratch = .allocate(capacity: Int(cairn_lws_pre()) + 256)
        let count = session.configuration.sourceAddressCount(users: n)
        if count > 1 { sources = (0..<count).map { strdup("127.0.0.\(2 + $0)") } }
    }

    deinit {
        free(hostC)
        free(protocolC)
        for p in paths { free(p) }
        for p in sources { free(p) }
        protocols.deinitialize(count: 2)
        protocols.deallocate()
        scratch.deallocate()
        timer?.deallocate()
    }

    /// Runs the whole session on the calling thread and returns its report.
    public func run() -> LoadReport {
        cairn_lws_set_logging(0, { _, _ in })
        var info = lws_context_creation_info()
        info.port = CONTEXT_PORT_NO_LISTEN
        info.protocols = UnsafePointer(protocols)
        info.gid = -1
        info.uid = -1
        info.timeout_secs = 10
        info.user = Unmanaged.passUnretained(self).toOpaque()
        guard let loop = cairn_ev_loop_new() else {
            session.abort(.unreachable, "libev could not create an event loop")
            return session.report()
        }
        evLoop = loop
        let slot = UnsafeMutablePointer<UnsafeMutableRawPointer?>.allocate(capacity: 1)
        slot.initialize(to: nil)
        foreignLoops = slot
        cairn_lws_info_use_libev(&info, slot, loop)
        guard let context = lws_create_context(&info) else {
            destroyLoop()
            session.abort(.unreachable, "libwebsockets could not create a client context")
            return session.report()
        }
        self.context = context
        scheduleTimer()
        while !session.isFinished {
            // One turn: waits for a socket, the 1 ms timer or a writable socket, and dispatches what is ready.
            _ = cairn_ev_run_once(loop)
            session.tick(self)
        }
        finished = true
        lws_context_destroy(context)
        self.context = nil
        destroyLoop()  // after the context: lws' last closes may still need the loop
        return session.report()
    }

    private func destroyLoop() {
        if let evLoop { cairn_ev_loop_destroy(evLoop) }
        evLoop = nil
        foreignLoops?.deallocate()
        foreignLoops = nil
    }

    // MARK: LoadTransport

    public func connect(user: Int) -> Bool {
        guard let context else { return false }
        if paths[user] == nil { paths[user] = strdup(path(of: user)) }
        var ci = lws_client_connect_info()
        ci.context = context
        ci.address = UnsafePointer(hostC)
        ci.port = Int32(session.configuration.port(ofUser: user))
        ci.path = UnsafePointer(paths[user])
        ci.host = UnsafePointer(hostC)
        ci.origin = UnsafePointer(hostC)
        ci.protocol = nchan ? nil : UnsafePointer(protocolC)  // nchan takes no subprotocol
        ci.local_protocol_name = UnsafePointer(protocolC)
        ci.ietf_version_or_minus_one = -1
        if !sources.isEmpty { ci.iface = UnsafePointer(sources[user % sources.count]) }
        ci.opaque_user_data = UnsafeMutableRawPointer(bitPattern: user + 1)
        guard let wsi = lws_client_connect_via_info(&ci) else { return false }
        if session.states[user] == .connecting { wsis[user] = wsi }  // unless it already failed inside the call
        return true
    }

    /// Cairn: the endpoint with the user's token. nchan: the user's own channel, then its friends' channels.
    func path(of user: Int) -> String {
        let configuration = session.configuration
        guard nchan else {
            let token = user < session.workload.tokens.count ? session.workload.tokens[user] : ""
            return configuration.path + "?token=" + token
        }
        let workload = session.workload
        // nchan takes up to 255 channels and 1,024 bytes of ids; a user without friends listens to a channel of its
        // own that nobody publishes to (an empty list is refused).
        var friends = workload.friends[user].map { String(workload.ids[Int($0)]) }.joined(separator: ",")
        if friends.isEmpty { friends = "none-\(workload.ids[user])" }
        return configuration.path + String(workload.ids[user]) + "?f=" + friends
    }

    public func reportDue(user: Int) {
        if let wsi = wsis[user] { lws_callback_on_writable(wsi) }
    }

    // MARK: Callbacks (service thread)

    fileprivate func handle(
        _ wsi: OpaquePointer, _ reason: lws_callback_reasons, _ input: UnsafeMutableRawPointer?,
        _ length: Int
    ) -> Int32 {
        let user = Int(bitPattern: lws_get_opaque_user_data(wsi)) - 1
        guard user >= 0, user < wsis.count, !finished else { return 0 }
        switch reason {
        case LWS_CALLBACK_CLIENT_CONNECTION_ERROR:
            wsis[user] = nil
            session.connectFailed(user: user)
        case LWS_CALLBACK_CLIENT_ESTABLISHED:
            wsis[user] = wsi
            session.established(user: user)
            if nchan {
                session.ready(user: user)  // subscribed to every friend's channel by the handshake itself
            } else {
                lws_callback_on_writable(wsi)  // the watch request
            }
        case LWS_CALLBACK_CLIENT_RECEIVE:
            received(user, wsi, UnsafeRawBufferPointer(start: input, count: input == nil ? 0 : length))
        case LWS_CALLBACK_CLIENT_WRITEABLE:
            return writable(user, wsi)
        case LWS_CALLBACK_WS_PEER_INITIATED_CLOSE:
            if let input, length >= 2 {
                let b = input.assumingMemoryBound(to: UInt8.self)
                closeCodes[user] = Int32(b[0]) << 8 | Int32(b[1])
            }
        case LWS_CALLBACK_CLIENT_CLOSED:
            wsis[user] = nil
            assembly[user] = nil
            session.closed(user: user, code: closeCodes[user] == 0 ? nil : Int(closeCodes[user]))
        case LWS_CALLBACK_WSI_DESTROY:
            if wsis[user] == wsi {
                wsis[user] = nil
                session.closed(user: user, code: nil)
            }
        default:
            break
        }
        return 0
    }

    private func writable(_ user: Int, _ wsi: OpaquePointer) -> Int32 {
        let body = scratch + pre
        var length = 0
        if !watchSent[user] && !nchan {
            watchSent[user] = true
            let request: StaticString = "{\"id\":1,\"op\":\"friends.watch\"}"
            request.withUTF8Buffer { b in
                for (i, c) in b.enumerated() { body[i] = c }
                length = b.count
            }
            session.sentControl(bytes: length)
        } else {
            length = session.writeReport(user: user, to: body)
            if length == 0 { return 0 }
        }
        return lws_write(wsi, body, length, LWS_WRITE_TEXT) < Int32(length) ? -1 : 0
    }

    private func received(_ user: Int, _ wsi: OpaquePointer, _ chunk: UnsafeRawBufferPointer) {
        let final = lws_is_final_fragment(wsi) != 0 && lws_remaining_packet_payload(wsi) == 0
        if !final || assembly[user] != nil {
            assembly[user, default: []].append(contentsOf: chunk)
            guard final else { return }
            let whole = assembly.removeValue(forKey: user)!
            whole.withUnsafeBytes { process(user, $0) }
        } else {
            process(user, chunk)
        }
    }

    private func process(_ user: Int, _ message: UnsafeRawBufferPointer) {
        session.receivedFrame(bytes: message.count)
        if nchan {
            // One published report per message, as its sender wrote it.
            session.receivedMessage()
            if let owner = ServerLineScanner.integer(after: "\"user\":", in: message),
                let ts = ServerLineScanner.integer(after: "\"ts\":", in: message)
            {
                session.delivered(to: user, owner: owner, ts: ts)
            } else {
                session.receivedError()
            }
            return
        }
        ServerLineScanner.forEachLine(message) { line in
            session.receivedMessage()
            switch ServerLineScanner.classify(line) {
            case .position(let owner, let ts):
                session.delivered(to: user, owner: owner, ts: ts)
            case .reply(let id, let ok):
                if !ok { session.receivedError() } else if id == 1 { session.ready(user: user) }
            case .error:
                session.receivedError()
            case .other:
                break
            }
        }
    }

    // MARK: Timer: wakes the loop at least every millisecond so reports leave on time

    private func scheduleTimer() {
        if timer == nil {
            let size = MemoryLayout<lws_sorted_usec_list_t>.stride + MemoryLayout<UnsafeMutableRawPointer>.size
            let raw = UnsafeMutableRawPointer.allocate(byteCount: size, alignment: 16)
            raw.initializeMemory(as: UInt8.self, repeating: 0, count: size)
            (raw + MemoryLayout<lws_sorted_usec_list_t>.stride)
                .storeBytes(of: Unmanaged.passUnretained(self).toOpaque(), as: UnsafeMutableRawPointer.self)
            timer = raw
        }
        lws_sul_schedule(
            context, 0, timer!.assumingMemoryBound(to: lws_sorted_usec_list_t.self),
            { sul in
                guard let sul else { return }
                let raw = UnsafeMutableRawPointer(sul) + MemoryLayout<lws_sorted_usec_list_t>.stride
                let transport = Unmanaged<WebSocketTransport>.fromOpaque(raw.load(as: UnsafeMutableRawPointer.self))
                    .takeUnretainedValue()
                if !transport.finished { transport.scheduleTimer() }
            }, 1000)
    }
}

/// The one C callback for every client connection; finds the transport through the context's user pointer.
let loadTestLwsCallback:
    @convention(c) (
        OpaquePointer?, lws_callback_reasons, UnsafeMutableRawPointer?,
        UnsafeMutableRawPointer?, Int
    ) -> Int32 = { wsi, reason, _, input, length in
        guard let wsi, let owner = lws_context_user(lws_get_context(wsi)) else { return 0 }
        return Unmanaged<WebSocketTransport>.fromOpaque(owner).takeUnretainedValue().handle(wsi, reason, input, length)
    }
