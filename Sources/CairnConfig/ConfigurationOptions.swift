// THE list of `cairn serve` settings. Each entry is one option, complete: file key, flag (the environment
// variable is derived from the flag: `--max-speed` is `CAIRN_MAX_SPEED`), type and range, default, unit, one line
// of help, and where the value goes in `AppConfiguration`. Flags, environment variables, the TOML file,
// `cairn serve --help`, `cairn config check|show|example|options`, deploy/cairn.example.toml and the options
// table in docs/OPERATIONS.md all come from this list.
//
// Adding an option is one entry here:
//   1. Add the field (with its default) to the configuration struct it belongs to (ServerConfiguration,
//      HubConfiguration, AppConfiguration, ...).
//   2. Append an entry below, in the table (`[section]`) where it belongs, e.g.
//        .integer("media.max_bytes", flag: "media-max-bytes", default: 8 << 20, range: 1024...(1 << 30),
//                 unit: "bytes", help: "Largest media upload; bigger ones are refused with 413.")
//        { $0.media.maxBytes = $1 },
//      using `.integer`, `.decimal`, `.text` (kinds `.string`, `.path`, `.choice([...])`) or `.boolean`. Keep the
//      default equal to the struct's default (a test checks they agree).
//   3. If the option constrains another one, add a rule to `checks`.
//   4. Regenerate the docs: `cairn config options > /tmp/t` and paste it over the table in docs/OPERATIONS.md,
//      and add the key to deploy/cairn.example.toml (`cairn config example` prints a complete file). Tests fail
//      until both mention the new key.
import CairnApp
import CairnCore
import CairnCrypto
import CairnServer
import CairnSessions
import Foundation
import Logging

