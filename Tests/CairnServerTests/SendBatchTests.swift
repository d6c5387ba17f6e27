import CairnTestSupport
import Foundation
import Glibc
import Testing

// The io_uring batch of sends: each entry reaches its own socket, a full socket takes part of an entry and leaves
// the rest to the caller, a send to a closed peer fails with its errno, a batch without room refuses an entry; and a
// real server writes through the batch, so that a slow reader still gets every frame whole and in order, while a
// TLS server or one with the option off writes each frame through lws.
@testable import CairnServer

@Suite(.timeLimit(.minutes(5)))
struct SendBatchTests {
    /// A connected pair of non-blocking stream sockets, closed when the test ends.
    private final class SocketPair {
        let ends: [Int32]
        init(sendBuffer: Int32? = nil) throws {
            var fds: [Int32] = [0, 0]
            try #require(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0, &fds) == 0)
            if var size = sendBuffer {
                setsockopt(fds[0], SOL_SOCKET, SO_SNDBUF, &size, socklen_t(MemoryLayout<Int32>.size))
            }
            ends = fds
        }
        deinit { for fd in ends where fd >= 0 { close(fd) } }

        /// Everything readable now at the second end.
        func drain() -> [UInt8] {
            var all: [UInt8] = []
            var chunk = [UInt8](repeating: 0, count: 65536)
            while true {
                let count = read(ends[1], &chunk, chunk.count)
                if count <= 0 { return all }
                all += chunk[0..<count]
            }
        }
    }

    private func batch(entries: UInt32 = 8, bytes: Int = 4096) throws -> SendBatch {
        let made = SendBatch.make(entries: entries, bytes: bytes)
        if case .failure(let error) = made { Issue.record("io_uring unavailable: \(error)") }
        return try made.get()
    }

    private func add(_ batch: SendBatch, _ fd: Int32, _ bytes: [UInt8]) -> Bool {
        bytes.withUnsafeBytes { batch.add(fd: fd, $0) }
    }

    @Test func eachEntryReachesItsOwnSocketInOneSubmission() throws {
        let batch = try batch()
        let first = try SocketPair()
        let second = try SocketPair()
        #expect(add(batch, first.ends[0], Array("hello".utf8)))
        #expect(add(batch, second.ends[0], Array("world!".utf8)))
        #expect(add(batch, first.ends[0], Array(" again".utf8)))
        #expect(batch.count == 3)
        #expect(batch.submit() == nil)
        #expect(batch.outcome(0) == .sent(5))
        #expect(batch.outcome(1) == .sent(6))
        #expect(batch.outcome(2) == .sent(6))
        #expect(String(decoding: first.drain(), as: UTF8.self) == "hello again")
        #expect(String(decoding: second.drain(), as: UTF8.self) == "world!")
        batch.reset()
        #expect(batch.count == 0)
        #expect(add(batch, second.ends[0], Array("more".utf8)))
        #expect(batch.submit() == nil)
        #expect(batch.outcome(0) == .sent(4))
        #expect(String(decoding: second.drain(), as: UTF8.self) == "more")
    }

    /// Entries written in place (the transport's frames) go out as copied ones do, and a batch without room for one
    /// says so without asking for its bytes, so nothing pending is taken from the connection.
    @Test func anEntryWrittenInPlaceReachesItsSocketAndNoRoomLeavesItUnasked() throws {
        let batch = try batch(entries: 2, bytes: 16)
        let pair = try SocketPair()
        func place(_ text: String) -> (added: Bool, asked: Bool) {
            var asked = false
            let bytes = Array(text.utf8)
            let added = batch.add(fd: pair.ends[0], length: bytes.count) { room in
                asked = true
                #expect(room.count == bytes.count)
                room.copyBytes(from: bytes)
            }
            return (added, asked)
        }
        #expect(place("in place, ") == (true, true))
        #expect(place("too long now") == (false, false))  // 10 of 16 bytes used
        #expect(place("twice") == (true, true))
        #expect(place("x") == (false, false))  // both entries used
        #expect(batch.submit() == nil)
        #expect(batch.outcome(0) == .sent(10) && batch.outcome(1) == .sent(5))
        #expect(String(decoding: pair.drain(), as: UTF8.self) == "in place, twice")
    }

    @Test func aFullSocketTakesPartOfAnEntryAndTheRestStaysWithTheCaller() throws {
        let batch = try batch(entries: 4, bytes: 1 << 20)
        let pair = try SocketPair(sendBuffer: 4096)
        let payload = (0..<(512 * 1024)).map { UInt8(truncatingIfNeeded: $0 &* 7) }
        #expect(add(batch, pair.ends[0], payload))
        #expect(batch.submit() == nil)
        guard case .sent(let taken) = batch.outcome(0) else {
            Issue.record("expected a partial send, got \(batch.outcome(0))")
            return
        }
        #expect(taken > 0 && taken < payload.count)
        #expect(Array(batch.bytes(0, from: taken)) == Array(payload[taken...]))
        #expect(pair.drain() == Array(payload[..<taken]))
        batch.reset()
        // Full again with the rest: a send that finds no room takes nothing and does not wait for room.
        #expect(add(batch, pair.ends[0], Array(payload[taken...])))
        #expect(batch.submit() == nil)
        guard case .sent(let again) = batch.outcome(0) else {
            Issue.record("expected a partial send, got \(batch.outcome(0))")
            return
        }
        batch.reset()
        #expect(add(batch, pair.ends[0], [1]))
        #expect(batch.submit() == nil)
        #expect(batch.outcome(0) == .sent(0))
        #expect(again < payload.count - taken)
    }

