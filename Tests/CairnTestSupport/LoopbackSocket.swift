// Why this exists: both test clients (WebSocket and plain HTTP) need the same small, careful TCP layer — refuse
// anything that is not IPv4 loopback, connect with a timeout, and do non-blocking reads and writes bounded by a
// Deadline through poll(). Sockets are close-on-exec so servers launched by TestServerProcess never inherit them,
// and writes never raise SIGPIPE in the test process.

import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A connected, non-blocking TCP socket to 127.0.0.0/8. Not thread-safe; one owner at a time.
final class LoopbackSocket {
    private(set) var fd: Int32
    let host: String
    let port: Int
    /// The TLS session when the socket speaks TLS (see TLSClientSession.swift).
    private(set) var tls: TLSClientSession?

    /// Parses `host` as a dotted-quad IPv4 address ("localhost" means 127.0.0.1) and checks it is in 127.0.0.0/8.
    static func loopbackAddress(_ host: String) throws -> in_addr {
        let literal = host.lowercased() == "localhost" ? "127.0.0.1" : host
        var address = in_addr()
        guard inet_pton(AF_INET, literal, &address) == 1 else { throw TestClientError.notLoopback(host: host) }
        // s_addr is in network byte order: its first byte in memory is the first octet.
        let firstOctet = withUnsafeBytes(of: &address) { $0[0] }
        guard firstOctet == 127 else { throw TestClientError.notLoopback(host: host) }
        return address
    }

