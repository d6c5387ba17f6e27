import CairnTestSupport
import Foundation
import Testing

// The transport's keepalive (`WebSocketEndpoint.keepAlive`, once a second, in place of lws' validity timers): a
// client that answers pings outlives the idle timeout, one that answers nothing is dropped after it (not before), a
// client that keeps sending is alive without any ping answered, and one that keeps sending but never reads is
// dropped once lws has held its unsent bytes for the timeout.
@testable import CairnServer

@Suite(.serialized, .timeLimit(.minutes(2)))
struct KeepAliveTests {
    /// An echo server that pings after 1 s of silence and drops a connection silent (or not reading) for 4 s.
    private func start(maxOutboundBytes: Int = 1 << 20) throws -> (TransportServer, Int) {
        let loop = ServiceLoop()
        var configuration = ServerConfiguration()
        configuration.port = 0
        configuration.lwsLogVerbosity = 0
        configuration.pingIntervalSeconds = 1
        configuration.idleTimeoutSeconds = 4
        configuration.maxOutboundBytes = maxOutboundBytes
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
            _ = try client.receive(timeout: 8)
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
        // Not at once: during a first second (answering a ping, if one comes) the connection is there.
        #expect {
            _ = try client.receive(timeout: 1)
        } throws: { error in
            (error as? TestClientError)?.isTimeout == true
        }
        // Then the client reads nothing (so answers no ping) for well past the timeout, and finds the connection
        // gone: what it reads is the server's pings, then the end of the stream without a close frame.
        Thread.sleep(forTimeInterval: 9)
        #expect(try client.receive(timeout: 5) == .close(code: nil, reason: ""))
    }

    @Test func aClientThatKeepsSendingIsAliveWithoutAnsweringPings() throws {
        let (server, port) = try start()
        defer { stop(server) }
        let client = try WebSocketClient(port: port, timeout: 10)
        // A message every half second for twice the idle timeout, nothing read meanwhile: its traffic alone keeps it.
        for index in 0..<16 {
            try client.sendText("beat \(index)")
            Thread.sleep(forTimeInterval: 0.5)
        }
        var echoed: [String] = []
        while echoed.count < 16 {
            let incoming = try client.receive(timeout: 5)
            guard case .text(let text) = incoming else {
                Issue.record("after \(echoed.count) echoes: \(incoming)")
                break
            }
            echoed += text.split(separator: "\n").map(String.init)
        }
        #expect(echoed == (0..<16).map { "beat \($0)" })
        client.close()
    }

    @Test func aClientThatSendsButNeverReadsIsDroppedOnceItsBacklogOutlastsTheTimeout() throws {
        // Room for everything pending, so the only way out is the keepalive (not 4001 for too much output).
        let (server, port) = try start(maxOutboundBytes: 64 << 20)
        defer { stop(server) }
        let client = try WebSocketClient(port: port, timeout: 20, receiveBufferSize: 4096)
        // 6 MiB of echoes outgrow the kernel's send buffer (4 MiB), so lws holds the rest; then a short message every
        // half second for three times the timeout: the client is never silent, but it reads nothing.
        let block = String(repeating: "x", count: 16 * 1024)
        for _ in 0..<384 { try client.sendText(block) }
        for index in 0..<24 {
            do { try client.sendText("beat \(index)") } catch { break }  // the server may be gone already
            Thread.sleep(forTimeInterval: 0.5)
        }
        // Reading now, the client gets part of the echoes and then the end of the stream, without a close frame.
        var frames = 0
        while true {
            let incoming = try client.receive(timeout: 20)
            if case .close(let code, _) = incoming {
                #expect(code == nil)
                break
            }
            frames += 1
            if frames > 10_000 {
                Issue.record("the connection was not dropped")
                break
            }
        }
    }
}