    @Test func aSendToAClosedPeerFailsWithItsErrno() throws {
        let batch = try batch()
        let pair = try SocketPair()
        close(pair.ends[1])
        let notASocket = open("/dev/null", O_WRONLY)
        defer { close(notASocket) }
        #expect(add(batch, pair.ends[0], Array("lost".utf8)))
        #expect(add(batch, notASocket, Array("lost".utf8)))
        #expect(batch.submit() == nil)
        #expect(batch.outcome(0) == .failed(EPIPE))
        #expect(batch.outcome(1) == .failed(ENOTSOCK))
    }

    @Test func aBatchWithoutRoomRefusesAnEntry() throws {
        let batch = try batch(entries: 2, bytes: 16)
        let pair = try SocketPair()
        #expect(add(batch, pair.ends[0], [UInt8](repeating: 1, count: 10)))
        #expect(!add(batch, pair.ends[0], [UInt8](repeating: 2, count: 10)))  // 20 bytes > 16
        #expect(add(batch, pair.ends[0], [UInt8](repeating: 3, count: 6)))
        #expect(!add(batch, pair.ends[0], [4]))  // a third entry
        #expect(batch.count == 2)
        #expect(batch.submit() == nil)
        #expect(pair.drain() == [UInt8](repeating: 1, count: 10) + [UInt8](repeating: 3, count: 6))
    }

    private func server(_ configure: (inout ServerConfiguration) -> Void = { _ in }) -> (TransportServer, ServiceLoop) {
        let loop = ServiceLoop()
        var configuration = ServerConfiguration()
        configuration.port = 0
        configuration.lwsLogVerbosity = 0
        configure(&configuration)
        let server = TransportServer(
            configuration: configuration, loop: loop, handler: EchoHandler(confinement: loop.confinement),
            observer: CountingObserver())
        return (server, loop)
    }

    @Test func aSlowReaderGetsEveryFrameWholeAndInOrderThroughTheBatch() throws {
        // The kernel's send buffer grows to 4 MiB (net.ipv4.tcp_wmem); 6 MiB of echoes outgrow it.
        let (server, _) = server { $0.maxOutboundBytes = 32 << 20 }
        #expect(server.webSockets.sendBatch != nil)
        let port = try server.start()
        defer {
            server.requestShutdown()
            server.waitUntilStopped()
        }
        let client = try WebSocketClient(port: port, timeout: 20, receiveBufferSize: 4096)
        // 384 echoes of 16 KiB to a client that reads none of them until it has sent them all: the socket fills,
        // sends take part of a frame or none, and lws sends the rest.
        let messages = (0..<384).map { index in
            String(repeating: String(UnicodeScalar(UInt8(65 + index % 26))), count: 16 * 1024 - 8)
                + String(format: "%08d", index)
        }
        for message in messages { try client.sendText(message) }
        // Echoes queued while the socket is full go out together, as one frame of objects joined by newlines.
        var received: [String] = []
        while received.count < messages.count {
            let incoming = try client.receive(timeout: 20)
            guard case .text(let text) = incoming else {
                Issue.record("after \(received.count) messages: expected text, got \(incoming)")
                return
            }
            received += text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        }
        #expect(received.count == messages.count)
        let changed = Array(zip(received, messages).enumerated().filter { $0.element.0 != $0.element.1 }.map(\.offset))
        let first = changed.first.map { "message \($0): \(received[$0].count) bytes ending \(received[$0].suffix(12))" }
        #expect(changed.isEmpty, "\(changed.count) changed or out of order, first \(first ?? "")")
        #expect(server.webSockets.batchRemainders > 0, "the socket never filled: the partial path was not exercised")
        client.close()
    }

    @Test func withTheOptionOffOrWithTLSEachFrameIsWrittenByLws() throws {
        let (off, _) = server { $0.ioUring = false }
        #expect(off.webSockets.sendBatch == nil)
        let (tls, _) = server {
            $0.tlsCertificatePath = "/nonexistent/cert.pem"
            $0.tlsPrivateKeyPath = "/nonexistent/key.pem"
        }
        #expect(tls.webSockets.sendBatch == nil)
        let port = try off.start()
        defer {
            off.requestShutdown()
            off.waitUntilStopped()
        }
        let client = try WebSocketClient(port: port, timeout: 10)
        try client.sendText("hello")
        #expect(try client.receive(timeout: 10) == .text("hello"))
        client.close()
    }
}
