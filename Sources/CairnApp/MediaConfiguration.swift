// Settings for uploaded media, with documented defaults. Part of `AppConfiguration`; nothing global.

/// Media upload, signed-URL and garbage-collection settings.
public struct MediaConfiguration: Sendable {
    /// Largest upload in bytes; a larger one is answered 413 (default 20 MiB).
    public var maxBytes = 20 << 20
    /// Bytes of media one user may have stored in all (0: no quota).
    public var quotaBytes = 1 << 30
    /// How long a signed media URL stays valid, in milliseconds (default 600 s).
    public var urlLifetimeMs: Int64 = 600_000
    /// How long an upload no relic names is kept before it may be collected, in milliseconds (default 1 h): the
    /// time a client has between uploading and creating the relic that uses it.
    public var garbageGraceMs: Int64 = 3_600_000
    /// How often unreferenced media is collected, in milliseconds (default 10 min).
    public var garbagePeriodMs: Int64 = 600_000

    /// The defaults above.
    public init() {}
}
