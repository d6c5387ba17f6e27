// `cairn config`: operator tools around the option table. `check` validates files and names every wrong key or
// value; `show` prints the effective settings with the source of each; `example` prints a complete commented
// file; `options` prints the Markdown table used in docs/OPERATIONS.md.
import ArgumentParser
import CairnConfig
import Foundation

struct Config: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Check, show and document the configuration.",
        subcommands: [Check.self, Show.self, Example.self, Options.self])

    struct Check: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Validate configuration files: print every problem, or 'FILE: OK'.",
            discussion: "Exits 0 when every file is valid and 1 otherwise. Values are checked as the hub would "
                + "check them with no flags or environment variables, TLS files included.")

        @Argument(help: "Configuration files (TOML).")
        var files: [String]

        func validate() throws {
            guard !files.isEmpty else { throw ValidationError("name at least one configuration file") }
        }

        func run() throws {
            var failed = false
            for path in files {
                let problems = ConfigurationResolver.check(ConfigurationFile.load(path: path))
                if problems.isEmpty {
                    print("\(path): OK")
                } else {
                    failed = true
                    for problem in problems { print(problem) }
                }
            }
            if failed { throw ExitCode(1) }
        }
    }

    struct Show: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Print the effective settings as TOML, each with where its value came from.",
            discussion: "Takes the same --config and settings flags as `serve`, and reads the same environment.")

        @Option(help: "Configuration file (TOML). [env: CAIRN_CONFIG]")
        var config: String?

        @Argument(parsing: .allUnrecognized, help: ArgumentHelp("Settings as --flag value, as for serve."))
        var settings: [String] = []

        func run() throws {
            let resolved = try SettingsLoader.resolve(configFile: config, arguments: settings)
            print(ConfigurationDocs.effective(resolved), terminator: "")
        }
    }

    struct Example: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Print a configuration file listing every option at its default, commented.")

        func run() { print(ConfigurationDocs.exampleFile(), terminator: "") }
    }

    struct Options: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Print the table of options (Markdown), as in docs/OPERATIONS.md.")

        func run() { print(ConfigurationDocs.markdownTable()) }
    }
}
