// The resource limits the JSON reader enforces on untrusted input. They live in one small value so the server
// can configure them once and tests can shrink them to exercise every refusal cheaply.

/// Limits the reader enforces on every request text.
public struct WireLimits: Sendable, Equatable {
    /// The deepest nesting of objects and arrays, counting the request object itself as 1.
    public var maxDepth: Int = 32
    /// The most fields the top-level request object may have.
    public var maxFields: Int = 64
    /// The longest string or key, in encoded bytes between the quotes (an escape counts as its encoded length).
    public var maxStringBytes = 65536
    /// The longest string value `Message.string(_:)` hands out, in bytes of UTF-8 once escapes are decoded: no op
    /// takes a longer one (the longest, a chat message, is 4,000 bytes), so anything longer is refused before any
    /// feature spends time on it (folding, trimming, counting characters).
    public var maxFieldStringBytes = 4096

    /// The default limits: depth 32, 64 top-level fields, 64 KiB strings, 4 KiB string values handed out.
    public init() {}
}
