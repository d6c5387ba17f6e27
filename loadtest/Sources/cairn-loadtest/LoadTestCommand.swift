// `cairn-loadtest`: drives thousands of simulated users against a Cairn hub (over WebSocket), a Mosquitto broker
// (over MQTT) or nginx's nchan module (over WebSocket) on this machine, prints a progress line every second and a
// summary at the end, and can write the same figures as JSON. It only connects to loopback addresses, stops by
// itself, and exits with a code that says how the run ended (0 completed, 2 server unreachable, 3 server went away,
// 4 did not settle in time).
import ArgumentParser
import CairnLoadTest
import CairnSeed
import Foundation

@main
struct LoadTestCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "cairn-loadtest",
        abstract:
            "Simulated moving users against Cairn, Mosquitto or nchan on loopback: delivery latency, rates, server "
            + "cost.",
        discussion: """
            Against Cairn, users and friendships come from the tokens file written by `cairn seed` (run the hub on \
            that data directory). Against Mosquitto or nchan, pass the same tokens file for the identical graph, or \
            --users/--friends/--graph/--seed to generate it. Movement and timing come from --seed. Several Cairn \
            nodes (sharing one PostgreSQL and one Redis): --ports 7681,7682,7683 instead of --port; user i (in \
            tokens-file order) connects to node i mod N, and the report splits deliveries into same-node and \
            cross-node.
            """)

    @Option(help: "Server kind: cairn, mosquitto or nchan.")
    var server: String = "cairn"

    @Option(help: "Server address (an IPv4 literal in 127.0.0.0/8).")
    var host: String = "127.0.0.1"

    @Option(help: "Server port (or --ports).")
    var port: Int?

    @Option(help: "Several Cairn nodes' ports, comma-separated (user i connects to node i mod N).")
    var ports: String?

    @Option(help: "Tokens file from `cairn seed --out` (required for cairn).")
    var tokens: String?

    @Option(help: "Users to simulate (default: every user of the tokens file).")
    var users: Int?

    @Option(help: "Friends per user when generating the graph (no tokens file).")
    var friends: Int = 10

    @Option(help: "Graph shape when generating: random or clustered.")
    var graph: String = "random"

    @Option(help: "Seed for movement and phases (and for the graph when generating it).")
    var seed: UInt64 = 1

    @Option(help: "Reports per second per user.")
    var rate: Double = 1

    @Option(help: "Seconds of measured reporting.")
    var duration: Double = 10

    @Option(help: "New connections per second during the ramp.")
    var ramp: Double = 1000

    @Option(help: "Connection attempts in flight at once.")
    var maxPending: Int = 256

    @Option(help: "Seconds to wait after the last connection attempt for all users to be ready.")
    var readyTimeout: Double = 10

    @Option(help: "Seconds to keep reading after the last report.")
    var drain: Double = 1

    @Option(help: "City box: minLat,minLon,maxLat,maxLon (default: central Paris).")
    var box: String?

    @Option(help: "Travel mode mix, e.g. walking=0.6,cycling=0.25,driving=0.15.")
    var modes: String?

    @Option(help: "Source addresses 127.0.0.2… to spread connections over (0: one per 20,000 users beyond the first).")
    var sourceAddresses: Int = 0

    @Option(help: "Pid of the server, if it runs here: CPU seconds and memory from /proc (repeat for each node).")
    var serverPid: [Int32] = []

    @Option(help: "Write the report as JSON to this file ('-' for stdout).")
    var json: String?

    @Flag(help: "No progress line.")
    var quiet = false

    func run() throws {
        guard let kind = ServerKind(rawValue: server) else {
            throw ValidationError("--server must be cairn, mosquitto or nchan")
        }
        guard let shape = SeedGraphShape(rawValue: graph) else {
            throw ValidationError("--graph must be random or clustered")
        }
        var plan = WorkloadPlan(users: users ?? 0, friends: friends, shape: shape, seed: seed)
        if let box {
            guard let parsed = CityBox(parsing: box) else {
                throw ValidationError("--box must be minLat,minLon,maxLat,maxLon")
            }
            plan.box = parsed
        }
        if let modes {
            guard let parsed = ModeMix(parsing: modes) else {
                throw ValidationError("--modes must be like walking=0.6,driving=0.4")
            }
            plan.modes = parsed
        }
        let nodePorts: [Int]
        switch (port, ports) {
        case (let port?, nil): nodePorts = [port]
        case (nil, let list?):
            guard kind == .cairn else {
                throw ValidationError("--ports is for cairn only (several nodes); give \(kind.rawValue) one --port")
            }
            do { nodePorts = try LoadConfiguration.parsePorts(list) } catch { throw ValidationError(error.description) }
        case (nil, nil): throw ValidationError("give --port, or --ports for several cairn nodes")
        case (_?, _?): throw ValidationError("--port and --ports exclude each other")
        }
        var configuration = LoadConfiguration(server: kind, ports: nodePorts)
        configuration.host = host
        configuration.rate = rate
        configuration.duration = duration
        configuration.rampPerSecond = ramp
        configuration.maxPendingConnects = maxPending
        configuration.readyTimeout = readyTimeout
        configuration.drain = drain
        configuration.sourceAddresses = sourceAddresses
        configuration.serverPIDs = serverPid
        configuration.progress = !quiet
        do { try configuration.validate() } catch { throw ValidationError(error.description) }

        let workload: Workload
        do {
            if let tokens {
                let file = try TokensFile.load(path: tokens)
                if users == nil { plan.users = file.users.count }
                workload = try Workload.fromTokens(file, plan: plan)
            } else {
                guard kind != .cairn else {
                    throw ValidationError("--tokens is required against cairn (see `cairn seed`)")
                }
                guard users != nil else { throw ValidationError("--users is required without --tokens") }
                workload = try Workload.generate(plan)
            }
        } catch let error as WorkloadError {
            throw ValidationError(error.description)
        }

        if kind == .nchan {
            // nchan refuses a subscriber of more than 255 channels or 1,024 bytes of channel ids.
            for (user, friends) in workload.friends.enumerated() {
                let bytes = friends.reduce(0) { $0 + String(workload.ids[Int($1)]).utf8.count + 1 }
                guard friends.count <= 255, bytes <= 1_025 else {
                    throw ValidationError(
                        "nchan takes at most 255 channels (1,024 bytes of ids) per subscriber; user "
                            + "\(workload.ids[user]) has \(friends.count) friends")
                }
            }
        }
        // One socket per user, of either kind: the Mosquitto clients are made without their socket pairs.
        let users = UInt64(workload.count)
        let limit = FileDescriptorLimit.raise(to: users + 1024)
        if limit < users + 64 {
            FileHandle.standardError.write(
                Data("cairn-loadtest: warning: open-file limit \(limit) is low for \(workload.count) users\n".utf8))
        }
        signal(SIGPIPE, SIG_IGN)

        let session = LoadSession(workload: workload, configuration: configuration)
        let report =
            kind == .mosquitto
            ? MosquittoTransport(session: session, socketPairs: false).run()
            : WebSocketTransport(session: session).run()

        print(report.summary())
        if let json {
            let data = try report.json()
            if json == "-" {
                FileHandle.standardOutput.write(data + Data("\n".utf8))
            } else {
                try data.write(to: URL(fileURLWithPath: json))
            }
        }
        if report.outcome != .completed { throw ExitCode(report.outcome.exitCode) }
    }
}
