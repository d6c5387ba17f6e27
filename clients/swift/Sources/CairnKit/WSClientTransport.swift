// The default transport: swift-websocket's WSClient on SwiftNIO, which works on Linux and, through
// NIOTransportServices, on Apple platforms. One task per socket runs the client; the socket's events are what it
// reports, and what the core sends goes through a stream to the writer. The client's 16 KiB frame limit is raised
// to the largest message the hub may send (it batches many lines into one message).
import Foundation
import HTTPTypes
import Logging
import NIOWebSocket
import WSClient

#if canImport(Network)
import Network
#endif

/// Opens sockets with swift-websocket's `WebSocketClient` (ws:// and wss://).
public struct WSClientTransport: CairnTransport {
    /// Headers added to the upgrade request (e.g. `Authorization: Bearer …`, which signs in on the upgrade).
    public var additionalHeaders: [String: String]
    /// How often the socket pings the hub (30 s); a ping still unanswered when the next is due drops the connection,
    /// which the client then reconnects. Without it a connection whose network went away silently (a phone changing
    /// networks, a NAT forgetting it) would look open for as long as TCP takes to give up, often many minutes, and
    /// nothing would arrive. `nil` turns pings off.
    public var pingInterval: Duration?

    /// A transport; `additionalHeaders` go with every upgrade request.
    public init(additionalHeaders: [String: String] = [:], pingInterval: Duration? = .seconds(30)) {
        self.additionalHeaders = additionalHeaders
        self.pingInterval = pingInterval
    }

    /// Starts opening a socket.
    public func open(url: URL, subprotocol: String, maxMessageBytes: Int) -> any CairnSocket {
        var headers = HTTPFields()
        headers[.secWebSocketProtocol] = subprotocol
        for (name, value) in additionalHeaders {
            if let field = HTTPField.Name(name) { headers[field] = value }
        }
        return WSClientSocket(url: url, headers: headers, maxMessageBytes: maxMessageBytes, pingInterval: pingInterval)
    }
}

/// One WSClient connection.
final class WSClientSocket: CairnSocket {
    enum Outgoing: Sendable {
        case text(String)
        case close(UInt16, String)
    }

    let events: AsyncStream<CairnSocketEvent>
    private let outgoing: AsyncStream<Outgoing>.Continuation
    private let opened: OpenedFlag
    private let task: Task<Void, Never>

    init(url: URL, headers: HTTPFields, maxMessageBytes: Int, pingInterval: Duration?) {
        let (events, eventSink) = AsyncStream.makeStream(of: CairnSocketEvent.self)
        let (outbox, outgoing) = AsyncStream.makeStream(of: Outgoing.self)
        self.events = events
        self.outgoing = outgoing
        let opened = OpenedFlag()
        self.opened = opened
        task = Task {
            await Self.run(
                url: url, headers: headers, maxMessageBytes: maxMessageBytes, pingInterval: pingInterval,
                events: eventSink, outbox: outbox, opened: opened)
        }
    }

    func send(_ text: String) {
        outgoing.yield(.text(text))
    }

    func close(code: UInt16, reason: String) {
        outgoing.yield(.close(code, reason))
        // A socket still opening has no closing handshake to make.
        if !opened.value { task.cancel() }
    }

    private static func run(
        url: URL, headers: HTTPFields, maxMessageBytes: Int, pingInterval: Duration?,
        events: AsyncStream<CairnSocketEvent>.Continuation, outbox: AsyncStream<Outgoing>, opened: OpenedFlag
    ) async {
        let configuration = WebSocketClientConfiguration(
            maxFrameSize: maxMessageBytes, additionalHeaders: headers, closeTimeout: .seconds(5),
            autoPing: pingInterval.map { .enabled(timePeriod: $0) } ?? .disabled, validateUTF8: true)
        var logger = Logger(label: "CairnKit.WSClient")
        logger.logLevel = .critical
        let handler: WebSocketDataHandler<WebSocketClient.Context> = { inbound, outbound, _ in
            opened.set()
            events.yield(.opened)
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask {
                    for await item in outbox {
                        switch item {
                        case .text(let text):
                            try await outbound.write(.text(text))
                        case .close(let code, let reason):
                            try await outbound.close(.init(codeNumber: Int(code)), reason: reason)
                            return
                        }
                    }
                }
                for try await message in inbound.messages(maxSize: maxMessageBytes) {
                    if case .text(let text) = message { events.yield(.text(text)) }
                }
                group.cancelAll()
            }
        }
        do {
            #if canImport(Network)
            // Apple platforms: Network.framework through NIOTransportServices (TLS for wss:// by the system).
            let frame = try await WebSocketClient.connect(
                url: url.absoluteString, configuration: configuration,
                transportServicesTLSOptions: TSTLSOptions(NWProtocolTLS.Options()), logger: logger, handler: handler)
            #else
            let frame = try await WebSocketClient.connect(
                url: url.absoluteString, configuration: configuration, logger: logger, handler: handler)
            #endif
            let code = frame.map { UInt16(webSocketErrorCode: $0.closeCode) } ?? 1006
            events.yield(.closed(code: code, reason: frame?.reason ?? ""))
        } catch {
            events.yield(.closed(code: 1006, reason: "\(error)"))
        }
        events.finish()
    }
}

/// Whether a socket got through its handshake, read from `close` on any thread.
final class OpenedFlag: @unchecked Sendable {
    private let lock = NSLock()
    private var opened = false

    var value: Bool { lock.locked { opened } }

    func set() { lock.locked { opened = true } }
}
