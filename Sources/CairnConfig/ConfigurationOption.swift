// One setting of `cairn serve`, described once: its key in the configuration file, its command-line flag, its
// environment variable (derived from the flag), its type and valid range, its default, its unit, one line of
// help, and how a value lands in `AppConfiguration`. Everything else — parsing flags, environment and TOML,
// validation messages, `--help`, the example file and the documentation table — is derived from these fields, so
// an option cannot be documented in one place and behave differently in another.
public import CairnApp
import Foundation

/// A typed configuration value, as read from any source.
public enum ConfigurationValue: Sendable, Equatable, CustomStringConvertible {
    /// A whole number.
    case integer(Int)
    /// A number that may have a fraction.
    case decimal(Double)
    /// Text (also paths and choices).
    case string(String)
    /// true or false.
    case boolean(Bool)

    /// The value as it would be written in TOML (strings quoted).
    public var description: String {
        switch self {
        case .integer(let value): String(value)
        case .decimal(let value): Self.format(value)
        case .string(let value): TOMLText.quoted(value)
        case .boolean(let value): value ? "true" : "false"
        }
    }

    /// Shortest decimal text for a double: `10` rather than `10.0`, `0.5` stays `0.5`.
    static func format(_ value: Double) -> String {
        if value == value.rounded(), abs(value) < 1e15 { return String(Int(value)) }
        return String(value)
    }
}

/// What values an option accepts.
public enum ConfigurationKind: Sendable {
    /// A whole number within a range.
    case integer(ClosedRange<Int>)
    /// A number within a range (a TOML integer is accepted too).
    case decimal(ClosedRange<Double>)
    /// Non-empty text.
    case string
    /// A filesystem path (non-empty text).
    case path
    /// One of a fixed set of words (case-insensitive on input, stored lowercased).
    case choice([String])
    /// true or false (`true`/`false`, also `1`/`0`, `yes`/`no`, `on`/`off` from flags and the environment).
    case boolean

    /// "an integer in 0...65535", for error messages and help.
    public var expectation: String {
        switch self {
        case .integer(let range): "an integer in \(range.lowerBound)...\(range.upperBound)"
        case .decimal(let range):
            "a number in "
                + "\(ConfigurationValue.format(range.lowerBound))...\(ConfigurationValue.format(range.upperBound))"
        case .string: "non-empty text"
        case .path: "a path"
        case .choice(let words): "one of " + words.joined(separator: ", ")
        case .boolean: "true or false"
        }
    }

    /// The TOML type name a file must use.
    var tomlType: String {
        switch self {
        case .integer: "integer"
        case .decimal: "number"
        case .string, .path, .choice: "string"
        case .boolean: "boolean"
        }
    }
}

/// One setting: the single source of truth for its names, type, default, unit, help and effect.
public struct ConfigurationOption: Sendable {
    /// Dotted key in the configuration file: `server.port` is `port` in the `[server]` table.
    public let key: String
    /// Command-line flag without the dashes: `port` is `--port`.
    public let flag: String
    /// Accepted values.
    public let kind: ConfigurationKind
    /// The value used when no source sets the option; nil means "unset" (e.g. no TLS certificate).
    public let defaultValue: ConfigurationValue?
    /// How the default reads in help when it is not a fixed value (e.g. "number of cores").
    public let defaultNote: String?
    /// The unit of the value ("seconds", "bytes", "m/s", ...), or what kind of thing it is ("address", "path").
    public let unit: String
    /// One line of help.
    public let help: String
    /// A value shown in the example file when there is no default (e.g. a certificate path).
    public let example: ConfigurationValue?
    /// Applies a valid value to the configuration.
    let apply: @Sendable (ConfigurationValue, inout AppConfiguration) -> Void
    /// True for a credential (a token): `cairn config show` and error messages never print its value.
    public private(set) var isSecret = false

    /// This option marked as a credential, whose value is never printed.
    public func secret() -> ConfigurationOption {
        var copy = self
        copy.isSecret = true
        return copy
    }

    /// Environment variable: `CAIRN_` and the flag in upper case with `-` as `_` (`--max-speed` is `CAIRN_MAX_SPEED`).
    public var environmentVariable: String {
        "CAIRN_" + flag.uppercased().replacingOccurrences(of: "-", with: "_")
    }

    /// The table in the file (`server` for `server.port`).
    public var section: String {
        guard let dot = key.lastIndex(of: ".") else { return "" }
        return String(key[..<dot])
    }

    /// The key's last part (`port` for `server.port`).
    public var name: String {
        guard let dot = key.lastIndex(of: ".") else { return key }
        return String(key[key.index(after: dot)...])
    }

    /// The default as shown in help and docs.
    public var defaultText: String {
        if let defaultNote { return defaultNote }
        return defaultValue?.description ?? "none"
    }