/// Every setting of `cairn serve`, in the order help and docs show them.
public enum ConfigurationOptions {
    /// The options. See the file header for how to add one.
    public static let all: [ConfigurationOption] = [
        // [server]
        .text(
            "server.host", flag: "host", default: "127.0.0.1", unit: "address",
            help: "Address to listen on; 0.0.0.0 exposes the hub to the network."
        ) { $0.server.host = $1 },
        .integer(
            "server.port", flag: "port", default: 7681, range: 0...65535, unit: "TCP port",
            help: "Port for HTTP and WebSocket (and their TLS forms); 0 picks a free port."
        ) { $0.server.port = $1 },
        .integer(
            "server.shutdown_grace", flag: "shutdown-grace", default: 5, range: 1...300, unit: "seconds",
            help: "At shutdown, time for work in flight to finish, then again for clients to answer the close."
        ) {
            $0.server.shutdownGraceSeconds = $1
        },
        .integer(
            "server.file_limit", flag: "file-limit", default: 1 << 20, range: 256...(1 << 30),
            unit: "descriptors",
            help: "Raise the soft open-file limit to this (capped by the hard limit, e.g. systemd LimitNOFILE)."
        ) {
            $0.server.fileLimit = UInt64($1)
        },
        .boolean(
            "server.io_uring", flag: "io-uring", default: true,
            help: "Write each loop turn's frames with one io_uring submission (plain sockets; off: a send() each)."
        ) {
            $0.server.ioUring = $1
        },
        .text(
            "server.event_loop", flag: "event-loop", kind: .choice(["libev", "poll"]),
            default: "libev", unit: "backend",
            help: "libev (epoll; needs the libwebsockets libev plugin) or poll (lws' own loop, scans every socket)."
        ) {
            $0.server.eventLoop = $1 == "poll" ? .poll : .libev
        },

        // [tls]
        .text(
            "tls.certificate", flag: "tls-cert", kind: .path, default: nil, example: "/etc/cairn/tls/fullchain.pem",
            unit: "PEM file",
            help: "Certificate chain that turns on TLS (wss:// and https://); needs tls.key."
        ) {
            $0.server.tlsCertificatePath = $1
        },
        .text(
            "tls.key", flag: "tls-key", kind: .path, default: nil, example: "/etc/cairn/tls/privkey.pem",
            unit: "PEM file",
            help: "Private key of tls.certificate; needs tls.certificate."
        ) { $0.server.tlsPrivateKeyPath = $1 },
        .text(
            "tls.min_version", flag: "tls-min-version", kind: .choice(["1.2", "1.3"]), default: "1.2",
            unit: "TLS version", help: "Oldest TLS version a client may use; 1.0 and 1.1 are always refused."
        ) {
            $0.server.tlsMinimumVersion = $1 == "1.3" ? .tls13 : .tls12
        },
        .text(
            "tls.ciphers", flag: "tls-ciphers", default: AppConfiguration().server.tlsCiphers,
            unit: "OpenSSL cipher list",
            help: "TLS 1.2 cipher suites (OpenSSL syntax); TLS 1.3 uses OpenSSL's suites, all modern."
        ) {
            $0.server.tlsCiphers = $1
        },

        // [metrics]
        .text(
            "metrics.token", flag: "metrics-token", default: nil, example: "a-long-random-string", unit: "token",
            help:
                "Bearer token GET /metrics requires; unset, /metrics is served to local peers only unless on loopback."
        ) {
            $0.server.metricsToken = $1.isEmpty ? nil : $1
        }.secret(),

        // [storage]
        .text(
            "storage.directory", flag: "data", kind: .path, default: "./data", unit: "directory",
            help: "Data directory holding cairn.sqlite; created if missing."
        ) { $0.dataDirectory = $1 },
        .text(
            "storage.url", flag: "storage-url", default: nil, defaultNote: "none: SQLite in the data directory",
            example: "postgresql://cairn:secret@10.0.0.5:5432/cairn", unit: "URL",
            help: "PostgreSQL database several hubs share (libpq URI); the data directory then keeps media caches only."
        ) { $0.storage.url = $1 }.secret(),
        .integer(
            "storage.connections", flag: "storage-connections", default: 4, range: 1...64, unit: "connections",
            help: "Connections to PostgreSQL (storage.url) each hub keeps, each on a thread of its own."
        ) { $0.storage.connections = $1 },
        .decimal(
            "storage.statement_timeout", flag: "storage-statement-timeout", default: 10, range: 0...3600,
            unit: "seconds",
            help: "Longest wait on PostgreSQL (storage.url) for a statement or request (0: none); then 'unavailable'."
        ) { $0.storage.statementTimeout = $1 },
        .decimal(
            "storage.snapshot_interval", flag: "snapshot-interval", default: 5, range: 0.1...3600,
            unit: "seconds", help: "Time between position snapshots to SQLite; kill -9 loses at most this much."
        ) {
            $0.hub.snapshotIntervalMs = Int64(($1 * 1000).rounded())
        },
        .boolean(
            "storage.durable_positions", flag: "durable-positions", default: false,
            help: "Answer a pos only once it is written (a snapshot at once, shared by the fixes arriving meanwhile)."
        ) {
            $0.hub.durablePositions = $1
        },

        // [connections]
        .integer(
            "connections.max_message_bytes", flag: "max-message-bytes", default: 65536,
            range: 1024...(16 << 20), unit: "bytes",
            help: "Largest inbound WebSocket message; bigger ones close the connection with 1009."
        ) {
            $0.server.maxMessageBytes = $1
        },
        .integer(
            "connections.max_outbound_bytes", flag: "max-outbound-bytes", default: 1 << 20,
            range: (64 << 10)...(256 << 20), unit: "bytes",
            help: "Bytes waiting to be sent to one client before it is closed with 4001 as too slow."
        ) {
            $0.server.maxOutboundBytes = $1
        },
        .decimal(
            "connections.auth_timeout", flag: "auth-timeout", default: 10, range: 0.1...3600, unit: "seconds",
            help: "Time a connection has to authenticate before it is closed with 4508."
        ) {
            $0.hub.authTimeoutMs = Int64(($1 * 1000).rounded())
        },
        .integer(
            "connections.messages_per_second", flag: "messages-per-second", default: 100, range: 0...1_000_000,
            unit: "requests/s",
            help: "Requests one connection may send per second (0: no limit); over it: rate_limited, then 4429."
        ) {
            $0.hub.messagesPerSecond = $1
        },
        .integer(
            "connections.message_burst", flag: "message-burst", default: 200, range: 1...1_000_000,
            unit: "requests", help: "Requests one connection may send at once above the per-second rate."
        ) {
            $0.hub.messageBurst = $1
        },
        .integer(
            "connections.per_address", flag: "connections-per-address", default: 1000, range: 0...1_000_000,
            unit: "connections",
            help: "Open connections from one address (0: no limit; loopback not counted); more are closed 4429."
        ) {
            $0.hub.connectionsPerAddress = $1
        },
        .integer(
            "connections.http_per_address", flag: "http-connections-per-address", default: 64,
            range: 0...1_000_000, unit: "connections",
            help: "Open plain-HTTP connections from one address (0: no limit; loopback not counted); more get 429."
        ) {
            $0.server.httpConnectionsPerAddress = $1
        },
        .integer(
            "connections.ping_interval", flag: "ping-interval", default: 30, range: 1...3600, unit: "seconds",
            help: "Silence after which the server pings a client."
        ) { $0.server.pingIntervalSeconds = $1 },
        .integer(
            "connections.idle_timeout", flag: "idle-timeout", default: 60, range: 2...7200, unit: "seconds",
            help: "Time without valid traffic (pongs included) before a client is dropped; > ping_interval."
        ) {
            $0.server.idleTimeoutSeconds = $1
        },

        // [positions]
        .decimal(
            "positions.max_speed", flag: "max-speed", default: 300, range: 1...1_000_000, unit: "m/s",
            help: "Implied speed between fixes above which a position is flagged (and not trusted by relics)."
        ) {
            $0.hub.maxSpeed = $1
        },
        .integer(
            "positions.watch_max_age", flag: "watch-max-age", default: 86_400, range: 60...(366 * 86_400),
            unit: "seconds",
            help: "friends.watch leaves out positions older than this (friends who logged out long ago)."
        ) {
            $0.hub.watchMaxAgeMs = Int64($1) * 1000
        },
        .integer(
            "positions.stale_after", flag: "stale-after", default: 300, range: 1...(366 * 86_400),
            unit: "seconds",
            help: "A position shown older than this is marked \"stale\": true (friends.watch, level changes)."
        ) {
            $0.hub.staleAfterMs = Int64($1) * 1000
        },
        .decimal(
            "positions.approximate_hysteresis", flag: "approximate-hysteresis", default: 200, range: 0...2000,
            unit: "m",
            help: "Approximate viewers see a new cell only once the user is this far past the old one's edge."
        ) {
            $0.hub.approximateHysteresis = $1
        },
        .integer(
            "positions.late_fixes_per_user", flag: "late-fixes-per-user", default: 32, range: 0...100_000,
            unit: "fixes",
            help: "Late (older than the latest) fixes kept per user between snapshots; the newest arrivals win."
        ) {
            $0.hub.lateFixesPerUser = $1
        },
        .integer(
            "positions.history_retention", flag: "history-retention", default: 7 * 86_400,
            range: 0...(10 * 366 * 86_400), unit: "seconds",
            help: "Late fixes are kept as position history this long (by their ts), then purged; 0 keeps none."
        ) {
            $0.hub.positionHistoryRetentionMs = Int64($1) * 1000
        },

        // [ingest]
        .boolean(
            "ingest.filter_invalid", flag: "ingest-filter-invalid", default: true,
            help: "Drop trackers' fixes the device marks as not valid (no satellite fix); answered 200, not stored."
        ) {
            $0.hub.ingestFilters.invalid = $1
        },
        .boolean(
            "ingest.filter_zero", flag: "ingest-filter-zero", default: true,
            help: "Drop trackers' fixes at exactly (0, 0), what a receiver without a fix often sends."
        ) {
            $0.hub.ingestFilters.zero = $1
        },
        .integer(
            "ingest.filter_future", flag: "ingest-filter-future", default: 300, range: 1...(366 * 86_400),
            unit: "seconds", help: "Drop trackers' fixes timed further than this ahead of the hub's clock."
        ) {
            $0.hub.ingestFilters.futureMs = Int64($1) * 1000
        },
        .boolean(
            "ingest.filter_duplicate", flag: "ingest-filter-duplicate", default: true,
            help: "Drop a tracker's fix timed exactly like the last one accepted (an app resending it)."
        ) {
            $0.hub.ingestFilters.duplicate = $1
        },
        .decimal(
            "ingest.filter_accuracy", flag: "ingest-filter-accuracy", default: 0, range: 0...1_000_000, unit: "m",
            help: "Drop trackers' fixes whose accuracy radius is larger than this (0: off)."
        ) {
            $0.hub.ingestFilters.maxAccuracy = $1
        },
        .decimal(
            "ingest.filter_max_speed", flag: "ingest-filter-max-speed", default: 350, range: 0...1_000_000,
            unit: "m/s", help: "Drop a tracker's fix implying more than this speed from the last accepted (0: off)."
        ) {
            $0.hub.ingestFilters.maxSpeed = $1
        },
        .integer(
            "ingest.filter_reanchor_after", flag: "ingest-filter-reanchor-after", default: 3, range: 0...1_000_000,
            unit: "fixes", help: "After this many fixes in a row dropped for speed, accept the next as is (0: never)."
        ) {
            $0.hub.ingestFilters.reanchorAfter = $1
        },
        .integer(
            "ingest.filter_reanchor_gap", flag: "ingest-filter-reanchor-gap", default: 1800,
            range: 0...(366 * 86_400), unit: "seconds",
            help: "A fix this long after the last accepted one skips the speed filter (0: never)."
        ) {
            $0.hub.ingestFilters.reanchorGapMs = Int64($1) * 1000
        },
        .decimal(
            "ingest.filter_min_period", flag: "ingest-filter-min-period", default: 0, range: 0...86_400,
            unit: "seconds", help: "Drop a tracker's fix sooner than this after the last accepted one (0: off)."
        ) {
            $0.hub.ingestFilters.minPeriodMs = Int64(($1 * 1000).rounded())
        },
        .decimal(
            "ingest.requests_per_second", flag: "ingest-requests-per-second", default: 2, range: 0...10_000,
            unit: "requests/s",
            help: "Requests one tracker may send per second, sustained (0: no limit); over it and the burst: 429."
        ) {
            $0.hub.ingestRequestsPerSecond = $1
        },
        .integer(
            "ingest.request_burst", flag: "ingest-request-burst", default: 20, range: 1...100_000, unit: "requests",
            help: "Requests one tracker may send at once above ingest.requests_per_second."
        ) {
            $0.hub.ingestRequestBurst = $1
        },

        // [accounts]
        .integer(
            "accounts.friend_requests_per_hour", flag: "friend-requests-per-hour", default: 50,
            range: 1...100_000, unit: "requests",
            help: "New friend requests one user may send per hour; more are refused with rate_limited."
        ) {
            $0.hub.friendRequestsPerHour = $1
        },
        .integer(
            "accounts.scrypt_cost", flag: "scrypt-cost", default: 15, range: 10...20, unit: "log2(N)",
            help: "scrypt cost of new password hashes (r = 8, p = 1); existing hashes keep theirs."
        ) {
            $0.scrypt = ScryptParameters(n: 1 << UInt64($1), r: 8, p: 1)
        },
        .integer(
            "accounts.hash_workers", flag: "hash-workers", default: ProcessInfo.processInfo.activeProcessorCount,
            defaultNote: "number of cores", range: 1...256, unit: "threads",
            help: "Threads that hash and check passwords."
        ) { $0.hashWorkers = $1 },
        .integer(
            "accounts.token_lifetime", flag: "token-lifetime", default: nil, example: 30 * 86_400,
            range: 60...(10 * 366 * 86_400), unit: "seconds",
            help: "Age at which a session token stops working (unauthorized); unset: tokens never expire."
        ) {
            $0.accounts.tokenLifetimeMs = Int64($1) * 1000
        },
        .integer(
            "accounts.guest_expiry", flag: "guest-expiry", default: 30 * 86_400, range: 0...(10 * 366 * 86_400),
            unit: "seconds",
            help: "A guest not connected this long is deleted with all its data (checked hourly); 0: never."
        ) {
            $0.hub.guestExpiryMs = Int64($1) * 1000
        },
        .integer(
            "accounts.password_checks_per_minute", flag: "password-checks-per-minute", default: 30,
            range: 0...1_000_000, unit: "checks",
            help: "scrypt hashes and checks one connection may start per minute (bursts of 10); 0: no limit."
        ) {
            $0.hub.passwordChecksPerMinute = $1
        },
        .integer(
            "accounts.signups_per_address", flag: "signups-per-address", default: 20, range: 0...1_000_000,
            unit: "accounts per hour",
            help: "New accounts (register, guest) per source address per hour; 0: no limit (behind a proxy)."
        ) {
            $0.hub.signupsPerAddress = $1
        },

        // [media]
        .integer(
            "media.max_bytes", flag: "media-max-bytes", default: 20 << 20, range: 1024...(1 << 30), unit: "bytes",
            help: "Largest media upload, 413 if bigger; the default of the live admin setting max_upload_bytes."
        ) { $0.media.maxBytes = $1 },
        .integer(
            "media.quota_per_user", flag: "media-quota-per-user", default: 1 << 30, range: 0...(1 << 50),
            unit: "bytes", help: "Bytes of media one user may have stored in all (0: no quota); more is refused 403."
        ) {
            $0.media.quotaBytes = $1
        },
        .integer(
            "media.body_timeout", flag: "media-body-timeout", default: 120, range: 1...3600, unit: "seconds",
            help: "Time an admitted upload's body may take to arrive in full; a slower one gets 408."
        ) {
            $0.server.bodyTimeoutSeconds = $1
        },
        .integer(
            "media.url_lifetime", flag: "media-url-lifetime", default: 600, range: 10...86_400, unit: "seconds",
            help: "How long a signed media URL handed out by relic.open works."
        ) {
            $0.media.urlLifetimeMs = Int64($1) * 1000
        },
        .integer(
            "media.gc_grace", flag: "media-gc-grace", default: 3600, range: 60...(30 * 86_400), unit: "seconds",
            help: "An upload no relic uses is deleted once it is this old (time to attach it to a relic)."
        ) {
            $0.media.garbageGraceMs = Int64($1) * 1000
        },
        .integer(
            "media.gc_period", flag: "media-gc-period", default: 600, range: 10...86_400, unit: "seconds",
            help: "How often unused uploads are looked for."
        ) { $0.media.garbagePeriodMs = Int64($1) * 1000 },

        // [relics]
        .integer(
            "relics.retention", flag: "relic-retention", default: 30 * 86_400, range: 0...(10 * 366 * 86_400),
            unit: "seconds",
            help: "Expired relics stay stored (listed by relic.mine) this long, then are purged with their media."
        ) {
            $0.hub.relicRetentionMs = Int64($1) * 1000
        },
        .integer(
            "relics.per_user", flag: "relics-per-user", default: 1000, range: 1...1_000_000, unit: "relics",
            help: "Live relics one user may have at once; more are refused with rate_limited."
        ) {
            $0.hub.relicsPerUser = $1
        },
        .integer(
            "relics.per_area", flag: "relics-per-area", default: 50, range: 1...1_000_000, unit: "relics",
            help: "Live relics one user may have within 1 km of a new one; more are refused with rate_limited."
        ) {
            $0.hub.relicsPerArea = $1
        },
        .integer(
            "relics.guest_per_user", flag: "relics-guest-per-user", default: 10, range: 0...1_000_000,
            unit: "relics", help: "Live relics a guest account may have at once."
        ) { $0.hub.relicsPerGuest = $1 },
        .integer(
            "relics.guest_per_area", flag: "relics-guest-per-area", default: 3, range: 0...1_000_000,
            unit: "relics", help: "Live relics a guest account may have within 1 km of a new one."
        ) {
            $0.hub.relicsPerAreaGuest = $1
        },
        .integer(
            "relics.appear_per_move", flag: "relic-appear-per-move", default: 20, range: 1...100_000,
            unit: "events",
            help: "relic.appear events one move sends (the nearest relics); relic.nearby lists the rest."
        ) {
            $0.hub.relicAppearPerMove = $1
        },

        // [items]
        .integer(
            "items.buckets_per_user", flag: "buckets-per-user", default: 200, range: 1...1_000_000, unit: "buckets",
            help: "Buckets one user may own (created or co-owned); bucket.create beyond it is refused with bad_request."
        ) { $0.hub.bucketsPerUser = $1 },
        .integer(
            "items.per_bucket", flag: "items-per-bucket", default: 1_000, range: 1...1_000_000, unit: "items",
            help: "Items one bucket may hold; item.create beyond it is refused with bad_request."
        ) { $0.hub.itemsPerBucket = $1 },
        .decimal(
            "items.walking_distance", flag: "items-walking-distance", default: 1_500, range: 0...1_000_000,
            unit: "metres", help: "item.locate suggests walking up to this distance, public transport beyond it."
        ) { $0.hub.walkingDistance = $1 },
        .decimal(
            "items.left_behind_distance", flag: "left-behind-distance", default: 150, range: 10...100_000,
            unit: "metres", help: "How far an owner must be from an item with alert on for it to be left behind."
        ) { $0.hub.leftBehindDistance = $1 },
        .integer(
            "items.left_behind_grace", flag: "left-behind-grace", default: 60, range: 0...86_400, unit: "seconds",
            help: "How long the owner must stay that far before item.left_behind goes out."
        ) { $0.hub.leftBehindGraceMs = Int64($1) * 1000 },
        .integer(
            "items.safe_zones_per_user", flag: "safe-zones-per-user", default: 20, range: 0...10_000,
            unit: "zones", help: "Safe zones one user may have; safe_zone.add beyond it is refused with bad_request."
        ) { $0.hub.safeZonesPerUser = $1 },

        // [pictures]
        .integer(
            "pictures.report_threshold", flag: "picture-report-threshold", default: 3, range: 1...1_000,
            unit: "reporters",
            help: "Distinct non-guest users whose reports hide a picture from everyone (its reporters at once)."
        ) { $0.hub.pictureSettings.reportThreshold = $1 },
        .decimal(
            "pictures.max_nearby_radius", flag: "picture-max-nearby-radius", default: 5_000, range: 10...100_000,
            unit: "metres", help: "Largest radius picture.nearby and pictures.watch accept."
        ) { $0.hub.pictureSettings.maxNearbyRadius = $1 },
        .boolean(
            "pictures.guests_may_post", flag: "picture-guests-may-post", default: false,
            help: "Whether guest accounts may post pictures and create events (they may always browse and like)."
        ) { $0.hub.pictureSettings.guestsMayPost = $1 },
        .integer(
            "pictures.posts_per_hour", flag: "picture-posts-per-hour", default: 30, range: 1...100_000,
            unit: "pictures", help: "Pictures one user may post per hour; more are refused with rate_limited."
        ) { $0.hub.pictureSettings.postsPerHour = $1 },
        .integer(
            "pictures.caption_bytes", flag: "picture-caption-bytes", default: 500, range: 1...10_000, unit: "bytes",
            help: "Longest picture caption (and report text), in bytes of UTF-8; longer is refused with too_large."
        ) { $0.hub.pictureCaptionBytes = $1 },
        .integer(
            "pictures.page_size", flag: "picture-page-size", default: 50, range: 1...500, unit: "pictures",
            help: "Pictures per page of picture.nearby and event.pictures, and most results of picture.search."
        ) { $0.hub.picturePageSize = $1 },

        // [log]
        .text(
            "log.level", flag: "log-level", kind: .choice(Logger.Level.allCases.map(\.rawValue)), default: "info",
            unit: "level", help: "Least severe log line written to standard error."
        ) {
            $0.logLevel = Logger.Level(rawValue: $1) ?? .info
        },

        // [cluster]
        .text(
            "cluster.redis_url", flag: "redis-url", default: nil, defaultNote: "none: a single node",
            example: "redis://127.0.0.1:6379", unit: "URL",
            help: "Redis shared by several hubs (IP address, not a name); presence is then shared across them."
        ) { $0.cluster.redisURL = $1 },
        .text(
            "cluster.node", flag: "cluster-node", default: nil, defaultNote: "hostname-pid", example: "hub-a",
            unit: "name", help: "This node's name, unique among the nodes sharing the Redis."
        ) { $0.cluster.node = $1 },
        .text(
            "cluster.prefix", flag: "cluster-prefix", default: "cairn", unit: "prefix",
            help: "Prefix of the nodes' Redis keys and channels (one Redis may serve several clusters)."
        ) { $0.cluster.prefix = $1 },
        .integer(
            "cluster.presence_refresh", flag: "cluster-presence-refresh", default: 5, range: 1...300, unit: "seconds",
            help: "How often a node re-adds its online users in Redis; they expire after three times this."
        ) { $0.cluster.presenceRefreshSeconds = $1 },
        .integer(
            "cluster.ack_timeout", flag: "cluster-ack-timeout", default: 2000, range: 100...60_000,
            unit: "milliseconds",
            help: "How long a hide or unfriend waits for other nodes' acks before it waits only for those still online."
        ) { $0.cluster.ackTimeoutMs = $1 },
        .text(
            "cluster.key", flag: "cluster-key", default: nil, defaultNote: "none: kept in storage.url's database",
            example: "replace-with-output-of-openssl-rand-hex-32", unit: "key",
            help: "Secret every node signs its Redis messages with (32+ characters); needed without storage.url."
        ) { $0.cluster.key = $1 }.secret(),

        // [web]
        .text(
            "web.root", flag: "web-root", kind: .path, default: nil,
            defaultNote: "web/ found next to the binary", example: "/usr/local/share/cairn/web", unit: "directory",
            help: "The web app's files, served on /; unset: the first web/ with an index.html up from the binary."
        ) { $0.web.root = $1 },
        .text(
            "web.client_root", flag: "web-client-root", kind: .path, default: nil,
            defaultNote: "clients/js beside the web root", example: "/usr/local/share/cairn/clients/js",
            unit: "directory",
            help: "Directory of cairn.js and cairn.d.ts, served as /cairn.js and /cairn.d.ts."
        ) { $0.web.clientRoot = $1 },
        .text(
            "web.tiles", flag: "web-tiles", default: nil, defaultNote: "none: the offline basemap only",
            example: "https://tile.openstreetmap.org/{z}/{x}/{y}.png", unit: "URL template",
            help: "Map tiles the web app loads from another server; its host is added to the page's img-src."
        ) { $0.web.tiles = $1 },
        .text(
            "web.tiles_attribution", flag: "web-tiles-attribution", default: nil,
            example: "© OpenStreetMap contributors", unit: "text",
            help: "Attribution the map shows for web.tiles (the tile provider's terms usually require one)."
        ) { $0.web.tilesAttribution = $1 },
    ]

