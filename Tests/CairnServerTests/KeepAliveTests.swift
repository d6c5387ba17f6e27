import CairnTestSupport
import Foundation
import Testing

// The transport's keepalive (`WebSocketEndpoint.keepAlive`, once a second, in place of lws' validity timers): a
// client that answers pings outlives the idle timeout, one that answers nothing is dropped after it, and a client
// that keeps sending is alive without any ping answered.
@testable import CairnServer

@Suite(.serialized, .timeLimit(.minutes(2)))
struct KeepAliveTests {
    /// An echo server that pings after 1 s of silence and drops a connection silent for 3 s.
    private func start() throws -> (TransportServer, Int) {
        let loop = ServiceLoop()
        var configuration = ServerConfiguration()
        configuration.port = 0
        configuration.lwsLogVerbosity = 0
        configuration.pingIntervalSeconds = 1
        configuration.idleTimeoutSeconds = 3
        let server = TransportServer(
            configuration: configuration, loop: loop, handler: EchoHandler(confinement: loop.confinement),
            observer: CountingObserver())
        return (server, try server.start())
    }

    private func stop(_ server: TransportServer) {
        server.requestShutdown()
        server.waitUntilStopped()
    }

    @Test func aClientThatAnswersPingsOutlivesTheIdleTimeout() throws {
        let (server, port) = try start()
        defer { stop(server) }
        let client = try WebSocketClient(port: port, timeout: 10)
        // Waiting for a message that never comes, the client answers each ping; after twice the idle timeout the
        // wait ends by its own timeout, not by the server dropping the connection.
        #expect {
            _ = try client.receive(timeout: 6)
        } throws: { error in
            (error as? TestClientError)?.isTimeout == true
        }
        try client.sendText("still here")
        #expect(try client.receive(timeout: 5) == .text("still here"))
        client.close()
    }

    @Test func aClientThatAnswersNothingIsDroppedAfterTheIdleTimeout() throws {
        let (server, port) = try start()
        defer { stop(server) }
        let client = try WebSocketClient(port: port, timeout: 10)
        // The client reads nothing (so answers no ping) for well past the timeout, then finds the connection gone:
        // what it reads is the server's pings, then the end of the stream without a close frame.
        Thread.sleep(forTimeInterval: 8)
        #expect(try client.receive(timeout: 5) == .close(code: nil, reason: ""))
    }

    @Test func aClientThatKeepsSendingIsAliveWithoutAnsweringPings() throws {
        let (server, port) = try start()
        defer { stop(server) }
        let client = try WebSocketClient(port: port, timeout: 10)
        // A message every half second for twice the idle timeout, nothing read meanwhile: its traffic alone keeps it.
        for index in 0..<12 {
            try client.sendText("beat \(index)")
            Thread.sleep(forTimeInterval: 0.5)
        }
        var echoed: [String] = []
        while echoed.count < 12 {
            guard case .text(let text) = try client.receive(timeout: 5) else { continue }
            echoed += text.split(separator: "\n").map(String.init)
        }
        #expect(echoed == (0..<12).map { "beat \($0)" })
        client.close()
    }
}
