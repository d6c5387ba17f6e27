import CairnAdmin
// The running hub, assembled: the SQLite store, the account service with its hashing pool, the hub, the media
// feature with its HTTP endpoint and periodic collection, and the libwebsockets transport, wired in the one place
// that knows all of them. The `cairn` command and the integration tests both start Cairn through this type, so
// what the tests exercise is what ships. The transport knows no hub: it drives the hub through the protocol
// layer's `Router` and reports into the hub's telemetry through `TelemetryObserver`.
import CairnCluster
public import CairnCore
public import CairnCrypto
import CairnHub
public import CairnLoop
public import CairnMedia
import CairnMetrics
import CairnNodes
import CairnPlaces
import CairnPostgres
import CairnProtocol
import CairnRelics
public import CairnServer
public import CairnSessions
import CairnSocial
import CairnStore
import CairnTrackers
public import Logging
import Synchronization

/// Everything needed to start a hub.
public struct AppConfiguration: Sendable {
    /// Transport settings.
    public var server = ServerConfiguration()
    /// Request-handling settings.
    public var hub = HubConfiguration()
    /// Account limits.
    public var accounts = AccountRules()
    /// Directory holding the SQLite database (created if missing).
    public var dataDirectory = "./data"
    /// scrypt parameters for new password hashes.
    public var scrypt = ScryptParameters.standard
    /// Threads that run password hashing.
    public var hashWorkers = 2
    /// Media upload, signed-URL and garbage-collection settings.
    public var media = MediaConfiguration()
    /// Least severe log level the process writes (the command bootstraps logging with it).
    public var logLevel: Logger.Level = .info
    /// Several nodes sharing presence through Redis; a single node by default.
    public var cluster = ClusterConfiguration()
    /// Where durable state lives: SQLite in the data directory by default, or a PostgreSQL database nodes share.
    public var storage = StorageConfiguration()
    /// The web app served on `/`: its files, the client library, vendored browser libraries, tiles.
    public var web = WebConfiguration()

    /// The defaults.
    public init() {}
}

/// A hub process's worth of parts, ready to start.
public final class CairnApp: Sendable {
    /// The configuration it was made with.
    public let configuration: AppConfiguration
    /// The store (exposed for maintenance commands and tests).
    public let store: any HubStorage
    /// Issues and checks signed media URLs (secret in `<data>/media.key`); hand it to whatever gives out media.
    public let mediaLinks: MediaLinks
    private let server: TransportServer
    private let media: MediaLibrary
    private let collector = Mutex<MediaCollector?>(nil)
    private let logger: Logger
    /// Held from before the store opens until it is closed: one hub per data directory.
    private let lock: DataDirectoryLock
    /// Reads the places again from the store, on the loop; safe from any thread (SIGHUP).
    public let reloadPlaces: @Sendable () -> Void
    /// Why the hub stopped by itself (another running hub uses its `cluster.node`); nil otherwise.
    private let refusal = Mutex<String?>(nil)

