// The `cairn` command. Subcommands grow with the product; `serve` (the default) runs the hub.
//
// Before ArgumentParser sees the arguments, `main` makes every file the process creates private (umask 077: the
// database, backups, the seed's tokens file) and turns a mistyped subcommand into one clear line, instead of letting
// the default `serve` report it as an unknown setting.
import ArgumentParser
import Foundation

@main
struct Cairn: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "cairn",
        abstract: "Cairn: a realtime location hub (WebSocket + HTTP on one port, SQLite storage).",
        discussion: "Every `serve` setting can come from a flag, a CAIRN_* environment variable or a TOML "
            + "configuration file (--config FILE); a flag wins over the environment, which wins over the file, which "
            + "wins over the built-in default. `cairn serve --help` lists them all.",
        version: CairnVersion.current,
        subcommands: [
            Serve.self, Config.self, Backup.self, Health.self, Seed.self, StatsCommand.self, UserCommand.self,
            PlacesCommand.self,
        ],
        defaultSubcommand: Serve.self)

    static func main() {
        umask(0o077)
        let arguments = Array(CommandLine.arguments.dropFirst())
        if let word = arguments.first, let message = unknownCommand(word) {
            FileHandle.standardError.write(Data("cairn: \(message)\n".utf8))
            Foundation.exit(ExitCode.validationFailure.rawValue)
        }
        main(arguments)
    }

    /// The message for a first argument that is neither an option nor a subcommand (nil when it is fine).
    static func unknownCommand(_ word: String) -> String? {
        guard !word.hasPrefix("-") else { return nil }
        let names = configuration.subcommands.map { $0._commandName } + ["help"]
        guard !names.contains(word) else { return nil }
        return "unknown command '\(word)'; the commands are \(names.dropLast().joined(separator: ", ")) "
            + "(see `cairn --help`)"
    }
}

enum CairnVersion {
    static let current = "0.1.0"
}
