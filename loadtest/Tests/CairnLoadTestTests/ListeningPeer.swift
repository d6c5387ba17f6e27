// The peers these tests start for real (nginx with nchan, Mosquitto) are ready once they accept connections on their
// loopback port. This waits for that, bounded, and stops early with the peer's output if it exits first.
import CairnTestSupport
import Glibc
import Testing

/// Waiting for a peer server to listen.
enum ListeningPeer {
    /// Whether something accepts connections on the loopback `port`.
    static func accepts(_ port: Int) -> Bool {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        return withUnsafePointer(to: &address) { p in
            p.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
            }
        }
    }

    /// Waits up to 30 s for `server` (called `name` in failures) to accept on `port`.
    static func wait(for port: Int, from server: TestServerProcess, name: String) throws {
        var waited = 0
        while !accepts(port) {
            try #require(server.isRunning, "\(name) exited: \(server.output)")
            try #require(waited < 300, "\(name) did not listen on \(port) within 30 s: \(server.output)")
            usleep(100_000)
            waited += 1
        }
    }
}
