// A real `redis-server` (Debian's) on a free loopback port, for the cluster tests: no persistence (`--save ''
// --appendonly no`), killed when the object goes away. `kill()` and `restart()` let a test take Redis away and bring
// it back on the same port, as an operator's restart would.
import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A `redis-server` child process on 127.0.0.1.
public final class RedisServerProcess: @unchecked Sendable {
    /// The port it listens on (the same across restarts).
    public let port: Int
    private var process: TestServerProcess?

    /// True when `redis-server` is installed (tests that need it are skipped otherwise).
    public static var isAvailable: Bool { FileManager.default.isExecutableFile(atPath: executable.path) }
    static let executable = URL(fileURLWithPath: "/usr/bin/redis-server")

    /// `redis://127.0.0.1:<port>`.
    public var url: String { "redis://127.0.0.1:\(port)" }

    /// Starts Redis on a free port and waits until it accepts connections.
    public init() throws {
        port = try Self.freePort()
        try start()
    }

    /// Starts it again on the same port (after `kill`).
    public func restart() throws { try start() }

    /// PUBLISHes `payload` on `channel` over a connection of its own, as any host that reaches Redis could, and
    /// answers how many subscribers Redis handed it to.
    public func publish(_ channel: String, _ payload: [UInt8]) throws -> Int {
        let deadline = Deadline(seconds: 5)
        let socket = try LoopbackSocket(host: "127.0.0.1", port: port, deadline: deadline)
        defer { socket.close() }
        var command = Array("*3\r\n$7\r\nPUBLISH\r\n$\(channel.utf8.count)\r\n\(channel)\r\n".utf8)
        command += Array("$\(payload.count)\r\n".utf8) + payload + Array("\r\n".utf8)
        try socket.write(command, deadline: deadline)
        var reply: [UInt8] = []
        while reply.last != UInt8(ascii: "\n") {
            guard let bytes = try socket.read(deadline: deadline) else { break }
            reply += bytes
        }
        let text = String(decoding: reply, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        guard text.hasPrefix(":"), let count = Int(text.dropFirst()) else {
            throw TestClientError.ioFailed("PUBLISH \(channel): \(text)")
        }
        return count
    }

    /// Runs one command over a connection of its own and answers its reply when it is a string or an integer (as
    /// text), nil for a nil reply. Throws on an error reply or a reply of another kind.
    public func command(_ arguments: [String]) throws -> String? {
        let deadline = Deadline(seconds: 5)
        let socket = try LoopbackSocket(host: "127.0.0.1", port: port, deadline: deadline)
        defer { socket.close() }
        var request = "*\(arguments.count)\r\n"
        for argument in arguments { request += "$\(argument.utf8.count)\r\n\(argument)\r\n" }
        try socket.write(Array(request.utf8), deadline: deadline)
        var reply: [UInt8] = []
        while true {
            if let parsed = try Self.parseSimpleReply(reply) { return parsed }
            guard let bytes = try socket.read(deadline: deadline) else {
                throw TestClientError.ioFailed("\(arguments.first ?? ""): the reply ended early")
            }
            reply += bytes
        }
    }

    /// A complete RESP reply of kind `+`, `:` or `$` in `bytes` (`.some(nil)` for a nil reply; nil while
    /// incomplete).
    static func parseSimpleReply(_ bytes: [UInt8]) throws -> String?? {
        let text = String(decoding: bytes, as: UTF8.self)
        guard let end = text.range(of: "\r\n") else { return nil }
        let head = String(text[..<end.lowerBound])
        switch head.first {
        case "+", ":": return .some(String(head.dropFirst()))
        case "$":
            guard let length = Int(head.dropFirst()) else { break }
            if length < 0 { return .some(nil) }
            let body = text[end.upperBound...]
            guard body.utf8.count >= length + 2 else { return nil }
            return .some(String(decoding: Array(body.utf8.prefix(length)), as: UTF8.self))
        default: break
        }
        throw TestClientError.ioFailed("unexpected Redis reply: \(text)")
    }

    /// Kills it at once (SIGKILL) and waits for it to exit.
    public func kill() {
        guard let process else { return }
        process.kill()
        _ = try? process.waitForExit(timeout: 10)
        self.process = nil
    }

    /// Freezes it (SIGSTOP): connections stay open and the kernel still accepts new ones, but nothing answers.
    public func pause() { process?.signal(SIGSTOP) }

    /// Lets a paused server run again (SIGCONT).
    public func resume() { process?.signal(SIGCONT) }

    deinit {
        resume()
        kill()
    }

    private func start() throws {
        let process = try TestServerProcess(
            executable: Self.executable,
            arguments: [
                "--port", "\(port)", "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--daemonize", "no",
                "--loglevel", "warning",
            ])
        self.process = process
        let deadline = Date().addingTimeInterval(10)
        while Date() < deadline {
            if Self.accepts(port) { return }
            guard process.isRunning else { break }
            usleep(20_000)
        }
        throw TestServerError.launchFailed(executable: Self.executable.path, reason: process.output)
    }

    /// A port nothing listens on now (bound to port 0 and released).
    static func freePort() throws -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer in
                bind(fd, pointer, length) == 0 && getsockname(fd, pointer, &length) == 0
            }
        }
        guard bound else { throw TestServerError.launchFailed(executable: "bind", reason: "no free port") }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    private static func accepts(_ port: Int) -> Bool {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = UInt16(port).bigEndian
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
            }
        }
    }
}
