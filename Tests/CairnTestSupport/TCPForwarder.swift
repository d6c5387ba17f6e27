// A TCP forwarder a test can cut, for partition drills: one node reaches Redis (or PostgreSQL) through it while the
// other nodes connect directly, so the test can take the service away from that node alone and give it back. It
// listens on 127.0.0.1 (an ephemeral port) and forwards each connection to a target port on 127.0.0.1. `cut()`
// closes every forwarded connection (both ends see the close, as when a peer or a middlebox resets them) and, until
// `restore()`, closes each new connection as soon as it is accepted; the listener stays, so the port never changes
// and a client's reconnect fails at once instead of hanging. `freeze()` is the silent cut (a path that died without
// a word, no FIN): connections stay open and new ones are accepted, but every byte either way is dropped; `restore()`
// then closes the connections that lost bytes, as a client would have by then. Plain POSIX sockets and threads: an
// accept thread that polls the listener, two blocking copy threads per connection (one per direction, so neither
// side's full buffer can stall the other). A connection's sockets are closed by the last of its two threads, after
// it left the table under the lock, so `cut()` (which only shuts sockets down, under the same lock) never touches a
// reused descriptor.
import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A cut-able TCP forwarder on 127.0.0.1 to `127.0.0.1:<target>`. Stops (closing everything) when released.
public final class TCPForwarder: @unchecked Sendable {
    /// The port it listens on.
    public let port: Int
    /// The port it forwards to.
    public let target: Int
    private let core: Core

    /// Listens on a free loopback port and starts forwarding to `target`.
    public init(to target: Int) throws {
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard listener >= 0 else { throw TestClientError.ioFailed("socket(): \(String(cString: strerror(errno)))") }
        var one: Int32 = 1
        _ = setsockopt(listener, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        var address = Self.loopback(port: 0)
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer in
                bind(listener, pointer, length) == 0 && listen(listener, 128) == 0
                    && getsockname(listener, pointer, &length) == 0
            }
        }
        guard bound else {
            let reason = String(cString: strerror(errno))
            close(listener)
            throw TestClientError.ioFailed("forwarder listen: \(reason)")
        }
        port = Int(UInt16(bigEndian: address.sin_port))
        self.target = target
        core = Core(listener: listener, target: target)
        let core = self.core
        Thread { core.acceptLoop() }.start()
    }

    /// Closes every forwarded connection and closes new ones as they arrive, until `restore()`.
    public func cut() { core.cut() }

    /// Drops every byte either way from now on, on open and new connections alike, closing nothing (a silent cut),
    /// until `restore()`.
    public func freeze() { core.freeze() }

    /// Forwards again: after a cut, new connections; after a freeze, closes the connections that lost bytes first.
    public func restore() { core.restore() }

    /// True while cut.
    public var isCut: Bool { core.lock.withLock { core.isCut } }

    /// True while frozen.
    public var isFrozen: Bool { core.lock.withLock { core.isFrozen } }

    /// Connections forwarded so far (accepted while not cut and connected to the target).
    public var forwardedCount: Int { core.lock.withLock { core.forwarded } }

    /// Forwarded connections open now.
    public var openCount: Int { core.lock.withLock { core.pairs.count } }

    deinit { core.stop() }

    static func loopback(port: Int) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = UInt16(port).bigEndian
        return address
    }

    /// The state the threads share; every field behind `lock`.
    final class Core: @unchecked Sendable {
        /// One forwarded connection: the accepted socket, the one to the target, and how many of its two copy
        /// threads still run.
        struct Pair {
            let client: Int32
            let server: Int32
            var running: Int
        }

        let lock = NSLock()
        var isCut = false
        var isFrozen = false
        var stopped = false
        var forwarded = 0
        var pairs: [Int: Pair] = [:]
        private var nextID = 0
        private let listener: Int32
        private let target: Int

        init(listener: Int32, target: Int) {
            self.listener = listener
            self.target = target
        }

        func cut() {
            lock.withLock {
                isCut = true
                for pair in pairs.values { Self.shut(pair) }
            }
        }

        func freeze() { lock.withLock { isFrozen = true } }

        func restore() {
            lock.withLock {
                if isFrozen {
                    for pair in pairs.values { Self.shut(pair) }  // their streams lost bytes: unusable
                }
                isFrozen = false
                isCut = false
            }
        }

        func stop() {
            lock.withLock {
                stopped = true
                isCut = true
                for pair in pairs.values { Self.shut(pair) }
            }
        }

        private static func shut(_ pair: Pair) {
            _ = shutdown(pair.client, Int32(SHUT_RDWR))
            _ = shutdown(pair.server, Int32(SHUT_RDWR))
        }

        /// Accepts until stopped (polling the listener ten times a second to notice), then closes the listener.
        func acceptLoop() {
            while !lock.withLock({ stopped }) {
                var entry = pollfd(fd: listener, events: Int16(POLLIN), revents: 0)
                guard poll(&entry, 1, 100) > 0 else { continue }
                let client = accept(listener, nil, nil)
                guard client >= 0 else { continue }
                _ = fcntl(client, F_SETFD, FD_CLOEXEC)  // (accept4 is not visible without _GNU_SOURCE)
                if lock.withLock({ isCut }) {
                    close(client)
                    continue
                }
                guard let server = connectTarget() else {
                    close(client)
                    continue
                }
                var one: Int32 = 1
                for fd in [client, server] {
                    _ = setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
                }
                let id: Int? = lock.withLock {
                    guard !isCut else { return nil }  // cut while connecting
                    nextID += 1
                    forwarded += 1
                    pairs[nextID] = Pair(client: client, server: server, running: 2)
                    return nextID
                }
                guard let id else {
                    close(client)
                    close(server)
                    continue
                }
                Thread { [self] in copy(id, from: client, to: server) }.start()
                Thread { [self] in copy(id, from: server, to: client) }.start()
            }
            close(listener)
        }

        private func connectTarget() -> Int32? {
            let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
            guard fd >= 0 else { return nil }
            var address = TCPForwarder.loopback(port: target)
            let connected = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
                }
            }
            guard connected else {
                close(fd)
                return nil
            }
            return fd
        }

        /// Copies `from` → `to` (dropping what it reads while frozen) until either side ends or the pair is cut;
        /// then shuts the pair down (waking the other direction), and the last of the two threads takes the pair out
        /// of the table and closes both. Bytes read while frozen but sent after `restore()` go nowhere: `restore()`
        /// shut the pair down first, under the lock.
        private func copy(_ id: Int, from: Int32, to: Int32) {
            var buffer = [UInt8](repeating: 0, count: 65_536)
            copying: while true {
                let got = buffer.withUnsafeMutableBytes { recv(from, $0.baseAddress, $0.count, 0) }
                if got < 0 && errno == EINTR { continue }
                guard got > 0 else { break }
                if lock.withLock({ isFrozen }) { continue }  // dropped: a silent cut
                var sent = 0
                while sent < got {
                    let wrote = buffer.withUnsafeBytes {
                        send(to, $0.baseAddress! + sent, got - sent, Int32(MSG_NOSIGNAL))
                    }
                    if wrote < 0 && errno == EINTR { continue }
                    guard wrote > 0 else { break copying }
                    sent += wrote
                }
            }
            let last: Pair? = lock.withLock {
                guard var pair = pairs[id] else { return nil }
                Self.shut(pair)
                pair.running -= 1
                if pair.running == 0 {
                    pairs[id] = nil
                    return pair
                }
                pairs[id] = pair
                return nil
            }
            if let last {
                close(last.client)
                close(last.server)
            }
        }
    }
}
