// `cairn health`: asks a running hub for GET /healthz and exits 0 on HTTP 200, 1 otherwise. It exists for container
// health checks and scripts on machines without an HTTP client. The address comes from the same settings as
// `serve` (a host of 0.0.0.0 is probed on 127.0.0.1). With TLS on it only checks that the port accepts connections:
// probe https://HOST:PORT/healthz from outside for the full answer.
import ArgumentParser
import CairnConfig
import Foundation

#if canImport(Glibc)
import Glibc
import CairnApp
import CairnServer
#endif

struct Health: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Check a running hub's /healthz (exit 0 when healthy).")

    @Option(help: "Configuration file (TOML) to read the address from. [env: CAIRN_CONFIG]")
    var config: String?

    @Option(help: "Seconds to wait for the answer.")
    var timeout: Double = 5

    @Argument(parsing: .allUnrecognized, help: ArgumentHelp("Settings as for serve, e.g. --port 7681."))
    var settings: [String] = []

    func run() throws {
        let server = try SettingsLoader.resolve(configFile: config, arguments: settings, checks: []).app.server
        let host = server.host == "0.0.0.0" ? "127.0.0.1" : server.host
        do {
            let status = try Self.probe(host: host, port: server.port, plainHTTP: !server.usesTLS, timeout: timeout)
            print(status)
        } catch {
            print("unhealthy: \(error)")
            throw ExitCode(1)
        }
    }

    struct ProbeError: Error, CustomStringConvertible {
        let description: String
    }

    /// Connects, and without TLS sends GET /healthz and requires a 200; returns a one-line summary.
    static func probe(host: String, port: Int, plainHTTP: Bool, timeout: Double) throws -> String {
        var address = in_addr()
        guard inet_pton(AF_INET, host, &address) == 1 else {
            throw ProbeError(description: "\(host) is not an IPv4 address")
        }
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw ProbeError(description: "socket(): \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        var limit = timeval(tv_sec: Int(timeout), tv_usec: Int((timeout - timeout.rounded(.down)) * 1_000_000))
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &limit, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &limit, socklen_t(MemoryLayout<timeval>.size))
        var sin = sockaddr_in()
        sin.sin_family = sa_family_t(AF_INET)
        sin.sin_port = in_port_t(UInt16(clamping: port).bigEndian)
        sin.sin_addr = address
        let connected = withUnsafePointer(to: &sin) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard connected == 0 else {
            throw ProbeError(description: "cannot connect to \(host):\(port): \(String(cString: strerror(errno)))")
        }
        guard plainHTTP else { return "\(host):\(port) accepts connections (TLS: /healthz not checked)" }
        let request = Array("GET /healthz HTTP/1.1\r\nHost: \(host):\(port)\r\nConnection: close\r\n\r\n".utf8)
        guard send(fd, request, request.count, Int32(MSG_NOSIGNAL)) == request.count else {
            throw ProbeError(description: "cannot send the request: \(String(cString: strerror(errno)))")
        }
        var answer: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while answer.count < 65536 {
            let count = recv(fd, &buffer, buffer.count, 0)
            if count <= 0 { break }
            answer += buffer[0..<count]
        }
        let text = String(decoding: answer, as: UTF8.self)
        let statusLine = text.split(separator: "\r\n", maxSplits: 1).first.map(String.init) ?? ""
        guard statusLine.hasPrefix("HTTP/1.1 200") || statusLine.hasPrefix("HTTP/1.0 200") else {
            throw ProbeError(description: statusLine.isEmpty ? "no answer from \(host):\(port)" : statusLine)
        }
        let body = text.components(separatedBy: "\r\n\r\n").dropFirst().joined(separator: "\r\n\r\n")
        return "healthy: " + body.trimmingCharacters(in: .whitespacesAndNewlines)
    }
}
