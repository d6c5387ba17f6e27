// Merges the sources of configuration into one `AppConfiguration`, option by option, the strongest source first:
//
//     command-line flag  >  environment variable (CAIRN_*)  >  configuration file  >  built-in default
//
// Only the value that wins is parsed from the environment, so a stale variable that a flag overrides cannot stop
// the hub from starting. Every problem is collected (file, environment, flags, then rules across options) and
// reported together. The resolved values remember their source, for `cairn config show`.
public import CairnApp

/// One setting's effective value and where it came from.
public struct ResolvedSetting: Sendable, Equatable {
    /// The option's file key.
    public let key: String
    /// The value in force; nil when unset (an option without default that no source sets).
    public let value: ConfigurationValue?
    /// Where the value came from.
    public let source: ConfigurationSource
}

/// The outcome of resolution: the configuration to run with, and each setting's value and source.
public struct ResolvedConfiguration: Sendable {
    /// The configuration, with every option applied.
    public let app: AppConfiguration
    /// One entry per option, in table order.
    public let settings: [ResolvedSetting]

    /// The setting for `key`.
    public func setting(_ key: String) -> ResolvedSetting? { settings.first { $0.key == key } }
}

/// Applies the precedence rule over the option table.
public enum ConfigurationResolver {
    /// Resolves every option. `file` is the parsed configuration file, if any; `environment` is usually
    /// `ProcessInfo.processInfo.environment`; `base` supplies the fields no option covers.
    public static func resolve(
        file: ConfigurationFile? = nil, environment: [String: String] = [:],
        commandLine: CommandLineSettings = CommandLineSettings(), base: AppConfiguration = AppConfiguration(),
        options: [ConfigurationOption] = ConfigurationOptions.all,
        checks: [ConfigurationCheck] = ConfigurationOptions.checks
    ) throws(ConfigurationErrors) -> ResolvedConfiguration {
        var problems = file?.problems ?? []
        var settings: [ResolvedSetting] = []
        var values: [String: ConfigurationValue] = [:]
        var app = base
        for option in options {
            var chosen: (value: ConfigurationValue, source: ConfigurationSource)?
            if let entry = commandLine.entries[option.key] {
                do {
                    chosen = (try option.parse(text: entry.text), .flag(entry.flag))
                } catch {
                    problems.append(
                        ConfigurationProblem(
                            origin: "command line", key: option.key,
                            message: "\(entry.flag) \(option.shown(entry.text)) \(error.reason): \(option.expected)"))
                    continue
                }
            } else if let text = environment[option.environmentVariable], !text.isEmpty {
                do {
                    chosen = (try option.parse(text: text), .environment(option.environmentVariable))
                } catch {
                    problems.append(
                        ConfigurationProblem(
                            origin: "environment", key: option.key,
                            message: "\(option.environmentVariable)=\(option.shown(text)) \(error.reason): "
                                + option.expected))
                    continue
                }
            } else if let fileValue = file?.values[option.key] {
                chosen = (fileValue, .file(file!.path))
            } else if let value = option.defaultValue {
                chosen = (value, .defaultValue)
            }
            if let chosen {
                values[option.key] = chosen.value
                option.apply(chosen.value, &app)
                settings.append(ResolvedSetting(key: option.key, value: chosen.value, source: chosen.source))
            } else {
                settings.append(ResolvedSetting(key: option.key, value: nil, source: .defaultValue))
            }
        }
        // Rules across options run alongside the other problems, so one pass names everything; a rule is skipped
        // only when one of its own keys is already wrong (its message would be about a value that is not in force).
        let wrongKeys = Set(problems.compactMap(\.key))
        for check in checks where check.keys.allSatisfy({ !wrongKeys.contains($0) }) {
            if let message = check.problem(values) {
                problems.append(
                    ConfigurationProblem(
                        origin: "configuration", key: check.keys.first,
                        message: message))
            }
        }
        guard problems.isEmpty else { throw ConfigurationErrors(problems) }
        return ResolvedConfiguration(app: app, settings: settings)
    }

    /// Everything wrong with a configuration file on its own (values over the defaults), for `cairn config check`.
    public static func check(
        _ file: ConfigurationFile, options: [ConfigurationOption] = ConfigurationOptions.all,
        checks: [ConfigurationCheck] = ConfigurationOptions.checks
    ) -> [ConfigurationProblem] {
        do {
            _ = try resolve(file: file, options: options, checks: checks)
            return []
        } catch {
            return error.problems.map { problem in
                // Rules across options are about this file's values: name the file.
                problem.origin == "configuration"
                    ? ConfigurationProblem(origin: file.path, key: problem.key, message: problem.message) : problem
            }
        }
    }
}
