// `cairn serve`: resolves options (flag, then environment variable, then default), starts the hub, prints the
// address it listens on, and shuts down gracefully on SIGINT/SIGTERM (clients get 1001, pending writes are
// committed, the process exits 0). Signals are taken synchronously by a sigwait thread, not by handlers.
import ArgumentParser
import CairnApp
import CairnCrypto
import Dispatch
import Foundation
import Logging

struct Serve: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Run the hub.",
        discussion: "Prints 'cairn listening on HOST:PORT' on standard output once it accepts connections.")

    @Option(help: "Address to listen on; 0.0.0.0 exposes the hub to the network. [env: CAIRN_HOST] (default: 127.0.0.1)")
    var host: String?

    @Option(help: "TCP port for HTTP and WebSocket; 0 picks a free port. [env: CAIRN_PORT] (default: 7681)")
    var port: Int?

    @Option(help: "Data directory holding cairn.sqlite; created if missing. [env: CAIRN_DATA] (default: ./data)")
    var data: String?

    @Option(help: "Largest inbound WebSocket message, bytes; bigger ones close with 1009. [env: CAIRN_MAX_MESSAGE_BYTES] (default: 65536)")
    var maxMessageBytes: Int?

    @Option(help: "Seconds a connection has to authenticate before it is closed with 4508. [env: CAIRN_AUTH_TIMEOUT] (default: 10)")
    var authTimeout: Double?

    @Option(help: "Seconds of silence before the server pings a client. [env: CAIRN_PING_INTERVAL] (default: 30)")
    var pingInterval: Int?

    @Option(help: "Seconds without valid traffic (pongs included) before a client is dropped. [env: CAIRN_IDLE_TIMEOUT] (default: 60)")
    var idleTimeout: Int?

    @Option(help: "Seconds between position snapshots to SQLite; kill -9 loses at most this much. [env: CAIRN_SNAPSHOT_INTERVAL] (default: 5)")
    var snapshotInterval: Double?

    @Option(help: "Implied speed (m/s) above which a position is flagged. [env: CAIRN_MAX_SPEED] (default: 300)")
    var maxSpeed: Double?

    @Option(help: "scrypt cost for new password hashes as log2(N), 10–20; r=8, p=1. [env: CAIRN_SCRYPT_COST] (default: 15)")
    var scryptCost: Int?

    @Option(help: "Threads that hash passwords. [env: CAIRN_HASH_WORKERS] (default: number of cores)")
    var hashWorkers: Int?

    @Option(help: "Log level: trace, debug, info, notice, warning, error, critical. [env: CAIRN_LOG_LEVEL] (default: info)")
    var logLevel: String?

    @Option(help: "Bearer token required by GET /metrics; unset leaves /metrics open. [env: CAIRN_METRICS_TOKEN]")
    var metricsToken: String?

    func run() throws {
        // Block SIGINT and SIGTERM before any thread exists: every thread inherits the mask, so a signal can only
        // wait as pending until the waiter below takes it with sigwait. None is lost at startup, none kills the
        // process half-way, and no handler runs at an unsafe moment.
        var shutdownSignals = sigset_t()
        sigemptyset(&shutdownSignals)
        sigaddset(&shutdownSignals, SIGINT)
        sigaddset(&shutdownSignals, SIGTERM)
        pthread_sigmask(SIG_BLOCK, &shutdownSignals, nil)
        let env = Environment()
        var config = AppConfiguration()
        config.server.host = try env.resolve(host, "CAIRN_HOST", default: "127.0.0.1")
        config.server.port = try env.resolve(port, "CAIRN_PORT", default: 7681, valid: 0...65535)
        config.dataDirectory = try env.resolve(data, "CAIRN_DATA", default: "./data")
        config.server.maxMessageBytes = try env.resolve(maxMessageBytes, "CAIRN_MAX_MESSAGE_BYTES", default: 65536,
                                                        valid: 1024...(16 << 20))
        let authSeconds = try env.resolve(authTimeout, "CAIRN_AUTH_TIMEOUT", default: 10, valid: 0.1...3600)
        config.hub.authTimeoutMs = Int64(authSeconds * 1000)
        config.server.pingIntervalSeconds = try env.resolve(pingInterval, "CAIRN_PING_INTERVAL", default: 30, valid: 1...3600)
        config.server.idleTimeoutSeconds = try env.resolve(idleTimeout, "CAIRN_IDLE_TIMEOUT", default: 60, valid: 2...7200)
        guard config.server.idleTimeoutSeconds > config.server.pingIntervalSeconds else {
            throw ValidationError("--idle-timeout (\(config.server.idleTimeoutSeconds)) must be greater than --ping-interval (\(config.server.pingIntervalSeconds))")
        }
        let snapshotSeconds = try env.resolve(snapshotInterval, "CAIRN_SNAPSHOT_INTERVAL", default: 5, valid: 0.1...3600)
        config.hub.snapshotIntervalMs = Int64(snapshotSeconds * 1000)
        config.hub.maxSpeed = try env.resolve(maxSpeed, "CAIRN_MAX_SPEED", default: 300, valid: 1...1_000_000)
        let cost = try env.resolve(scryptCost, "CAIRN_SCRYPT_COST", default: 15, valid: 10...20)
        config.scrypt = ScryptParameters(n: 1 << UInt64(cost), r: 8, p: 1)
        let cores = ProcessInfo.processInfo.activeProcessorCount
        config.hashWorkers = try env.resolve(hashWorkers, "CAIRN_HASH_WORKERS", default: cores, valid: 1...256)
        let metricsTokenValue = try env.resolve(metricsToken, "CAIRN_METRICS_TOKEN", default: "")
        config.server.metricsToken = metricsTokenValue.isEmpty ? nil : metricsTokenValue
        let levelName = try env.resolve(logLevel, "CAIRN_LOG_LEVEL", default: "info")
        guard let level = Logger.Level(rawValue: levelName.lowercased()) else {
            throw ValidationError("unknown log level '\(levelName)'; use trace, debug, info, notice, warning, error or critical")
        }

        LoggingSystem.bootstrap { label in
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = level
            return handler
        }
        signal(SIGPIPE, SIG_IGN)

        let app = try CairnApp(configuration: config)
        let signals = shutdownSignals
        let waiter = Thread {
            var set = signals
            var received: Int32 = 0
            while sigwait(&set, &received) == 0 { app.requestShutdown() }
        }
        waiter.name = "cairn-signals"
        waiter.start()
        let boundPort = try app.start()
        print("cairn listening on \(config.server.host):\(boundPort)")
        fflush(nil)  // all streams: stdout may be a pipe (tests read this line)

        try app.waitUntilStopped()
    }
}
