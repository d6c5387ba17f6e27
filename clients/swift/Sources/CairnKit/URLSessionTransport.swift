// An alternative transport on Apple platforms: Foundation's URLSessionWebSocketTask, for apps that would rather not
// run SwiftNIO. Not built on Linux, where Debian's libcurl has no WebSocket support and the task fails at run time.
#if canImport(Darwin)
import Foundation

/// Opens sockets with `URLSessionWebSocketTask` (Apple platforms only).
public struct URLSessionTransport: CairnTransport {
    /// The session the tasks are made in.
    public var session: URLSession

    /// A transport on `session`.
    public init(session: URLSession = .shared) {
        self.session = session
    }

    /// Starts opening a socket.
    public func open(url: URL, subprotocol: String, maxMessageBytes: Int) -> any CairnSocket {
        URLSessionSocket(task: session.webSocketTask(with: url, protocols: [subprotocol]), maxBytes: maxMessageBytes)
    }
}

/// One `URLSessionWebSocketTask`. It reports `opened` when the first ping is answered (the handshake is then done).
final class URLSessionSocket: CairnSocket, @unchecked Sendable {
    let events: AsyncStream<CairnSocketEvent>
    private let sink: AsyncStream<CairnSocketEvent>.Continuation
    private let task: URLSessionWebSocketTask
    private let lock = NSLock()
    private var ended = false

    init(task: URLSessionWebSocketTask, maxBytes: Int) {
        (events, sink) = AsyncStream.makeStream(of: CairnSocketEvent.self)
        self.task = task
        task.maximumMessageSize = maxBytes
        task.resume()
        task.sendPing { [self] error in
            if let error {
                end(reason: error.localizedDescription)
                return
            }
            sink.yield(.opened)
            receive()
        }
    }

    func send(_ text: String) {
        task.send(.string(text)) { [self] error in
            if let error { end(reason: error.localizedDescription) }
        }
    }

    func close(code: UInt16, reason: String) {
        let closeCode = URLSessionWebSocketTask.CloseCode(rawValue: Int(code)) ?? .normalClosure
        task.cancel(with: closeCode, reason: reason.data(using: .utf8))
        end(reason: reason, code: code)
    }

    private func receive() {
        task.receive { [self] result in
            switch result {
            case .success(.string(let text)):
                sink.yield(.text(text))
                receive()
            case .success:
                receive()
            case .failure(let error):
                end(reason: error.localizedDescription)
            }
        }
    }

    private func end(reason: String, code: UInt16? = nil) {
        let first = lock.locked {
            defer { ended = true }
            return !ended
        }
        guard first else { return }
        let sent = task.closeCode == .invalid ? nil : UInt16(clamping: task.closeCode.rawValue)
        let hubReason = task.closeReason.map { String(decoding: $0, as: UTF8.self) }
        sink.yield(.closed(code: sent ?? code ?? 1006, reason: hubReason ?? reason))
        sink.finish()
    }
}
#endif
