// Text generated from the option table, so help, example file and documentation cannot drift from the code:
// the settings section of `cairn serve --help`, a complete commented example file (`cairn config example`), the
// Markdown table in docs/OPERATIONS.md (`cairn config options`), and the effective configuration with the source
// of each value (`cairn config show`, which never prints a secret such as the metrics token).

import Foundation

/// Renders the option table for people.
public enum ConfigurationDocs {
    /// The precedence rule in one line.
    public static let precedence =
        "A command-line flag wins over its environment variable, which wins over the configuration file, which wins "
        + "over the built-in default."

    /// The settings part of `cairn serve --help`: every option with its unit, help, range, default, environment
    /// variable and file key.
    public static func helpText(options: [ConfigurationOption] = ConfigurationOptions.all) -> String {
        var lines = [
            "Settings come from, strongest first: a flag, its CAIRN_* environment variable, the configuration file "
                + "(--config FILE or CAIRN_CONFIG), the default. `cairn config example` prints a commented file; "
                + "`cairn config check FILE` validates one.",
            "",
            "SETTINGS:",
        ]
        for option in options {
            lines.append("  --\(option.flag) <\(option.unit)>")
            lines += wrap(option.help, indent: 6)
            lines += wrap(
                "\(option.kind.expectation); default \(option.defaultText); env \(option.environmentVariable); "
                    + "file \(option.key)", indent: 6)
        }
        return lines.joined(separator: "\n")
    }

    /// Word-wraps `text` to `width` columns with a hanging `indent` (ArgumentParser would wrap at 80 columns and
    /// lose the indentation).
    static func wrap(_ text: String, indent: Int, width: Int = 78) -> [String] {
        let pad = String(repeating: " ", count: indent)
        var lines: [String] = []
        var line = pad
        for word in text.split(separator: " ") {
            if line.count > indent && line.count + 1 + word.count > width {
                lines.append(line)
                line = pad
            }
            line += (line.count > indent ? " " : "") + word
        }
        if line.count > indent { lines.append(line) }
        return lines
    }

    /// A complete configuration file with every option commented out at its default, documented in place.
    public static func exampleFile(options: [ConfigurationOption] = ConfigurationOptions.all) -> String {
        var out = """
            # Cairn configuration file (TOML). `cairn serve --config FILE` reads it (or CAIRN_CONFIG=FILE).
            # Every option is listed with its default, commented out: uncomment a line to change it.
            # Precedence, strongest first: command-line flag > environment variable (CAIRN_*) > this file > default.
            # Check a file with `cairn config check FILE`; see the effective values with `cairn config show`.

            """
        var section: String?
        for option in options {
            if option.section != section {
                section = option.section
                out += "\n[\(option.section)]\n"
            }
            out += "\n# \(option.help)\n"
            out +=
                "# \(option.kind.expectation) (\(option.unit)); flag --\(option.flag), env "
                + "\(option.environmentVariable)"
            if let note = option.defaultNote { out += "; default: \(note)" }
            out += "\n"
            let shown = option.defaultValue ?? option.example ?? .string("")
            out += "# \(option.name) = \(shown)\n"
        }
        return out
    }

    /// The Markdown table of options for docs/OPERATIONS.md.
    public static func markdownTable(options: [ConfigurationOption] = ConfigurationOptions.all) -> String {
        var lines = [
            "| file key | flag | environment | default | values (unit) | meaning |",
            "|---|---|---|---|---|---|",
        ]
        for option in options {
            let cells = [
                "`\(option.key)`", "`--\(option.flag)`", "`\(option.environmentVariable)`",
                option.defaultNote ?? (option.defaultValue.map { "`\($0)`" } ?? "none"),
                "\(option.kind.expectation) (\(option.unit))", option.help,
            ]
            lines.append(
                "| " + cells.map { $0.replacingOccurrences(of: "|", with: "\\|") }.joined(separator: " | ") + " |")
        }
        return lines.joined(separator: "\n")
    }

    /// The effective configuration as TOML, each value followed by its source; secrets are masked.
    public static func effective(
        _ resolved: ResolvedConfiguration,
        options: [ConfigurationOption] = ConfigurationOptions.all
    ) -> String {
        var out = ""
        var section: String?
        for option in options {
            guard let setting = resolved.setting(option.key) else { continue }
            if option.section != section {
                section = option.section
                out += (out.isEmpty ? "" : "\n") + "[\(option.section)]\n"
            }
            if setting.value != nil, option.isSecret {
                out += "\(option.name) = \"********\"  # \(setting.source) (a secret: not shown)\n"
            } else if let value = setting.value {
                out += "\(option.name) = \(value)  # \(setting.source)\n"
            } else {
                out += "# \(option.name) is not set\n"
            }
        }
        return out
    }
}