    // MARK: Typed constructors (use these in the table)

    /// A whole-number option.
    public static func integer(
        _ key: String, flag: String, default value: Int?, defaultNote: String? = nil, example: Int? = nil,
        range: ClosedRange<Int>, unit: String, help: String,
        apply: @escaping @Sendable (inout AppConfiguration, Int) -> Void
    ) -> ConfigurationOption {
        ConfigurationOption(
            key: key, flag: flag, kind: .integer(range), defaultValue: value.map { .integer($0) },
            defaultNote: defaultNote, unit: unit, help: help, example: example.map { .integer($0) }
        ) {
            value, config in
            if case .integer(let number) = value { apply(&config, number) }
        }
    }

    /// A number option (fractions allowed).
    public static func decimal(
        _ key: String, flag: String, default value: Double?, defaultNote: String? = nil, range: ClosedRange<Double>,
        unit: String, help: String, apply: @escaping @Sendable (inout AppConfiguration, Double) -> Void
    ) -> ConfigurationOption {
        ConfigurationOption(
            key: key, flag: flag, kind: .decimal(range), defaultValue: value.map { .decimal($0) },
            defaultNote: defaultNote, unit: unit, help: help, example: nil
        ) { value, config in
            if case .decimal(let number) = value { apply(&config, number) }
        }
    }

    /// A text option; `kind` is `.string`, `.path` or `.choice`.
    public static func text(
        _ key: String, flag: String, kind: ConfigurationKind = .string, default value: String?,
        defaultNote: String? = nil, example: String? = nil, unit: String, help: String,
        apply: @escaping @Sendable (inout AppConfiguration, String) -> Void
    ) -> ConfigurationOption {
        ConfigurationOption(
            key: key, flag: flag, kind: kind, defaultValue: value.map { .string($0) },
            defaultNote: defaultNote, unit: unit, help: help, example: example.map { .string($0) }
        ) {
            value, config in
            if case .string(let text) = value { apply(&config, text) }
        }
    }

    /// A true/false option.
    public static func boolean(
        _ key: String, flag: String, default value: Bool, unit: String = "true/false", help: String,
        apply: @escaping @Sendable (inout AppConfiguration, Bool) -> Void
    ) -> ConfigurationOption {
        ConfigurationOption(
            key: key, flag: flag, kind: .boolean, defaultValue: .boolean(value), defaultNote: nil,
            unit: unit, help: help, example: nil
        ) { value, config in
            if case .boolean(let flag) = value { apply(&config, flag) }
        }
    }

    // MARK: Parsing and validation

    /// Why a raw value was refused (the caller adds where it came from).
    struct Refusal: Error {
        let reason: String
    }

    /// Parses text from a flag or an environment variable.
    func parse(text raw: String) throws(Refusal) -> ConfigurationValue {
        let text = raw.trimmingCharacters(in: .whitespaces)
        switch kind {
        case .integer:
            guard let number = Int(text) else { throw Refusal(reason: "is not an integer") }
            return try validate(.integer(number))
        case .decimal:
            guard let number = Double(text), number.isFinite else { throw Refusal(reason: "is not a number") }
            return try validate(.decimal(number))
        case .string, .path, .choice:
            return try validate(.string(text))
        case .boolean:
            switch text.lowercased() {
            case "true", "1", "yes", "on": return .boolean(true)
            case "false", "0", "no", "off": return .boolean(false)
            default: throw Refusal(reason: "is not true or false")
            }
        }
    }

    /// Checks a typed value against the kind (range, emptiness, choices) and normalises it.
    func validate(_ value: ConfigurationValue) throws(Refusal) -> ConfigurationValue {
        switch (kind, value) {
        case (.integer(let range), .integer(let number)):
            guard range.contains(number) else { throw Refusal(reason: "is out of range") }
            return value
        case (.decimal(let range), .decimal(let number)):
            guard number.isFinite, range.contains(number) else { throw Refusal(reason: "is out of range") }
            return value
        case (.decimal, .integer(let number)):
            return try validate(.decimal(Double(number)))
        case (.string, .string(let text)), (.path, .string(let text)):
            guard !text.isEmpty else { throw Refusal(reason: "is empty") }
            return value
        case (.choice(let words), .string(let text)):
            let lowered = text.lowercased()
            guard words.contains(lowered) else { throw Refusal(reason: "is not a valid choice") }
            return .string(lowered)
        case (.boolean, .boolean):
            return value
        default:
            throw Refusal(reason: "has the wrong type")
        }
    }

    /// Raw text as a message may quote it: in quotes, or "(hidden)" for a secret.
    func shown(_ text: String) -> String { isSecret ? "(hidden)" : "'\(text)'" }

    /// "expected an integer in 0...65535 (port number)".
    var expected: String { "expected \(kind.expectation) (\(unit))" }
}
