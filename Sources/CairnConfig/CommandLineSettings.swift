// The option flags of `cairn serve` (and `cairn config show`), read from the words ArgumentParser leaves over.
// ArgumentParser needs each option declared statically; reading the flags from the option table instead keeps an
// option a one-entry change. Accepted forms: `--port 7681`, `--port=7681`, and for true/false options a bare
// `--flag` (true). A flag given twice takes the last value, as usual on command lines.

/// Raw flag values by file key, with the flag each came from.
public struct CommandLineSettings: Sendable, Equatable {
    /// A flag's raw text and the flag as written (with dashes).
    public struct Entry: Sendable, Equatable {
        /// The flag, e.g. `--port`.
        public let flag: String
        /// The value text.
        public let text: String

        /// An entry for `flag` (with dashes) and its value text.
        public init(flag: String, text: String) {
            self.flag = flag
            self.text = text
        }
    }

    /// Flag values by file key.
    public let entries: [String: Entry]

    /// No flags.
    public init() { entries = [:] }

    /// Parses `arguments` (e.g. `["--port", "0", "--data=/tmp/x"]`). Unknown flags (with a suggestion), missing
    /// values and stray words are all reported.
    public init(_ arguments: [String], options: [ConfigurationOption] = ConfigurationOptions.all)
        throws(ConfigurationErrors)
    {
        let byFlag = Dictionary(options.map { ($0.flag, $0) }, uniquingKeysWith: { first, _ in first })
        var entries: [String: Entry] = [:]
        var problems: [ConfigurationProblem] = []
        func problem(_ key: String?, _ message: String) {
            problems.append(ConfigurationProblem(origin: "command line", key: key, message: message))
        }
        var index = 0
        while index < arguments.count {
            let word = arguments[index]
            index += 1
            guard word.hasPrefix("--"), word.count > 2 else {
                problem(nil, "unexpected argument '\(word)' (options are written --name value)")
                continue
            }
            var name = String(word.dropFirst(2))
            var inlineValue: String?
            if let equals = name.firstIndex(of: "=") {
                inlineValue = String(name[name.index(after: equals)...])
                name = String(name[..<equals])
            }
            guard let option = byFlag[name] else {
                problem(
                    nil,
                    "unknown option '--\(name)'"
                        + Suggestion.clause(for: name, in: options.map(\.flag), display: { "--\($0)" }))
                // Its value, if it has one, is part of the same mistake.
                if inlineValue == nil, index < arguments.count, !arguments[index].hasPrefix("--") { index += 1 }
                continue
            }
            let text: String
            if let inlineValue {
                text = inlineValue
            } else if case .boolean = option.kind {
                let next = index < arguments.count ? arguments[index].lowercased() : ""
                if ["true", "false", "yes", "no", "on", "off", "1", "0"].contains(next) {
                    text = arguments[index]
                    index += 1
                } else {
                    text = "true"
                }
            } else if index < arguments.count {
                text = arguments[index]
                index += 1
            } else {
                problem(option.key, "--\(name) needs a value: \(option.expected)")
                continue
            }
            entries[option.key] = Entry(flag: "--\(name)", text: text)
        }
        guard problems.isEmpty else { throw ConfigurationErrors(problems) }
        self.entries = entries
    }
}