    /// Rules that involve more than one option, checked after every source is merged. Each names its keys.
    public static let checks: [ConfigurationCheck] = [
        ConfigurationCheck(keys: ["connections.idle_timeout", "connections.ping_interval"]) { values in
            guard case .integer(let idle)? = values["connections.idle_timeout"],
                case .integer(let ping)? = values["connections.ping_interval"], idle <= ping
            else { return nil }
            return "connections.idle_timeout (\(idle) s) must be greater than connections.ping_interval (\(ping) s)"
        },
        ConfigurationCheck(keys: ["tls.certificate", "tls.key"]) { values in
            switch (values["tls.certificate"], values["tls.key"]) {
            case (.some, .none): "tls.certificate is set but tls.key is not: TLS needs both (or neither)"
            case (.none, .some): "tls.key is set but tls.certificate is not: TLS needs both (or neither)"
            default: nil
            }
        },
        ConfigurationCheck(keys: ["tls.certificate"]) { values in
            guard case .string(let path)? = values["tls.certificate"] else { return nil }
            return PEMFile.problem(at: path, expecting: "CERTIFICATE", what: "tls.certificate")
        },
        ConfigurationCheck(keys: ["tls.key"]) { values in
            guard case .string(let path)? = values["tls.key"] else { return nil }
            return PEMFile.problem(at: path, expecting: "PRIVATE KEY", what: "tls.key")
        },
        ConfigurationCheck(keys: ["storage.url"]) { values in
            guard case .string(let url)? = values["storage.url"] else { return nil }
            return StorageConfiguration.problem(url: url)
        },
        ConfigurationCheck(keys: ["cluster.redis_url"]) { values in
            guard case .string(let url)? = values["cluster.redis_url"] else { return nil }
            return ClusterConfiguration.problem(redisURL: url)
        },
        ConfigurationCheck(keys: ["cluster.node"]) { values in
            guard case .string(let name)? = values["cluster.node"] else { return nil }
            return ClusterConfiguration.problem(name: name, key: "cluster.node")
        },
        ConfigurationCheck(keys: ["cluster.key"]) { values in
            guard case .string(let key)? = values["cluster.key"] else { return nil }
            return ClusterConfiguration.problem(key: key)
        },
        ConfigurationCheck(keys: ["cluster.redis_url", "storage.url", "cluster.key"]) { values in
            guard values["cluster.redis_url"] != nil, values["storage.url"] == nil, values["cluster.key"] == nil else {
                return nil
            }
            return ClusterConfiguration.missingKey
        },
        ConfigurationCheck(keys: ["cluster.prefix"]) { values in
            guard case .string(let name)? = values["cluster.prefix"] else { return nil }
            return ClusterConfiguration.problem(name: name, key: "cluster.prefix")
        },
        ConfigurationCheck(keys: ["web.tiles"]) { values in
            guard case .string(let tiles)? = values["web.tiles"] else { return nil }
            return WebConfiguration.problem(tiles: tiles)
        },
        ConfigurationCheck(keys: ["web.root"]) { values in
            guard case .string(let path)? = values["web.root"] else { return nil }
            return WebConfiguration.problem(root: path, key: "web.root")
        },
        ConfigurationCheck(keys: ["web.client_root"]) { values in
            guard case .string(let path)? = values["web.client_root"] else { return nil }
            return WebConfiguration.problem(root: path, key: "web.client_root")
        },
        ConfigurationCheck(keys: ["cluster.redis_url", "server.event_loop"]) { values in
            guard values["cluster.redis_url"] != nil, case .string("poll")? = values["server.event_loop"] else {
                return nil
            }
            return "cluster.redis_url needs server.event_loop = libev (Redis runs on the hub's libev loop)"
        },
    ]

