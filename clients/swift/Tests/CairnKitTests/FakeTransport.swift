// Test support: a transport whose sockets the test drives by hand (open them, deliver text, drop them with a close
// code) and whose sent lines the test reads in order, so the client's core is tested without a network.
import Foundation
import XCTest

@testable import CairnKit

/// Hands out FakeSockets and lets the test wait for each one the client opens.
final class FakeTransport: CairnTransport, @unchecked Sendable {
    private let lock = NSLock()
    private var made: [FakeSocket] = []
    private let openedSink: AsyncStream<FakeSocket>.Continuation
    private let opened: Inbox<FakeSocket>

    init() {
        let (stream, sink) = AsyncStream.makeStream(of: FakeSocket.self)
        openedSink = sink
        opened = Inbox(stream)
    }

    func open(url: URL, subprotocol: String, maxMessageBytes: Int) -> any CairnSocket {
        let socket = FakeSocket(url: url, subprotocol: subprotocol)
        lock.locked { made.append(socket) }
        openedSink.yield(socket)
        return socket
    }

    /// How many sockets the client has opened.
    var count: Int { lock.locked { made.count } }

    /// The next socket the client opens.
    func nextSocket() async throws -> FakeSocket {
        try await opened.next()
    }
}

/// A socket the test controls.
final class FakeSocket: CairnSocket, @unchecked Sendable {
    let url: URL
    let subprotocol: String
    let events: AsyncStream<CairnSocketEvent>
    private let sink: AsyncStream<CairnSocketEvent>.Continuation
    private let sentSink: AsyncStream<String>.Continuation
    private let sent: Inbox<String>
    private let lock = NSLock()
    private var closes: [UInt16] = []

    init(url: URL, subprotocol: String) {
        self.url = url
        self.subprotocol = subprotocol
        (events, sink) = AsyncStream.makeStream(of: CairnSocketEvent.self)
        let (sent, sentSink) = AsyncStream.makeStream(of: String.self)
        self.sentSink = sentSink
        self.sent = Inbox(sent)
    }

    func send(_ text: String) {
        for line in text.split(separator: "\n") { sentSink.yield(String(line)) }
    }

    func close(code: UInt16, reason: String) {
        lock.locked { closes.append(code) }
        drop(code: code, reason: reason)
    }

    /// The close codes the client asked for.
    var closeCodes: [UInt16] { lock.locked { closes } }

    /// The handshake succeeds.
    func accept() { sink.yield(.opened) }

    /// The hub sends `text`.
    func deliver(_ text: String) { sink.yield(.text(text)) }

    /// The hub (or the network) closes the socket.
    func drop(code: UInt16, reason: String = "") {
        sink.yield(.closed(code: code, reason: reason))
        sink.finish()
    }

    /// The next line the client sent, as JSON.
    func nextSent() async throws -> JSONValue {
        let line = try await sent.next()
        return try JSONDecoder().decode(JSONValue.self, from: Data(line.utf8))
    }

    /// Answers a request line with `ok: true` and `fields`.
    func reply(to request: JSONValue, _ fields: [String: JSONValue] = [:]) {
        var object = fields
        object["id"] = request["id"]
        object["ok"] = true
        deliver(Self.encode(.object(object)))
    }

    /// Answers a request line with an error.
    func fail(_ request: JSONValue, code: String, message: String) {
        let object: JSONValue = [
            "id": request["id"] ?? nil, "ok": false, "error": ["code": .string(code), "message": .string(message)],
        ]
        deliver(Self.encode(object))
    }

    static func encode(_ value: JSONValue) -> String {
        String(decoding: (try? JSONEncoder().encode(value)) ?? Data(), as: UTF8.self)
    }
}

struct Timeout: Error {}

/// The value `body` produces, failing after 10 s rather than hanging the suite (a deadline, not a speed assumption:
/// every wait here is for something the test itself makes happen).
func within<T: Sendable>(
    seconds: Double = 10, _ body: @escaping @Sendable () async -> T?
) async throws -> T {
    try await withThrowingTaskGroup(of: T?.self) { group in
        group.addTask { await body() }
        group.addTask {
            try await Task.sleep(for: .seconds(seconds))
            throw Timeout()
        }
        defer { group.cancelAll() }
        guard let first = try await group.next(), let value = first else { throw Timeout() }
        return value
    }
}

/// The elements of a stream, read one at a time by one reader, each within a deadline.
final class Inbox<T: Sendable>: @unchecked Sendable {
    private var iterator: AsyncStream<T>.AsyncIterator

    init(_ stream: AsyncStream<T>) {
        iterator = stream.makeAsyncIterator()
    }

    private func take() async -> T? {
        await iterator.next()
    }

    /// The next element; fails after 10 s or when the stream ended.
    func next() async throws -> T {
        try await within { await self.take() }
    }

    /// The next element that `match` accepts.
    func next(where match: (T) -> Bool) async throws -> T {
        while true {
            let value = try await next()
            if match(value) { return value }
        }
    }
}
