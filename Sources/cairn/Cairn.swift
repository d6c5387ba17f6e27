// The `cairn` command. Subcommands grow with the product; `serve` (the default) runs the hub.
import ArgumentParser

@main
struct Cairn: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "cairn",
        abstract: "Cairn: a realtime location hub (WebSocket + HTTP on one port, SQLite storage).",
        discussion: "Every `serve` setting can come from a flag, a CAIRN_* environment variable or a TOML "
            + "configuration file (--config FILE); a flag wins over the environment, which wins over the file, which "
            + "wins over the built-in default. `cairn serve --help` lists them all.",
        version: CairnVersion.current,
        subcommands: [Serve.self, Config.self, Backup.self, Health.self, Seed.self],
        defaultSubcommand: Serve.self)
}

enum CairnVersion {
    static let current = "0.1.0"
}
