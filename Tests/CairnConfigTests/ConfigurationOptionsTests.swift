// The option table itself: names are unique and follow the conventions, every option has a unit and help, the
// generated help, example file and docs table mention every option, and the shipped example file,
// docs/OPERATIONS.md and the README's flags are in step with the table.
import CairnConfig
import Foundation
import Testing

@Suite(.timeLimit(.minutes(5)))
struct ConfigurationOptionsTests {
    static let options = ConfigurationOptions.all

    /// The repository root, found from this source file's path.
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    @Test func namesAreUniqueAndConventional() {
        #expect(Set(Self.options.map(\.key)).count == Self.options.count)
        #expect(Set(Self.options.map(\.flag)).count == Self.options.count)
        for option in Self.options {
            #expect(option.key.split(separator: ".").count == 2, "\(option.key): use [section] name")
            #expect(option.key.allSatisfy { $0.isLowercase || $0 == "_" || $0 == "." || $0.isNumber }, "\(option.key)")
            #expect(option.flag.allSatisfy { $0.isLowercase || $0 == "-" || $0.isNumber }, "\(option.flag)")
            #expect(!option.unit.isEmpty, "\(option.key) has no unit")
            #expect(!option.help.isEmpty && !option.help.contains("\n"), "\(option.key) needs one line of help")
        }
    }

    @Test func existingEnvironmentNamesKeepWorking() {
        let names = Set(Self.options.map(\.environmentVariable))
        for name in [
            "CAIRN_HOST", "CAIRN_PORT", "CAIRN_DATA", "CAIRN_MAX_MESSAGE_BYTES", "CAIRN_AUTH_TIMEOUT",
            "CAIRN_PING_INTERVAL", "CAIRN_IDLE_TIMEOUT", "CAIRN_SNAPSHOT_INTERVAL", "CAIRN_MAX_SPEED",
            "CAIRN_SCRYPT_COST", "CAIRN_HASH_WORKERS", "CAIRN_LOG_LEVEL", "CAIRN_TLS_CERT", "CAIRN_TLS_KEY",
        ] {
            #expect(names.contains(name), "\(name) is gone")
        }
    }

    @Test func defaultsAreValidValues() throws {
        for option in Self.options {
            guard let value = option.defaultValue else { continue }
            let resolved = try ConfigurationResolver.resolve(
                environment: [option.environmentVariable: value.description.trimmingCharacters(in: ["\""])])
            #expect(resolved.setting(option.key)?.value == value, "\(option.key)")
        }
    }

    @Test func helpMentionsEveryOption() {
        let help = ConfigurationDocs.helpText()
        for option in Self.options {
            #expect(help.contains("--\(option.flag) <\(option.unit)>\n"))
            #expect(help.contains(option.environmentVariable))
            #expect(
                help.replacingOccurrences(of: "\n", with: " ").replacingOccurrences(of: "      ", with: "").contains(
                    option.help))
        }
    }

    @Test func generatedExampleIsValidAndComplete() {
        let text = ConfigurationDocs.exampleFile()
        #expect(ConfigurationResolver.check(ConfigurationFile(text: text, path: "generated")).isEmpty)
        #expect(Self.keysMentioned(in: text) == Set(Self.options.map(\.key)))
        // Uncommenting every line gives a valid file too (commented values are real values).
        let uncommented = text.split(separator: "\n", omittingEmptySubsequences: false).map { line in
            let body = line.dropFirst(2)
            let isValueLine =
                line.hasPrefix("# ") && body.split(separator: " ", maxSplits: 2).dropFirst().first == "="
                && body.prefix { $0 != " " }.allSatisfy { $0.isLowercase || $0 == "_" }
            return isValueLine ? String(body) : String(line)
        }.joined(separator: "\n")
        let file = ConfigurationFile(text: uncommented, path: "uncommented")
        #expect(file.problems.isEmpty, "\(file.problems)")
        #expect(Set(file.values.keys).count == Self.options.count)
    }

    @Test func shippedExampleFilePassesCheckAndMentionsEveryKey() throws {
        let path = Self.root.appendingPathComponent("deploy/cairn.example.toml").path
        let text = try String(contentsOfFile: path, encoding: .utf8)
        let file = ConfigurationFile(text: text, path: path)
        #expect(ConfigurationResolver.check(file).isEmpty, "\(ConfigurationResolver.check(file))")
        let missing = Set(Self.options.map(\.key)).subtracting(Self.keysMentioned(in: text))
        #expect(missing.isEmpty, "deploy/cairn.example.toml lacks \(missing.sorted()); see `cairn config example`")
    }

    @Test func operationsGuideHasTheCurrentOptionsTable() throws {
        let text = try String(contentsOf: Self.root.appendingPathComponent("docs/OPERATIONS.md"), encoding: .utf8)
        #expect(
            text.contains(ConfigurationDocs.markdownTable()),
            "docs/OPERATIONS.md: replace the options table with the output of `cairn config options`")
    }

    @Test func readmeWarnsAboutTheAuthTimeoutAndSaysWhereTheBinaryIs() throws {
        let text = try String(contentsOf: Self.root.appendingPathComponent("README.md"), encoding: .utf8)
        // The walk-through is pasted by hand: before its first request, the reader learns of the limit and the flag.
        let firstRequest = try #require(text.range(of: #"{"id":1,"op":"register""#))
        let before = text[..<firstRequest.lowerBound]
        let tryIt = try #require(before.range(of: "## Try it"))
        let intro = before[tryIt.upperBound...]
        #expect(intro.contains("10 seconds") && intro.contains("--auth-timeout"))
        // Every flag the README passes to `deploy/run.sh` is a real option.
        let flags = Set(Self.options.map { "--" + $0.flag })
        for line in text.split(separator: "\n") where line.contains("deploy/run.sh --") {
            for word in line.split(separator: " ") where word.hasPrefix("--") {
                let flag = String(word.prefix { $0 != "`" && $0 != "=" })
                #expect(flags.contains(flag), "README: \(flag) is not an option")
            }
        }
        #expect(text.contains(".build/release/cairn"), "README: say where the cairn binary is")
    }

    /// Keys set or shown commented (`# name = ...`) under their `[section]`.
    static func keysMentioned(in text: String) -> Set<String> {
        var section = ""
        var keys = Set<String>()
        for raw in text.split(separator: "\n") {
            let line = raw.trimmingCharacters(in: .whitespaces)
            if line.hasPrefix("[") && line.hasSuffix("]") {
                section = String(line.dropFirst().dropLast())
                continue
            }
            let body = line.hasPrefix("#") ? line.dropFirst().trimmingCharacters(in: .whitespaces) : line
            guard let equals = body.range(of: " = ") else { continue }
            let name = body[..<equals.lowerBound]
            guard !name.isEmpty, name.allSatisfy({ $0.isLowercase || $0 == "_" || $0.isNumber }) else { continue }
            keys.insert(section.isEmpty ? String(name) : "\(section).\(name)")
        }
        return keys
    }
}
