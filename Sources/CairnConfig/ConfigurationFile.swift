// The TOML configuration file, read into validated values keyed like the option table (`[server] port = 7681` is
// `server.port`). Reading never stops at the first mistake: every unknown key (with a suggestion when one is
// close), wrong type and out-of-range value is collected, so `cairn config check` can list them all. A syntax error
// is the exception: the TOML parser stops there, and the file has no values.
import Foundation
import TOMLKit

/// A parsed configuration file: its valid values and everything wrong with it.
public struct ConfigurationFile: Sendable {
    /// The path it was read from (as given), used to name it in messages.
    public let path: String
    /// Valid values by file key.
    public let values: [String: ConfigurationValue]
    /// Everything wrong, sorted by key.
    public let problems: [ConfigurationProblem]

    /// Reads and parses the file at `path`; a missing or unreadable file is a problem, not a crash.
    public static func load(path: String, options: [ConfigurationOption] = ConfigurationOptions.all)
        -> ConfigurationFile
    {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), !isDirectory.boolValue else {
            return ConfigurationFile(
                path: path, values: [:],
                problems: [
                    ConfigurationProblem(origin: path, key: nil, message: "configuration file does not exist")
                ])
        }
        guard let data = FileManager.default.contents(atPath: path) else {
            return ConfigurationFile(
                path: path, values: [:],
                problems: [
                    ConfigurationProblem(
                        origin: path, key: nil, message: "configuration file cannot be read (permissions?)")
                ])
        }
        guard let text = String(data: data, encoding: .utf8) else {
            return ConfigurationFile(
                path: path, values: [:],
                problems: [
                    ConfigurationProblem(origin: path, key: nil, message: "configuration file is not UTF-8 text")
                ])
        }
        return ConfigurationFile(text: text, path: path, options: options)
    }

    /// Parses `text` as if read from `path`.
    public init(text: String, path: String, options: [ConfigurationOption] = ConfigurationOptions.all) {
        self.path = path
        let table: TOMLTable
        do {
            table = try TOMLTable(string: text)
        } catch let error as TOMLParseError {
            values = [:]
            problems = [
                ConfigurationProblem(
                    origin: path, key: nil,
                    message:
                        "TOML syntax error at line \(error.source.begin.line), column \(error.source.begin.column): "
                        + error.description)
            ]
            return
        } catch {
            values = [:]
            problems = [ConfigurationProblem(origin: path, key: nil, message: "TOML syntax error: \(error)")]
            return
        }
        var reader = Reader(path: path, options: options)
        reader.walk(table, prefix: "")
        values = reader.values
        problems = reader.problems.sorted { ($0.key ?? "") < ($1.key ?? "") }
    }

    private init(path: String, values: [String: ConfigurationValue], problems: [ConfigurationProblem]) {
        self.path = path
        self.values = values
        self.problems = problems
    }

    /// Walks the TOML tree, matching leaves against the option table.
    private struct Reader {
        let path: String
        let byKey: [String: ConfigurationOption]
        let keys: [String]
        let sections: Set<String>
        var values: [String: ConfigurationValue] = [:]
        var problems: [ConfigurationProblem] = []

        init(path: String, options: [ConfigurationOption]) {
            self.path = path
            byKey = Dictionary(options.map { ($0.key, $0) }, uniquingKeysWith: { first, _ in first })
            keys = options.map(\.key)
            var sections = Set<String>()
            for key in keys {
                var parts = key.split(separator: ".").dropLast()
                while !parts.isEmpty {
                    sections.insert(parts.joined(separator: "."))
                    parts = parts.dropLast()
                }
            }
            self.sections = sections
        }

        mutating func walk(_ table: TOMLTable, prefix: String) {
            for (name, value) in table {
                let key = prefix.isEmpty ? name : prefix + "." + name
                if let option = byKey[key] {
                    read(value, for: option)
                } else if let sub = value.table {
                    if sub.isEmpty && !sections.contains(key) {
                        problem(
                            key,
                            "unknown table [\(key)]"
                                + Suggestion.clause(for: key, in: Array(sections), display: { "[\($0)]" }))
                    }
                    walk(sub, prefix: key)
                } else if sections.contains(key) {
                    problem(key, "\(key) must be a table ([\(key)]), not \(Self.describe(value))")
                } else {
                    problem(key, "unknown key '\(key)'" + Suggestion.clause(for: key, in: keys))
                }
            }
        }

        mutating func read(_ raw: any TOMLValueConvertible, for option: ConfigurationOption) {
            let shown = Self.show(raw)
            let value: ConfigurationValue
            switch raw.type {
            case .int: value = .integer(raw.int ?? 0)
            case .double: value = .decimal(raw.double ?? .nan)
            case .string: value = .string(raw.string ?? "")
            case .bool: value = .boolean(raw.bool ?? false)
            default:
                problem(option.key, "\(option.key) = \(shown) is \(Self.describe(raw)): \(option.expected)")
                return
            }
            do {
                values[option.key] = try option.validate(value)
            } catch {
                let reason = error.reason == "has the wrong type" ? "is \(Self.describe(raw))" : error.reason
                problem(option.key, "\(option.key) = \(shown) \(reason): \(option.expected)")
            }
        }

        mutating func problem(_ key: String, _ message: String) {
            problems.append(ConfigurationProblem(origin: path, key: key, message: message))
        }

        /// "a string", "an integer", "a table", ...
        static func describe(_ value: any TOMLValueConvertible) -> String {
            switch value.type {
            case .int: "an integer"
            case .double: "a floating-point number"
            case .string: "a string"
            case .bool: "a boolean"
            case .array: "an array"
            case .table: "a table"
            case .date: "a date"
            case .time: "a time"
            case .dateTime: "a date-time"
            }
        }

        /// The value as written, shortened for messages.
        static func show(_ value: any TOMLValueConvertible) -> String {
            let text: String =
                switch value.type {
                case .string: TOMLText.quoted(value.string ?? "")
                case .table: "{…}"
                default: value.debugDescription
                }
            return text.count > 60 ? String(text.prefix(57)) + "…" : text
        }
    }
}

/// TOML text helpers shared by messages and the generated example file.
enum TOMLText {
    /// A TOML basic string: quotes, with `"`, `\` and control characters escaped.
    static func quoted(_ text: String) -> String {
        var out = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\t": out += "\\t"
            case "\r": out += "\\r"
            default:
                if scalar.value < 0x20 || scalar.value == 0x7F {
                    out += String(format: "\\u%04X", scalar.value)
                } else {
                    out.unicodeScalars.append(scalar)
                }
            }
        }
        return out + "\""
    }
}
