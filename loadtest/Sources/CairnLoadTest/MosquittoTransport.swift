// Drives Mosquitto with the same workload: every simulated user is an MQTT 3.1.1 client (libmosquitto) that
// publishes its reports, QoS 0, to `pos/<id>` and subscribes to `pos/<friend id>` for each friend. libmosquitto's own
// loop would need a thread per client, so this runs every client from one thread over one epoll set, calling
// mosquitto_loop_read / _write / _misc itself — the same one-event-loop shape as the libwebsockets side.
import CMosquitto
import Glibc

/// The libmosquitto transport for Mosquitto.
public final class MosquittoTransport: LoadTransport {
    /// The session it drives.
    public let session: LoadSession
    private var clients: [OpaquePointer?]
    private var writeArmed: [Bool]
    private var broken: [Bool]
    private var topics: [UnsafeMutablePointer<CChar>?]
    private let tags: UnsafeMutablePointer<ClientTag>
    private let scratch = UnsafeMutablePointer<UInt8>.allocate(capacity: 256)
    private var epoll: Int32 = -1
    private let clientPrefix = "cairn-lt-\(getpid())-"
    private let socketPairs: Bool
    private var warnedOfPairs = false

    /// A transport for `session`. libmosquitto opens a socket pair beside each client's socket, which only its own
    /// threaded loop reads; with `socketPairs: false` the clients are made without it (one descriptor per user, not
    /// three), by lowering the process's soft descriptor limit for the moment of `mosquitto_new`. That moment would
    /// fail any other thread's `open`, so only a single-threaded process (the `cairn-loadtest` tool) should ask.
    public init(session: LoadSession, socketPairs: Bool = true) {
        self.session = session
        self.socketPairs = socketPairs
        let n = session.workload.count
        clients = [OpaquePointer?](repeating: nil, count: n)
        writeArmed = [Bool](repeating: false, count: n)
        broken = [Bool](repeating: false, count: n)
        topics = session.workload.ids.map { strdup("pos/\($0)") }
        tags = .allocate(capacity: max(n, 1))
        tags.initialize(repeating: ClientTag(owner: nil, user: 0), count: max(n, 1))
    }

    deinit {
        for t in topics { free(t) }
        tags.deallocate()
        scratch.deallocate()
    }

    /// Runs the whole session on the calling thread and returns its report.
    public func run() -> LoadReport {
        // libmosquitto is loaded here, not linked (see CMosquitto.h): a tester without it says so and stops.
        if let missing = cairn_mosquitto_load() {
            session.abort(.unreachable, String(cString: missing))
            return session.report()
        }
        mosquitto_lib_init()
        defer { mosquitto_lib_cleanup() }
        epoll = epoll_create1(Int32(EPOLL_CLOEXEC))
        guard epoll >= 0 else {
            session.abort(.unreachable, "epoll_create1 failed (errno \(errno))")
            return session.report()
        }
        let me = Unmanaged.passUnretained(self).toOpaque()
        for i in 0..<session.workload.count { tags[i] = ClientTag(owner: me, user: i) }
        var events = [epoll_event](repeating: epoll_event(), count: 1024)
        var nextMisc = LoadClock.monotonicNanoseconds() + 1_000_000_000
        while !session.isFinished {
            let ready = epoll_wait(epoll, &events, Int32(events.count), 1)
            if ready > 0 {
                for e in events[0..<Int(ready)] {
                    let user = Int(e.data.u64)
                    guard let m = clients[user] else { continue }
                    if e.events & (EPOLLIN.rawValue | EPOLLERR.rawValue | EPOLLHUP.rawValue) != 0 {
                        if mosquitto_loop_read(m, 10_000) != MOSQ_ERR_SUCCESS.rawValue { broken[user] = true }
                    }
                    if !broken[user] && e.events & EPOLLOUT.rawValue != 0 {
                        if mosquitto_loop_write(m, 100) != MOSQ_ERR_SUCCESS.rawValue { broken[user] = true }
                    }
                    settle(user)
                }
            }
            session.tick(self)
            let now = LoadClock.monotonicNanoseconds()
            if now >= nextMisc {
                nextMisc = now + 1_000_000_000
                for user in clients.indices where clients[user] != nil {
                    if mosquitto_loop_misc(clients[user]) != MOSQ_ERR_SUCCESS.rawValue {
                        broken[user] = true
                        settle(user)
                    }
                }
            }
        }
        for user in clients.indices { drop(user) }
        close(epoll)
        return session.report()
    }

    // MARK: LoadTransport

    public func connect(user: Int) -> Bool {
        let id = clientPrefix + String(user)
        let tag = UnsafeMutableRawPointer(tags + user)
        var paired = false
        guard let m = socketPairs ? mosquitto_new(id, true, tag) : cairn_mosquitto_new_unpaired(id, true, tag, &paired)
        else { return false }
        if paired && !warnedOfPairs {
            warnedOfPairs = true
            let text = "cairn-loadtest: warning: libmosquitto made its socket pair anyway: 3 descriptors per user\n"
            _ = text.withCString { Glibc.write(STDERR_FILENO, $0, strlen($0)) }
        }
        _ = mosquitto_int_option(m, MOSQ_OPT_PROTOCOL_VERSION, MQTT_PROTOCOL_V311)
        _ = mosquitto_int_option(m, MOSQ_OPT_TCP_NODELAY, 1)
        mosquitto_connect_callback_set(m, mosquittoOnConnect)
        mosquitto_subscribe_callback_set(m, mosquittoOnSubscribe)
        mosquitto_message_callback_set(m, mosquittoOnMessage)
        let configuration = session.configuration
        let bind = configuration.sourceAddress(user: user, users: session.workload.count)
        // A blocking connect: on loopback it completes at once, and libmosquitto then sends CONNECT and makes the
        // socket non-blocking. CONNACK arrives through the event loop.
        guard
            mosquitto_connect_bind(m, configuration.host, Int32(configuration.port), 60, bind)
                == MOSQ_ERR_SUCCESS.rawValue
        else {
            mosquitto_destroy(m)
            return false
        }
        clients[user] = m
        var event = epoll_event()
        event.events = EPOLLIN.rawValue
        event.data.u64 = UInt64(user)
        if epoll_ctl(epoll, EPOLL_CTL_ADD, mosquitto_socket(m), &event) != 0 {
            clients[user] = nil
            mosquitto_destroy(m)
            return false
        }
        settle(user)
        return true
    }