    /// Locks the data directory, opens the store and builds the hub; nothing listens until `start`. Throws
    /// `DataDirectoryLockError.held` when another process (a hub, `cairn seed`) holds the directory.
    public init(
        configuration: AppConfiguration, random: any RandomSource = SecureRandom(),
        clock: any Clock = SystemClock(), logger: Logger = Logger(label: "cairn")
    ) throws {
        self.configuration = configuration
        self.logger = logger
        let clusterEndpoint = try Self.clusterEndpoint(configuration)  // refused before anything is opened
        if clusterEndpoint != nil && configuration.cluster.key == nil && configuration.storage.url == nil {
            throw ClusterStartError(ClusterConfiguration.missingKey)
        }
        lock = try DataDirectoryLock(directory: configuration.dataDirectory, purpose: "a hub")
        let store: any HubStorage
        let secret: [UInt8]
        var clusterKey = configuration.cluster.key.map { Array($0.utf8) }
        if let url = configuration.storage.url {
            // Several nodes share the database; the data directory keeps this node's media copies, and the key that
            // signs media URLs is shared, so a URL from one node is good on every other.
            if let problem = StorageConfiguration.problem(url: url) { throw StorageStartError(problem) }
            let shared = try PostgresStore(
                url: url, connections: configuration.storage.connections,
                mediaCache: configuration.dataDirectory + "/media-cache",
                timeouts: PostgresTimeouts(statement: configuration.storage.statementTimeout))
            secret = try shared.sharedSecret(name: "media", length: MediaSecret.length, random: random)
            // Likewise the key the nodes sign their Redis messages with, unless the operator gave one.
            if clusterEndpoint != nil && clusterKey == nil {
                clusterKey = try shared.sharedSecret(name: "cluster", length: 32, random: random)
            }
            store = shared
        } else {
            store = try SQLiteStore(directory: configuration.dataDirectory)
            secret = try MediaSecret.loadOrCreate(directory: configuration.dataDirectory, random: random)
        }
        self.store = store
        mediaLinks = MediaLinks(secret: secret, lifetimeMs: configuration.media.urlLifetimeMs)
        let hasher = PasswordHasher(
            parameters: configuration.scrypt, workers: configuration.hashWorkers, random: random)
        let accounts = Accounts(
            store: store, hasher: hasher, random: random, clock: clock, rules: configuration.accounts)
        let loop = ServiceLoop()
        let hub = Hub(
            accounts: accounts, stores: HubStores(all: store), scheduler: loop.scheduler, clock: clock,
            random: random, configuration: configuration.hub, confinement: loop.confinement)
        let snapshot = try store.loadSocial()
        hub.restore(snapshot)
        let relics = try store.loadLiveRelics(now: clock.now())
        hub.restore(relics: relics)
        let items = try store.loadTrackerPositions()
        hub.trackers.restore(items)
        hub.trackers.restore(alerts: try store.loadItemAlerts())
        hub.safeZones.restore(try store.loadSafeZones())
        let places = try store.loadPlaceSummariesNow()
        // SIGHUP (and `places.reload`) read the places again, e.g. after `cairn places import`; on the loop.
        reloadPlaces = { [scheduler = loop.scheduler, logger] in
            scheduler.execute {
                hub.places.reloadFromStore { result in
                    switch result {
                    case .success(let count): logger.info("places reloaded: \(count) place(s)")
                    case .failure(let error): logger.error("reloading places failed: \(error.message)")
                    }
                }
            }
        }
        hub.mediaSigner = mediaLinks
        let friendships = snapshot.friendships.count
        let positions = snapshot.positions.count
        let restored = "\(friendships) friendship(s), \(positions) position(s), \(relics.count) relic(s)"
        logger.info("restored \(restored), \(items.count) item position(s), \(places.count) place(s)")
        media = MediaLibrary(
            store: store, accounts: accounts, links: mediaLinks, clock: clock,
            rules: MediaRules(
                maxBytes: configuration.media.maxBytes,
                garbageGraceMs: configuration.media.garbageGraceMs,
                quotaBytes: configuration.media.quotaBytes > 0
                    ? configuration.media.quotaBytes : nil))
        // Live settings: each feature registers its own; admins' stored overrides replace the configured defaults.
        // Daily figures: each feature adds its provider.
        media.register(in: hub.settings)
        hub.settings.restore(try store.loadAdminSettingsNow())
        hub.statistics.add(store.accountDailyStats)
        hub.statistics.add(store.pictureDailyStats)
        let router = Router(hub: hub)
        // After the router, which gives the places their wire form: the catalog is built once, with it.
        hub.places.restore(places)
        let web = configuration.web.staticFiles()
        let served = web.found.isEmpty ? "no files found (set web.root)" : web.found.joined(separator: ", ")
        logger.info("web app: \(served)")
        server = TransportServer(
            configuration: configuration.server, loop: loop, handler: router,
            observer: TelemetryObserver(hub.telemetry),
            services: [
                // The upload limit is live (`max_upload_bytes`): the endpoint refuses a declared length over it from
                // the headers, and the mount's own limit is the setting's ceiling.
                HTTPMount(
                    prefix: MediaLinks.pathPrefix, service: MediaEndpoint(library: media),
                    maxBodyBytes: MediaLibrary.maxBytesCeiling),
                HTTPMount(
                    prefix: AdminStatsEndpoint.pathPrefix, service: AdminStatsEndpoint(statistics: hub.statistics),
                    maxBodyBytes: 0),
                HTTPMount(prefix: Placeholders.pathPrefix, service: PlaceholderEndpoint(), maxBodyBytes: 0),
                HTTPMount(
                    prefix: OsmAndEndpoint.path, service: OsmAndEndpoint(ingest: hub.trackerIngest),
                    maxBodyBytes: OsmAndEndpoint.maxBodyBytes, pool: .ingest),
                HTTPMount(
                    prefix: OwnTracksEndpoint.path,
                    service: OwnTracksEndpoint(ingest: hub.trackerIngest, lookup: hub.trackerLookup),
                    maxBodyBytes: OwnTracksEndpoint.maxBodyBytes, pool: .ingest),
                HTTPMount(
                    prefix: OverlandEndpoint.path,
                    service: OverlandEndpoint(ingest: hub.trackerIngest, lookup: hub.trackerLookup),
                    maxBodyBytes: OverlandEndpoint.maxBodyBytes, pool: .ingest),
                // Last: every other path but the transport's own routes. It takes no body (405 before one is read).
                HTTPMount(prefix: "/", service: web.service, maxBodyBytes: 64 * 1024),
            ])
        // The stats channel, published on each tick, reads what only the transport knows.
        router.transportGauges = { [unowned server = self.server] in TransportGauges(server.transportGauges()) }
        // /metrics: the exporter hears every latency sample and renders a fresh reading per scrape, on the loop.
        let exporter = PrometheusExporter()
        hub.telemetry.sink = exporter
        hub.places.nearestTimed = { [exporter] in exporter.recordPlacesNearest(nanoseconds: $0) }
        hub.relicCount = { [unowned hub] in hub.liveRelics }
        server.metricsRenderer = { [unowned server = self.server, unowned hub] in
            exporter.render(hub.statsSnapshot(transport: TransportGauges(server.transportGauges())))
        }
        if let clusterEndpoint {
            guard let clusterKey else { throw ClusterStartError(ClusterConfiguration.missingKey) }
            let shared = configuration.storage.url != nil
            if !shared {
                let advice =
                    "cluster.redis_url without storage.url: each node keeps its own accounts, friendships and rules; "
                    + "run several nodes on one PostgreSQL (storage.url), see docs/OPERATIONS.md"
                logger.warning("\(advice)")
            }
            Self.attachCluster(
                configuration.cluster, endpoint: clusterEndpoint, key: clusterKey, sharedStore: shared, hub: hub,
                router: router, server: server, logger: logger
            ) { [weak self] reason in
                self?.refusal.withLock { $0 = reason }
                self?.requestShutdown()
            }
        }
    }