    /// Connects to `host:port`, failing with `.timeout` if the connection is not established by `deadline`.
    /// With `tls`, also completes a verified TLS handshake before returning.
    init(
        host: String, port: Int, deadline: Deadline, receiveBufferSize: Int? = nil, sendBufferSize: Int? = nil,
        tls options: TLSOptions? = nil
    ) throws {
        let address = try Self.loopbackAddress(host)
        guard (1...65535).contains(port) else {
            throw TestClientError.invalidArgument("port \(port) is outside 1...65535")
        }
        self.host = host
        self.port = port

        #if canImport(Glibc)
        let fd = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        #else
        let fd = Darwin.socket(AF_INET, SOCK_STREAM, 0)
        #endif
        guard fd >= 0 else { throw TestClientError.ioFailed("socket(): \(Self.errnoText())") }
        self.fd = fd
        #if canImport(Darwin)
        _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
        var one: Int32 = 1
        _ = setsockopt(fd, SOL_SOCKET, SO_NOSIGPIPE, &one, socklen_t(MemoryLayout<Int32>.size))
        #endif
        let flags = fcntl(fd, F_GETFL, 0)
        _ = fcntl(fd, F_SETFL, flags | O_NONBLOCK)
        var noDelay: Int32 = 1
        _ = setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &noDelay, socklen_t(MemoryLayout<Int32>.size))
        if let receiveBufferSize {
            // Set before connect so the advertised window is small: lets a test play a client that reads slowly.
            var size = Int32(receiveBufferSize)
            _ = setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
        }
        if let sendBufferSize {
            // A fixed SO_SNDBUF (the kernel then grows it no more): a client that floods a peer which stops reading
            // stalls after a known number of bytes, however fast or slow this process runs.
            var size = Int32(sendBufferSize)
            _ = setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &size, socklen_t(MemoryLayout<Int32>.size))
        }

        var sin = sockaddr_in()
        #if canImport(Darwin)
        sin.sin_len = UInt8(MemoryLayout<sockaddr_in>.size)
        #endif
        sin.sin_family = sa_family_t(AF_INET)
        sin.sin_port = in_port_t(UInt16(port).bigEndian)
        sin.sin_addr = address
        let rc = withUnsafePointer(to: &sin) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        if rc != 0 {
            let code = errno
            guard code == EINPROGRESS || code == EINTR else {
                close()
                throw TestClientError.connectFailed(host: host, port: port, errno: code)
            }
            do {
                guard try waitFor(events: Int16(POLLOUT), deadline: deadline) else {
                    throw TestClientError.timeout("connecting to \(host):\(port)")
                }
            } catch {
                close()
                throw error
            }
            var soError: Int32 = 0
            var length = socklen_t(MemoryLayout<Int32>.size)
            _ = getsockopt(fd, SOL_SOCKET, SO_ERROR, &soError, &length)
            if soError != 0 {
                close()
                throw TestClientError.connectFailed(host: host, port: port, errno: soError)
            }
        }
        if let options { try startTLS(options, deadline: deadline) }
    }

    deinit { close() }

    /// Starts TLS on the connected socket.
    private func startTLS(_ options: TLSOptions, deadline: Deadline) throws {
        do {
            tls = try TLSClientSession(fd: fd, host: host, options: options, deadline: deadline)
        } catch {
            close()
            throw error
        }
    }

    var isClosed: Bool { fd < 0 }

    /// Closes the descriptor; safe to call more than once.
    func close() {
        guard fd >= 0 else { return }
        tls = nil
        #if canImport(Glibc)
        _ = Glibc.close(fd)
        #else
        _ = Darwin.close(fd)
        #endif
        fd = -1
    }

    /// Writes all of `bytes`, waiting for buffer space until `deadline`.
    func write(_ bytes: [UInt8], deadline: Deadline) throws {
        guard fd >= 0 else { throw TestClientError.notOpen("socket already closed") }
        if let tls { return try tls.write(bytes, fd: fd, deadline: deadline) }
        var offset = 0
        while offset < bytes.count {
            let sent = bytes.withUnsafeBytes { raw -> Int in
                #if canImport(Glibc)
                return send(fd, raw.baseAddress! + offset, raw.count - offset, Int32(MSG_NOSIGNAL))
                #else
                return send(fd, raw.baseAddress! + offset, raw.count - offset, 0)
                #endif
            }
            if sent > 0 {
                offset += sent
                continue
            }
            let code = errno
            switch code {
            case EINTR:
                continue
            case EAGAIN, EWOULDBLOCK:
                guard try waitFor(events: Int16(POLLOUT), deadline: deadline) else {
                    throw TestClientError.timeout("writing \(bytes.count) bytes to \(host):\(port) (\(offset) sent)")
                }
            case EPIPE, ECONNRESET, ENOTCONN:
                throw TestClientError.connectionLost("send to \(host):\(port): \(Self.errnoText(code))")
            default:
                throw TestClientError.ioFailed("send to \(host):\(port): \(Self.errnoText(code))")
            }
        }
    }

    /// Reads whatever is available (waiting until `deadline` for something). Returns nil on end of stream,
    /// which includes a connection reset by the peer: to a test both mean "the server dropped us".
    func read(deadline: Deadline, maxBytes: Int = 65536) throws -> [UInt8]? {
        guard fd >= 0 else { throw TestClientError.notOpen("socket already closed") }
        if let tls { return try tls.read(fd: fd, deadline: deadline, maxBytes: maxBytes) }
        var buffer = [UInt8](repeating: 0, count: maxBytes)
        while true {
            let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if count > 0 { return Array(buffer[0..<count]) }
            if count == 0 { return nil }
            let code = errno
            switch code {
            case EINTR:
                continue
            case EAGAIN, EWOULDBLOCK:
                guard try waitFor(events: Int16(POLLIN), deadline: deadline) else {
                    throw TestClientError.timeout("reading from \(host):\(port)")
                }
            case ECONNRESET, ENOTCONN, EPIPE:
                return nil
            default:
                throw TestClientError.ioFailed("recv from \(host):\(port): \(Self.errnoText(code))")
            }
        }
    }

    /// Reads and discards whatever is already buffered, without waiting. Closing a socket that still has unread
    /// input makes the kernel send RST instead of FIN, which can destroy the peer's last frames.
    func drainAvailable() {
        guard fd >= 0 else { return }
        if let tls { return tls.drainAvailable() }
        var buffer = [UInt8](repeating: 0, count: 65536)
        while buffer.withUnsafeMutableBytes({ recv(fd, $0.baseAddress, $0.count, 0) }) > 0 {}
    }

    /// Waits until `events` are ready. Returns false when the deadline passes first. Error or hang-up conditions
    /// count as ready: the following recv/send reports them.
    private func waitFor(events: Int16, deadline: Deadline) throws -> Bool {
        while true {
            var pfd = pollfd(fd: fd, events: events, revents: 0)
            let rc = poll(&pfd, 1, deadline.pollMilliseconds)
            if rc > 0 { return true }
            if rc == 0 {
                if deadline.hasPassed { return false }
                continue
            }
            if errno == EINTR { continue }
            throw TestClientError.ioFailed("poll: \(Self.errnoText())")
        }
    }

    static func errnoText(_ code: Int32 = errno) -> String {
        String(cString: strerror(code))
    }
}