    /// The option with file key `key`.
    public static func option(key: String) -> ConfigurationOption? { all.first { $0.key == key } }
}

/// A rule over several options, e.g. "idle_timeout > ping_interval".
public struct ConfigurationCheck: Sendable {
    /// The keys the rule reads (for documentation and tests).
    public let keys: [String]
    /// Returns a message naming the keys and values when the rule is broken, nil when it holds.
    public let problem: @Sendable ([String: ConfigurationValue]) -> String?

    /// A rule over `keys`.
    public init(keys: [String], problem: @escaping @Sendable ([String: ConfigurationValue]) -> String?) {
        self.keys = keys
        self.problem = problem
    }
}

/// Early, readable checks of the TLS files, so a wrong path is named at startup rather than surfacing as
/// libwebsockets failing to create its context.
enum PEMFile {
    static func problem(at path: String, expecting label: String, what: String) -> String? {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
            return "\(what) file '\(path)' does not exist"
        }
        guard !isDirectory.boolValue else { return "\(what) '\(path)' is a directory, not a PEM file" }
        guard let data = FileManager.default.contents(atPath: path) else {
            return "\(what) file '\(path)' cannot be read (permissions?)"
        }
        let text = String(decoding: data.prefix(1 << 20), as: UTF8.self)
        guard text.contains("-----BEGIN "), text.contains(label + "-----") else {
            return "\(what) file '\(path)' holds no PEM '\(label)' block"
        }
        return nil
    }
}