    /// The Redis of a node among several; nil for a single node. Throws when the cluster settings are unusable.
    private static func clusterEndpoint(_ configuration: AppConfiguration) throws(ClusterStartError) -> RedisEndpoint? {
        guard let url = configuration.cluster.redisURL else { return nil }
        if let problem = configuration.cluster.problem { throw ClusterStartError(problem) }
        guard configuration.server.eventLoop == .libev else {
            throw ClusterStartError("cluster.redis_url needs server.event_loop = libev (Redis runs on that loop)")
        }
        do { return try RedisEndpoint(url: url) } catch { throw ClusterStartError(error.message) }
    }

    /// Several nodes: a `ClusterNode` (CairnNodes) is built on the service thread once the libev loop exists and
    /// stopped there before the loop goes. A single node attaches nothing.
    private static func attachCluster(
        _ configuration: ClusterConfiguration, endpoint: RedisEndpoint, key: [UInt8], sharedStore: Bool, hub: Hub,
        router: Router, server: TransportServer, logger: Logger, nameTaken: @escaping @Sendable (String) -> Void
    ) {
        nonisolated(unsafe) var node: ClusterNode?  // touched only on the service thread
        server.loopStarted = { loop in
            let settings = ClusterNode.Settings(
                node: configuration.nodeName, prefix: configuration.prefix,
                presenceRefreshSeconds: configuration.presenceRefreshSeconds, ackTimeoutMs: configuration.ackTimeoutMs,
                applyDelayMs: configuration.applyDelayMs)
            node = ClusterNode(
                configuration: settings, endpoint: endpoint, key: key, sharedStore: sharedStore, hub: hub,
                router: router, loop: loop, logger: logger)
            node?.nameTaken = nameTaken
        }
        server.loopStopping = {
            node?.stop()
            node = nil
        }
    }

    /// The thread that owns live state, claimed by the transport's service thread while it serves; hand it to
    /// whatever must assert that it runs on the loop.
    public var confinement: LoopConfinement { server.confinement }

    /// Starts listening; returns the bound port.
    public func start() throws -> Int {
        let port = try server.start()
        let periodic = MediaCollector(library: media, periodMs: configuration.media.garbagePeriodMs, logger: logger)
        collector.withLock { $0 = periodic }
        logger.info("listening on \(configuration.server.host):\(port), data in \(store.location)")
        return port
    }

    /// Begins a graceful shutdown; safe from any thread (signal handlers included).
    public func requestShutdown() { server.requestShutdown() }

    /// Waits for the transport to stop, then commits and closes the store. Throws `ClusterStartError` when the
    /// hub stopped by itself because another running hub uses its `cluster.node` (after closing everything).
    public func waitUntilStopped() throws {
        server.waitUntilStopped()
        collector.withLock { $0 }?.stop()
        defer { lock.release() }
        try store.closeStorage()
        if let reason = refusal.withLock({ $0 }) { throw ClusterStartError(reason) }
        logger.info("stopped cleanly")
    }

    /// Shuts down and waits.
    public func stop() throws {
        requestShutdown()
        try waitUntilStopped()
    }
}

/// Why the storage settings cannot be used (also refused by `cairn config check`).
public struct StorageStartError: Error, CustomStringConvertible {
    /// What is wrong.
    public let description: String
    init(_ description: String) { self.description = description }
}

/// Why the cluster settings cannot be used (also refused by `cairn config check`).
public struct ClusterStartError: Error, CustomStringConvertible {
    /// What is wrong.
    public let description: String
    init(_ description: String) { self.description = description }
}

extension TransportGauges {
    /// The transport's gauges as the domain's stats reading wants them.
    init(_ gauges: ServerGauges) {
        self.init(
            pendingCoalesced: gauges.pendingCoalesced, pendingOutboundBytes: gauges.pendingOutboundBytes,
            residentBytes: gauges.residentBytes, uptimeSeconds: gauges.uptimeSeconds)
    }
}
