// The running hub, assembled: the SQLite store, the account service with its hashing pool, the hub, and the
// libwebsockets transport, wired in the one place that knows all of them. The `cairn` command and the integration
// tests both start Cairn through this type, so what the tests exercise is what ships.
import CairnCrypto
import CairnDomain
import CairnMetrics
import CairnServer
import CairnStore
import Logging

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

    /// The defaults.
    public init() {}
}

/// A hub process's worth of parts, ready to start.
public final class CairnApp: Sendable {
    /// The configuration it was made with.
    public let configuration: AppConfiguration
    /// The store (exposed for maintenance commands and tests).
    public let store: SQLiteStore
    private let server: WebSocketServer
    private let logger: Logger

    /// Opens the store and builds the hub; nothing listens until `start`.
    public init(configuration: AppConfiguration, random: any RandomSource = SecureRandom(),
                clock: any Clock = SystemClock(), logger: Logger = Logger(label: "cairn")) throws {
        self.configuration = configuration
        self.logger = logger
        store = try SQLiteStore(directory: configuration.dataDirectory)
        let hasher = PasswordHasher(parameters: configuration.scrypt, workers: configuration.hashWorkers, random: random)
        let accounts = Accounts(store: store, hasher: hasher, random: random, clock: clock, rules: configuration.accounts)
        let scheduler = WebSocketServer.makeScheduler()
        let hub = Hub(accounts: accounts, social: store, scheduler: scheduler, clock: clock,
                      configuration: configuration.hub, roles: store)
        let snapshot = try store.loadSocial()
        hub.restore(snapshot)
        logger.info("restored \(snapshot.friendships.count) friendship(s), \(snapshot.positions.count) position(s)")
        server = WebSocketServer(configuration: configuration.server, hub: hub, scheduler: scheduler)
        // /metrics: the exporter hears every latency sample and renders a fresh reading per scrape, on the loop.
        let exporter = PrometheusExporter()
        hub.telemetry.sink = exporter
        server.metricsRenderer = { [unowned server = self.server, unowned hub] in
            exporter.render(hub.statsSnapshot(transport: server.transportGauges()))
        }
    }

    /// Starts listening; returns the bound port.
    public func start() throws -> Int {
        let port = try server.start()
        logger.info("listening on \(configuration.server.host):\(port), data in \(store.path)")
        return port
    }

    /// Begins a graceful shutdown; safe from any thread (signal handlers included).
    public func requestShutdown() { server.requestShutdown() }

    /// Waits for the transport to stop, then commits and closes the store.
    public func waitUntilStopped() throws {
        server.waitUntilStopped()
        try store.close()
        logger.info("stopped cleanly")
    }

    /// Shuts down and waits.
    public func stop() throws {
        requestShutdown()
        try waitUntilStopped()
    }
}
