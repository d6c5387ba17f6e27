// The client's tunables, with the JavaScript client's defaults: timeouts, reconnect policy, message limits, the
// transport and a token to start with.
import Foundation

extension CairnClient {
    /// How a ``CairnClient`` connects and retries.
    public struct Configuration: Sendable {
        /// A token from an earlier session; ``CairnClient/connect()`` signs in with it.
        public var token: String?
        /// What opens the WebSocket: ``WSClientTransport`` by default; on Apple platforms
        /// ``URLSessionTransport`` may be chosen.
        public var transport: any CairnTransport
        /// How long a request waits for its reply (15 s).
        public var requestTimeout: Duration
        /// How long an opening handshake may take before it is retried (10 s).
        public var connectTimeout: Duration
        /// Whether the client reconnects by itself after a lost connection (true).
        public var reconnect: Bool
        /// Back-off and the close-code policy.
        public var reconnectPolicy: ReconnectPolicy
        /// The hub's largest inbound message; a larger request is refused here with `too_large` (64 KiB).
        public var maxMessageBytes: Int
        /// The largest message accepted from the hub, which batches many lines into one (8 MiB).
        public var maxInboundMessageBytes: Int
        /// The hub's HTTP base for media, e.g. `https://hub.example`; derived from the WebSocket URL when `nil`.
        public var httpURL: URL?
        /// How long an upload or download may take (120 s).
        public var transferTimeout: Duration
        /// How many events a subscriber that does not keep up may have waiting before the oldest are dropped (4096).
        public var eventBuffer: Int
        /// A random number in [0, 1) for the jitter.
        public var random: @Sendable () -> Double

        /// A configuration; every parameter has the default documented on its property.
        public init(
            token: String? = nil, transport: any CairnTransport = WSClientTransport(),
            requestTimeout: Duration = .seconds(15), connectTimeout: Duration = .seconds(10), reconnect: Bool = true,
            reconnectPolicy: ReconnectPolicy = ReconnectPolicy(), maxMessageBytes: Int = 65_536,
            maxInboundMessageBytes: Int = 8 << 20, httpURL: URL? = nil, transferTimeout: Duration = .seconds(120),
            eventBuffer: Int = 4096, random: @escaping @Sendable () -> Double = { Double.random(in: 0..<1) }
        ) {
            self.token = token
            self.transport = transport
            self.requestTimeout = requestTimeout
            self.connectTimeout = connectTimeout
            self.reconnect = reconnect
            self.reconnectPolicy = reconnectPolicy
            self.maxMessageBytes = maxMessageBytes
            self.maxInboundMessageBytes = maxInboundMessageBytes
            self.httpURL = httpURL
            self.transferTimeout = transferTimeout
            self.eventBuffer = eventBuffer
            self.random = random
        }
    }
}

extension CairnClient.Configuration: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// The settings, with the token left out so that printing or logging a configuration does not leak it.
    public var description: String {
        "Configuration(token: \(token == nil ? "nil" : "<redacted>"), transport: \(type(of: transport)), "
            + "requestTimeout: \(requestTimeout), connectTimeout: \(connectTimeout), reconnect: \(reconnect))"
    }
    /// Same as ``description``: the token is left out.
    public var debugDescription: String { description }
    /// The settings, the token redacted.
    public var customMirror: Mirror {
        Mirror(
            self,
            children: [
                "token": token == nil ? "nil" : "<redacted>", "transport": "\(type(of: transport))",
                "requestTimeout": requestTimeout, "connectTimeout": connectTimeout, "reconnect": reconnect,
                "reconnectPolicy": reconnectPolicy, "maxMessageBytes": maxMessageBytes,
                "maxInboundMessageBytes": maxInboundMessageBytes, "httpURL": httpURL as Any,
                "transferTimeout": transferTimeout, "eventBuffer": eventBuffer,
            ])
    }
}
