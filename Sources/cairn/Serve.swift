// `cairn serve`: resolves the settings (flag, then environment variable, then configuration file, then default;
// see CairnConfig), starts the hub, prints the address it listens on, and shuts down gracefully on SIGINT/SIGTERM
// (clients get 1001, pending writes are committed, the process exits 0). Signals are taken synchronously by a
// sigwait thread, not by handlers. A configuration that cannot be used exits with 78 (EX_CONFIG) after listing
// every problem, so a service manager can tell it from a crash and not restart in a loop; so does a hub that finds
// its `cluster.node` used by another running hub (it stops by itself within a few presence refreshes).
import ArgumentParser
import CairnApp
import CairnConfig
import CairnServer
import Dispatch
import Foundation
import Logging

struct Serve: ParsableCommand {
    static var configuration: CommandConfiguration {
        CommandConfiguration(
            abstract: "Run the hub.",
            discussion: "Prints 'cairn listening on HOST:PORT' on standard output once it accepts connections "
                + "(followed by ' (tls)' when the port speaks TLS).\n\n" + ConfigurationDocs.helpText())
    }

    @Option(help: "Configuration file (TOML); see `cairn config example`. [env: CAIRN_CONFIG]")
    var config: String?

    /// Runs the hub on a clock this many milliseconds off the machine's (negative: behind): for tests of clock
    /// skew between nodes, hidden from the help and logged as a warning. Never for production.
    @Option(
        name: .customLong("clock-offset-ms"),
        help: ArgumentHelp("For tests: the hub's clock reads this many ms off the machine's.", visibility: .hidden))
    var clockOffsetMs: Int64 = 0

    /// Handles each control message from another node this many milliseconds after it arrives: for tests that a
    /// change is answered only once every node applied it, hidden from the help and logged as a warning.
    @Option(
        name: .customLong("cluster-apply-delay-ms"),
        help: ArgumentHelp("For tests: handle each control message this many ms late.", visibility: .hidden))
    var clusterApplyDelayMs: Int64 = 0

    @Argument(
        parsing: .allUnrecognized, help: ArgumentHelp("Settings as --flag value; see SETTINGS.", visibility: .hidden))
    var settings: [String] = []

    func validate() throws {
        guard clusterApplyDelayMs >= 0 else { throw ValidationError("--cluster-apply-delay-ms cannot be negative") }
    }

    func run() throws {
        // Block SIGINT and SIGTERM before any thread exists: every thread inherits the mask, so a signal can only
        // wait as pending until the waiter below takes it with sigwait. None is lost at startup, none kills the
        // process half-way, and no handler runs at an unsafe moment. SIGHUP re-reads the places (after
        // `cairn places import`); it does not stop the hub.
        var shutdownSignals = sigset_t()
        sigemptyset(&shutdownSignals)
        sigaddset(&shutdownSignals, SIGINT)
        sigaddset(&shutdownSignals, SIGTERM)
        sigaddset(&shutdownSignals, SIGHUP)
        pthread_sigmask(SIG_BLOCK, &shutdownSignals, nil)
        var resolved = try SettingsLoader.resolve(configFile: config, arguments: settings).app
        resolved.cluster.applyDelayMs = clusterApplyDelayMs
        let config = resolved

        LoggingSystem.bootstrap { label in
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = config.logLevel
            return handler
        }
        signal(SIGPIPE, SIG_IGN)

        if clockOffsetMs != 0 {
            Logger(label: "cairn").warning(
                "--clock-offset-ms \(clockOffsetMs): this hub's clock reads \(clockOffsetMs) ms off (for tests only)")
        }
        let app = try CairnApp(configuration: config, clock: CairnApp.machineClock(offsetMs: clockOffsetMs))
        let signals = shutdownSignals
        let waiter = Thread {
            var set = signals
            var received: Int32 = 0
            while sigwait(&set, &received) == 0 {
                if received == SIGHUP { app.reloadPlaces() } else { app.requestShutdown() }
            }
        }
        waiter.name = "cairn-signals"
        waiter.start()
        let boundPort = try app.start()
        print("cairn listening on \(config.server.host):\(boundPort)" + (config.server.usesTLS ? " (tls)" : ""))
        fflush(nil)  // all streams: stdout may be a pipe (tests read this line)

        do {
            try app.waitUntilStopped()
        } catch let refused as ClusterStartError {
            // Another running hub uses this cluster.node: a configuration a restart cannot fix.
            FileHandle.standardError.write(Data("cairn: \(refused)\n".utf8))
            throw SettingsLoader.configErrorExit
        }
    }
}

/// Reads the configuration file, environment and flags the way `serve` does; shared with `config show` and
/// `backup`. Problems are printed one per line to standard error and end the command with exit status 78.
enum SettingsLoader {
    static let configErrorExit = ExitCode(78)

    static func resolve(
        configFile: String?, arguments: [String], checks: [ConfigurationCheck] = ConfigurationOptions.checks
    )
        throws -> ResolvedConfiguration
    {
        let environment = ProcessInfo.processInfo.environment
        let path = configFile ?? environment["CAIRN_CONFIG"].flatMap { $0.isEmpty ? nil : $0 }
        // Flag mistakes and file mistakes are reported together, so one attempt shows everything to fix.
        var problems: [ConfigurationProblem] = []
        var commandLine = CommandLineSettings()
        do {
            commandLine = try CommandLineSettings(arguments)
        } catch {
            problems += error.problems
        }
        do {
            let resolved = try ConfigurationResolver.resolve(
                file: path.map { ConfigurationFile.load(path: $0) },
                environment: environment, commandLine: commandLine,
                checks: checks)
            if problems.isEmpty { return resolved }
        } catch {
            problems += error.problems
        }
        report(problems)
        throw configErrorExit
    }

    static func report(_ problems: [ConfigurationProblem]) {
        var text =
            "cairn: the configuration cannot be used (\(problems.count) problem\(problems.count == 1 ? "" : "s")):\n"
        for problem in problems { text += "  \(problem)\n" }
        FileHandle.standardError.write(Data(text.utf8))
    }
}
