// Tunables of the hub, with the contract's defaults. Everything has a unit in its name or its comment.

/// Settings for `Hub`.
public struct HubConfiguration: Sendable {
    /// A connection that has not authenticated within this many milliseconds is closed with 4508 (contract: 10 s).
    public var authTimeoutMs: Int64 = 10_000
    /// Requests a connection may queue behind one that is still in flight (e.g. while scrypt runs); more are
    /// refused with `rate_limited`.
    public var maxBacklog = 256
    /// Bytes of requests a connection may queue that way (the count alone would allow 256 full-size messages).
    public var maxBacklogBytes = 256 * 1024
    /// Requests one connection may send per second, sustained (0: no limit). Over it they are answered
    /// `rate_limited`; a connection that keeps on is closed with 4429.
    public var messagesPerSecond = 100
    /// Requests one connection may send in a burst above the sustained rate.
    public var messageBurst = 200
    /// New friend requests one user may send per hour.
    public var friendRequestsPerHour = 50
    /// A position whose implied speed since the previous one exceeds this (m/s) is flagged.
    public var maxSpeed: Double = 300
    /// A `ts` further than this in the future (ms) is refused.
    public var maxFutureMs: Int64 = 5 * 60 * 1000
    /// Positions are flushed to the store this often (ms).
    public var snapshotIntervalMs: Int64 = 5_000
    /// Cell size of the approximate-sharing grid (m).
    public var approximateCellSize: Double = 2_000
    /// How far (m) beyond the edge of the cell approximate viewers see a user must go before they see the next
    /// cell: jitter around an edge does not flip the cell and so does not date the crossing.
    public var approximateHysteresis: Double = 200
    /// `friends.watch` leaves out positions older than this (ms): a friend who logged out a week ago is not on the
    /// map where they last stood.
    public var watchMaxAgeMs: Int64 = 24 * 3600 * 1000
    /// Positions older than this (ms) are marked `stale` where a current position is shown.
    public var staleAfterMs: Int64 = 5 * 60 * 1000
    /// Cell size of the spatial index (m).
    public var indexCellSize: Double = 500
    /// Most results `user.search` returns.
    public var searchLimit = 20
    /// Longest `for` accepted by `share.pause` and `share.set` (s): one year.
    public var maxShareDurationSeconds: Int64 = 366 * 24 * 3600


    // Relics.
    /// Longest relic text, in bytes of UTF-8.
    public var relicTextLimit = 2_000
    /// Allowed opening radius of a relic (m).
    public var relicRadius: ClosedRange<Double> = 10...5_000
    /// Allowed relic lifetime (s): one minute to one year; absent means permanent.
    public var relicTTLSeconds: ClosedRange<Int64> = 60...(365 * 24 * 3600)
    /// `relic.nearby` radius when none is given (m).
    public var relicBrowseRadius: Double = 2_000
    /// Largest `relic.nearby` radius (m).
    public var relicBrowseRadiusMax: Double = 10_000
    /// Most markers one `relic.nearby` returns (the nearest first).
    public var relicNearbyLimit = 500
    /// How far an explicit `lat`/`lon` of `relic.create` may be from the caller's last position (m): relics are
    /// left where one stands, this only allows for GPS correction.
    public var relicPlacementSlack: Double = 200
    /// Live relics one user may have at once.
    public var relicsPerUser = 1_000
    /// Wrong passwords allowed per user and relic within `relicPasswordWindowMs`.
    public var relicPasswordFailures = 5
    /// The window of `relicPasswordFailures` (ms).
    public var relicPasswordWindowMs: Int64 = 15 * 60 * 1000
    /// Expired relics stay stored (listed by `relic.mine`) this long before they are purged (ms).
    public var relicRetentionMs: Int64 = 30 * 24 * 3600 * 1000
    /// How often the purge of old expired relics runs (ms).
    public var relicPurgeIntervalMs: Int64 = 3600 * 1000
    /// Cell size of the roaming index (m): a relic is registered in every cell its circle touches, and a move reads
    /// the relics registered in its cell. Smaller cells mean fewer candidates per move and more cells per relic (a
    /// 5 km relic touches about 1,700 cells of 250 m).
    public var relicCoverCellSize: Double = 250
    /// Most relics one `relic.mine` page returns.
    public var relicMineLimit = 100

    // Chat.
    /// Longest chat message, in bytes of UTF-8.
    public var chatTextLimit = 4_000
    /// Messages per `chat.history` page when no `limit` is given.
    public var chatHistoryDefault = 50
    /// Largest `chat.history` page.
    public var chatHistoryMax = 100
    /// Most conversations `chat.list` returns (most recent first).
    public var chatListLimit = 200

    /// The defaults above.
    public init() {}
}
