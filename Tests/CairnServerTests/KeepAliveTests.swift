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

    /// Runs a client's seconds of blocking work on a thread of its own, not on one of the cooperative pool's few
    /// threads, which in-process hubs of suites running meanwhile need (their continuations would wait seconds).
    /// Expectations are checked on the test's task, on what the body returns.
    private func onOwnThread<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            Thread.detachNewThread { continuation.resume(with: Result { try body() }) }
        }
    }

    /// Whether `body` ended with the client's own timeout.
    private static func timesOut(_ body: () throws -> Void) -> Bool {
        do {
            try body()
            return false
        } catch {
            return (error as? TestClientError)?.isTimeout == true
        }
    }

    @Test func aClientThatAnswersPingsOutlivesTheIdleTimeout() async throws {
        let (server, port) = try start()
        defer { stop(server) }
        // Waiting for a message that never comes, the client answers each ping; after twice the idle timeout the
        // wait ends by its own timeout, not by the server dropping the connection.
        let (timedOut, echo) = try await onOwnThread {
            let client = try WebSocketClient(port: port, timeout: 10)
            defer { client.close() }
            let timedOut = Self.timesOut { _ = try client.receive(timeout: 8) }
            try client.sendText("still here")
            return (timedOut, try client.receive(timeout: 5))
        }
        #expect(timedOut)
        #expect(echo == .text("still here"))
    }

    @Test func aClientThatAnswersNothingIsDroppedAfterTheIdleTimeout() async throws {
        let (server, port) = try start()
        defer { stop(server) }
        let (firstSecondTimedOut, last) = try await onOwnThread {
            let client = try WebSocketClient(port: port, timeout: 10)
            // Not at once: during a first second (answering a ping, if one comes) the connection is there.
            let timedOut = Self.timesOut { _ = try client.receive(timeout: 1) }
            // Then the client reads nothing (so answers no ping) for well past the timeout, and finds the connection
            // gone: what it reads is the server's pings, then the end of the stream without a close frame.
            Thread.sleep(forTimeInterval: 9)
            return (timedOut, try client.receive(timeout: 5))
        }
        #expect(firstSecondTimedOut)
        #expect(last == .close(code: nil, reason: ""))
    }

    @Test func aClientThatKeepsSendingIsAliveWithoutAnsweringPings() async throws {
        let (server, port) = try start()
        defer { stop(server) }
        let echoed = try await onOwnThread {
            let client = try WebSocketClient(port: port, timeout: 10)
            defer { client.close() }
            // A message every half second for twice the idle timeout, nothing read meanwhile: its traffic alone
            // keeps it.
            for index in 0..<16 {
                try client.sendText("beat \(index)")
                Thread.sleep(forTimeInterval: 0.5)
            }
            var echoed: [String] = []
            while echoed.count < 16 {
                guard case .text(let text) = try client.receive(timeout: 5) else { break }
                echoed += text.split(separator: "\n").map(String.init)
            }
            return echoed
        }
        #expect(echoed == (0..<16).map { "beat \($0)" })
    }

    @Test func aClientThatSendsButNeverReadsIsDroppedOnceItsBacklogOutlastsTheTimeout() async throws {
        // Room for everything pending, so the only way out is the keepalive (not 4001 for too much output).
        let (server, port) = try start(maxOutboundBytes: 64 << 20)
        defer { stop(server) }
        let end = try await onOwnThread { () -> WebSocketClient.Incoming? in
            let client = try WebSocketClient(port: port, timeout: 20, receiveBufferSize: 4096)
            // 6 MiB of echoes outgrow the kernel's send buffer (4 MiB), so lws holds the rest; then a short message
            // every half second for three times the timeout: the client is never silent, but it reads nothing.
            let block = String(repeating: "x", count: 16 * 1024)
            for _ in 0..<384 { try client.sendText(block) }
            for index in 0..<24 {
                do { try client.sendText("beat \(index)") } catch { break }  // the server may be gone already
                Thread.sleep(forTimeInterval: 0.5)
            }
            // Reading now, the client gets part of the echoes and then the end of the stream.
            for _ in 0..<10_000 {
                let incoming = try client.receive(timeout: 20)
                if case .close = incoming { return incoming }
            }
            return nil
        }
        #expect(end == .close(code: nil, reason: ""), "the connection was not dropped")
    }
}
