// Where a node finds Redis: `cluster.redis_url` parsed once at start, so a typo is a configuration problem before
// anything listens rather than a reconnect loop. hiredis resolves host names synchronously inside connect, which
// would block the hub's loop, so the host must be an IP literal (or `localhost`, taken as 127.0.0.1).

/// A Redis server's address, from a `redis://host:port` URL.
public struct RedisEndpoint: Sendable, Equatable, CustomStringConvertible {
    /// An IPv4 or IPv6 literal.
    public var host: String
    /// The TCP port.
    public var port: Int

    /// Creates an endpoint from parts already checked.
    public init(host: String, port: Int) {
        self.host = host
        self.port = port
    }

    /// `redis://host:port` (the port defaults to 6379; a trailing `/` or `/0` is accepted).
    public var description: String { host.contains(":") ? "redis://[\(host)]:\(port)" : "redis://\(host):\(port)" }

    /// Parses `redis://host[:port][/0]`; throws with a message naming what is wrong.
    public init(url: String) throws(RedisURLError) {
        guard url.hasPrefix("redis://") else {
            throw RedisURLError("must start with redis:// (got \"\(url)\")")
        }
        var rest = Substring(url.dropFirst("redis://".count))
        if let slash = rest.firstIndex(of: "/") {
            let path = rest[slash...]
            guard path == "/" || path == "/0" else {
                throw RedisURLError("only database 0 is supported (got path \"\(path)\")")
            }
            rest = rest[..<slash]
        }
        guard !rest.contains("@") else {
            throw RedisURLError("credentials in the URL are not supported; bind Redis to a private address")
        }
        var host: Substring
        var portText: Substring?
        if rest.hasPrefix("[") {
            guard let close = rest.firstIndex(of: "]") else { throw RedisURLError("unclosed [ in the host") }
            host = rest[rest.index(after: rest.startIndex)..<close]
            let after = rest[rest.index(after: close)...]
            if !after.isEmpty {
                guard after.hasPrefix(":") else { throw RedisURLError("expected :port after ]") }
                portText = after.dropFirst()
            }
        } else if let colon = rest.firstIndex(of: ":") {
            host = rest[..<colon]
            portText = rest[rest.index(after: colon)...]
        } else {
            host = rest
        }
        if host == "localhost" { host = "127.0.0.1" }
        guard !host.isEmpty else { throw RedisURLError("the host is missing") }
        guard Self.isIPv4(host) || (host.contains(":") && host.allSatisfy({ $0.isHexDigit || $0 == ":" || $0 == "." }))
        else {
            throw RedisURLError(
                "the host must be an IP address or localhost (names would be resolved on the event loop; "
                    + "got \"\(host)\")"
            )
        }
        var port = 6379
        if let portText {
            guard let value = Int(portText), (1...65_535).contains(value) else {
                throw RedisURLError("the port must be a number from 1 to 65535 (got \"\(portText)\")")
            }
            port = value
        }
        self.init(host: String(host), port: port)
    }

    private static func isIPv4(_ text: Substring) -> Bool {
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        return parts.count == 4
            && parts.allSatisfy { part in
                !part.isEmpty && part.count <= 3 && part.allSatisfy(\.isNumber) && Int(part)! <= 255
            }
    }
}

/// Why a `cluster.redis_url` was refused.
public struct RedisURLError: Error, Equatable, Sendable, CustomStringConvertible {
    /// What is wrong, in words.
    public let message: String
    init(_ message: String) { self.message = message }
    public var description: String { message }
}
