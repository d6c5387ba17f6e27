// The seam between the client's I/O-free core and a WebSocket implementation. A transport opens sockets; a socket
// reports what happens to it, in order, on one stream, and takes text to send and a request to close without
// blocking. The default is swift-websocket's WSClient; on Apple platforms URLSessionWebSocketTask may be chosen;
// the tests use a fake.
import Foundation

/// What happens to a socket, in order: `opened` once the handshake is done, any number of `text` messages, then one
/// `closed`, after which the stream ends.
public enum CairnSocketEvent: Sendable, Equatable {
    /// The WebSocket handshake succeeded; text may be sent.
    case opened
    /// A text message arrived (one or more JSON lines separated by `\n`).
    case text(String)
    /// The socket closed: the close code the hub sent (1006 when there was none: a connection refused, reset or
    /// lost) and its reason.
    case closed(code: UInt16, reason: String)
}

/// One WebSocket connection of a transport.
public protocol CairnSocket: Sendable {
    /// What happens to the socket, in order, ending after `.closed`.
    var events: AsyncStream<CairnSocketEvent> { get }
    /// Queues a text message; never blocks. Messages are sent in the order given.
    func send(_ text: String)
    /// Starts the closing handshake with `code` (or drops a socket that is still opening). A `.closed` event follows.
    func close(code: UInt16, reason: String)
}

/// Opens WebSocket connections for a ``CairnClient``.
public protocol CairnTransport: Sendable {
    /// Starts opening a WebSocket to `url` offering `subprotocol`; the socket's events tell how it goes.
    /// - Parameters:
    ///   - url: the hub's endpoint, e.g. `ws://127.0.0.1:7681/ws`.
    ///   - subprotocol: `cairn.v1`.
    ///   - maxMessageBytes: the largest inbound message to accept (the hub batches several lines into one).
    func open(url: URL, subprotocol: String, maxMessageBytes: Int) -> any CairnSocket
}