    public func reportDue(user: Int) {
        guard let m = clients[user] else { return }
        let length = session.writeReport(user: user, to: scratch)
        guard length > 0 else { return }
        if mosquitto_publish(m, nil, topics[user], Int32(length), scratch, 0, false) != MOSQ_ERR_SUCCESS.rawValue {
            broken[user] = true
        }
        settle(user)
    }

    // MARK: Callbacks (inside mosquitto_loop_read, on the loop thread)

    fileprivate func connected(_ user: Int, result: Int32) {
        guard result == 0, let m = clients[user] else {
            session.receivedError()
            broken[user] = true
            return
        }
        session.established(user: user)
        let friends = session.workload.friends[user]
        if friends.isEmpty {
            session.ready(user: user)
            return
        }
        var list: [UnsafeMutablePointer<CChar>?] = friends.map { topics[Int($0)] }
        let rc = list.withUnsafeMutableBufferPointer { buffer in
            mosquitto_subscribe_multiple(m, nil, Int32(buffer.count), buffer.baseAddress, 0, 0, nil)
        }
        if rc != MOSQ_ERR_SUCCESS.rawValue {
            broken[user] = true
            return
        }
        session.sentControl(bytes: friends.reduce(0) { $0 + 4 + String(session.workload.ids[Int($1)]).utf8.count })
    }

    fileprivate func subscribed(_ user: Int) {
        session.receivedMessage()
        session.ready(user: user)
    }

    fileprivate func message(_ user: Int, _ message: UnsafePointer<mosquitto_message>) {
        let m = message.pointee
        guard let topic = m.topic else { return }
        let topicLength = strlen(topic)
        session.receivedFrame(bytes: Int(m.payloadlen) + topicLength)
        session.receivedMessage()
        // "pos/<id>"
        var owner: Int64 = 0
        var i = 4
        while i < topicLength {
            let c = UInt8(bitPattern: topic[i])
            guard c >= 0x30 && c <= 0x39 else { break }
            owner = owner * 10 + Int64(c - 0x30)
            i += 1
        }
        let payload = UnsafeRawBufferPointer(start: m.payload, count: Int(m.payloadlen))
        guard let ts = ServerLineScanner.integer(after: "\"ts\":", in: payload) else {
            session.receivedError()
            return
        }
        session.delivered(to: user, owner: owner, ts: ts)
    }

    // MARK: Bookkeeping

    /// After any I/O on `user`: drop a broken client, flush what libmosquitto queued, arm EPOLLOUT only while
    /// something is left to write.
    private func settle(_ user: Int) {
        guard let m = clients[user] else { return }
        if broken[user] {
            drop(user)
            return
        }
        if mosquitto_want_write(m) {
            if mosquitto_loop_write(m, 100) != MOSQ_ERR_SUCCESS.rawValue {
                drop(user)
                return
            }
        }
        let want = mosquitto_want_write(m)
        if want != writeArmed[user] {
            writeArmed[user] = want
            var event = epoll_event()
            event.events = EPOLLIN.rawValue | (want ? EPOLLOUT.rawValue : 0)
            event.data.u64 = UInt64(user)
            _ = epoll_ctl(epoll, EPOLL_CTL_MOD, mosquitto_socket(m), &event)
        }
    }

    private func drop(_ user: Int) {
        guard let m = clients[user] else { return }
        clients[user] = nil
        let socket = mosquitto_socket(m)
        if socket >= 0 { _ = epoll_ctl(epoll, EPOLL_CTL_DEL, socket, nil) }
        mosquitto_destroy(m)
        broken[user] = false
        session.closed(user: user, code: nil)
    }
}

/// What each libmosquitto client's userdata points at: the transport and the user's index.
struct ClientTag {
    var owner: UnsafeMutableRawPointer?
    var user: Int
}

private func transport(_ userdata: UnsafeMutableRawPointer?) -> (MosquittoTransport, Int)? {
    guard let tag = userdata?.assumingMemoryBound(to: ClientTag.self).pointee, let owner = tag.owner else { return nil }
    return (Unmanaged<MosquittoTransport>.fromOpaque(owner).takeUnretainedValue(), tag.user)
}

private let mosquittoOnConnect: @convention(c) (OpaquePointer?, UnsafeMutableRawPointer?, Int32) -> Void = {
    _, data, rc in
    guard let (t, user) = transport(data) else { return }
    t.connected(user, result: rc)
}

private let mosquittoOnSubscribe:
    @convention(c) (
        OpaquePointer?, UnsafeMutableRawPointer?, Int32, Int32,
        UnsafePointer<Int32>?
    ) -> Void = { _, data, _, _, _ in
        guard let (t, user) = transport(data) else { return }
        t.subscribed(user)
    }

private let mosquittoOnMessage:
    @convention(c) (
        OpaquePointer?, UnsafeMutableRawPointer?,
        UnsafePointer<mosquitto_message>?
    ) -> Void = { _, data, message in
        guard let (t, user) = transport(data), let message else { return }
        t.message(user, message)
    }
