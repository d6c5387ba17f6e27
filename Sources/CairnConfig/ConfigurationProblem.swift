// What can be wrong with a configuration, in words an operator can act on: where the value came from (file,
// environment variable or flag), the key, the value, and what was expected with its unit. Problems are collected,
// not thrown one at a time, so `cairn config check` and a refused start list everything at once.

/// Where a setting's value came from. Precedence, strongest first: flag, environment, file, default.
public enum ConfigurationSource: Sendable, Equatable, CustomStringConvertible {
    /// The option's built-in default.
    case defaultValue
    /// The configuration file at this path.
    case file(String)
    /// This environment variable.
    case environment(String)
    /// This command-line flag (with dashes).
    case flag(String)

    /// "default", "file cairn.toml", "environment CAIRN_PORT", "flag --port".
    public var description: String {
        switch self {
        case .defaultValue: "default"
        case .file(let path): "file \(path)"
        case .environment(let name): "environment \(name)"
        case .flag(let flag): "flag \(flag)"
        }
    }
}

/// One thing wrong with a configuration.
public struct ConfigurationProblem: Error, Sendable, Equatable, CustomStringConvertible {
    /// Where: a file path, "environment", "command line", or "configuration" for rules across options.
    public let origin: String
    /// The file key concerned, when there is one.
    public let key: String?
    /// What is wrong, naming the value and what was expected.
    public let message: String

    /// A problem at `origin` about `key`.
    public init(origin: String, key: String?, message: String) {
        self.origin = origin
        self.key = key
        self.message = message
    }

    /// "cairn.toml: server.port = 70000 is out of range: expected an integer in 0...65535 (TCP port)".
    public var description: String { "\(origin): \(message)" }
}

/// A configuration that cannot be used, with every problem found.
public struct ConfigurationErrors: Error, Sendable, CustomStringConvertible {
    /// The problems, in the order found (file, then environment, then command line, then cross-option rules).
    public let problems: [ConfigurationProblem]

    /// Wraps `problems` (non-empty).
    public init(_ problems: [ConfigurationProblem]) { self.problems = problems }

    /// One problem per line.
    public var description: String { problems.map(\.description).joined(separator: "\n") }
}
