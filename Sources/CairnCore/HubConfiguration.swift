// Tunables of the hub, with the contract's defaults. Everything has a unit in its name or its comment.

/// Settings for `Hub`.
public struct HubConfiguration: Sendable {
    /// A connection that has not authenticated within this many milliseconds is closed with 4508 (contract: 10 s).
    public var authTimeoutMs: Int64 = 10_000
    /// Password hashes and checks (scrypt) one connection may start per minute, in bursts of up to
    /// `passwordChecksBurst`: login, register, relic passwords. 0 means no limit.
    public var passwordChecksPerMinute = 30
    /// The burst of `passwordChecksPerMinute`.
    public var passwordChecksBurst = 10
    /// New accounts (`register`, `guest`) one source address may create per `signupWindowMs`; 0 means no limit.
    public var signupsPerAddress = 20
    /// Open connections allowed from one source address (0: no limit); loopback addresses are not counted (a
    /// reverse proxy or a load tester on the same machine).
    public var connectionsPerAddress = 1000
    /// The window of `signupsPerAddress` (ms).
    public var signupWindowMs: Int64 = 3600 * 1000
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
    /// Which of trackers' fixes the ingest drops (`IngestFilters`; its future bound is separate from `maxFutureMs`).
    public var ingestFilters = IngestFilters()
    /// Requests one tracker may send per second, sustained, to the ingest endpoints (0: no limit); over it (and
    /// `ingestRequestBurst`) they are answered 429 with `Retry-After`.
    public var ingestRequestsPerSecond: Double = 2
    /// Requests one tracker may send at once above `ingestRequestsPerSecond`.
    public var ingestRequestBurst = 20
    /// A `ts` further than this in the future (ms) is refused.
    public var maxFutureMs: Int64 = 5 * 60 * 1000
    /// Late fixes (older than the user's latest) kept per user between two snapshots; the most recent arrivals win.
    public var lateFixesPerUser = 32
    /// Late fixes kept across all users between two snapshots; beyond it new late fixes are dropped.
    public var lateFixesTotal = 100_000
    /// Position history (late fixes) is deleted once its `ts` is this old (ms); late fixes already older are not
    /// kept at all. 0 keeps no history.
    public var positionHistoryRetentionMs: Int64 = 7 * 24 * 3600 * 1000
    /// How often the position history purge runs (ms).
    public var positionHistoryPurgeIntervalMs: Int64 = 3600 * 1000
    /// A guest account not connected for this long (ms) is deleted with everything that is theirs; 0 keeps guests.
    public var guestExpiryMs: Int64 = 30 * 24 * 3600 * 1000
    /// How often the purge of inactive guests runs (ms).
    public var guestPurgeIntervalMs: Int64 = 3600 * 1000
    /// How often a connected guest's last activity is written again while they stay connected (ms).
    public var guestSeenIntervalMs: Int64 = 3600 * 1000
    /// Positions are flushed to the store this often (ms).
    public var snapshotIntervalMs: Int64 = 5_000
    /// A `pos` with an id is answered only once it is written: a snapshot starts at once, shared by the fixes that
    /// arrive while one is being written (`LiveMap.afterWrite`). Off: answered at once, written by the next snapshot.
    public var durablePositions = false
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
    /// Live relics a guest may have at once.
    public var relicsPerGuest = 10
    /// Live relics one user may have within `relicAreaRadius` of a new relic's place.
    public var relicsPerArea = 50
    /// Live relics a guest may have within `relicAreaRadius` of a new relic's place.
    public var relicsPerAreaGuest = 3
    /// The radius of the area `relicsPerArea` counts in (m).
    public var relicAreaRadius: Double = 1_000
    /// Most `relic.appear` events one move sends (the nearest first); the rest are listed by `relic.nearby`.
    public var relicAppearPerMove = 20
    /// Wrong passwords allowed per user and relic within `relicPasswordWindowMs`.
    public var relicPasswordFailures = 5
    /// The window of `relicPasswordFailures` (ms).
    public var relicPasswordWindowMs: Int64 = 15 * 60 * 1000
    /// Password attempts at one relic, by anyone, before it backs off: each further failure doubles the wait,
    /// starting at `relicBackoffBaseMs`, up to `relicBackoffMaxMs`. The count is forgotten after
    /// `relicPasswordWindowMs` without a failure, or at a right password. The creator needs no password.
    public var relicFailuresBeforeBackoff = 10
    /// The first back-off of a relic (ms).
    public var relicBackoffBaseMs: Int64 = 1_000
    /// The longest back-off of a relic (ms).
    public var relicBackoffMaxMs: Int64 = 3600 * 1000
    /// Wrong passwords allowed per user and private event within `eventPasswordWindowMs` (`event.join`).
    public var eventPasswordFailures = 5
    /// The window of `eventPasswordFailures` (ms).
    public var eventPasswordWindowMs: Int64 = 15 * 60 * 1000
    /// Password attempts at one private event, by anyone, before it backs off as a relic does (starting at
    /// `relicBackoffBaseMs`, doubling up to `relicBackoffMaxMs`). Members need no password.
    public var eventFailuresBeforeBackoff = 10
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

    // Buckets, items, trackers.
    /// Buckets one user may create and own at once (co-ownership by a share does not count against it).
    public var bucketsPerUser = 200
    /// Items one bucket may hold.
    public var itemsPerBucket = 1_000
    /// `item.locate` suggests walking up to this distance from the caller (m), public transport beyond it.
    public var walkingDistance: Double = 1_500
    /// How far an owner must be from an item with `alert` on for it to count as left behind (m).
    public var leftBehindDistance: Double = 150
    /// How long the owner must stay farther than `leftBehindDistance` before `item.left_behind` goes out (ms).
    public var leftBehindGraceMs: Int64 = 60_000
    /// Safe zones one user may have.
    public var safeZonesPerUser = 20

    // Pictures and events.
    /// The pictures settings at start (an admin may change them while the hub runs).
    public var pictureSettings = PictureSettings()
    /// Longest picture caption (and report text), in bytes of UTF-8.
    public var pictureCaptionBytes = 500
    /// Pictures per page of `picture.nearby` and `event.pictures` (and most results of `picture.search`).
    public var picturePageSize = 50

    /// The defaults above.
    public init() {}
}
