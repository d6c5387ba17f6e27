// The `cairn` command. Subcommands grow with the product; `serve` (the default) runs the hub.
import ArgumentParser

@main
struct Cairn: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "cairn",
        abstract: "Cairn: a realtime location hub (WebSocket + HTTP on one port, SQLite storage).",
        discussion: "Every `serve` option can also be set through an environment variable (shown in its help); "
            + "a flag on the command line wins over the environment, which wins over the built-in default.",
        version: CairnVersion.current,
        subcommands: [Serve.self, Seed.self, StatsCommand.self, UserCommand.self],
        defaultSubcommand: Serve.self)
}

enum CairnVersion {
    static let current = "0.1.0"
}
