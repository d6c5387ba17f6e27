// The TOML file: values land under their dotted keys, and every mistake is reported by key, value and expectation
// (unknown keys with a suggestion, wrong types, out-of-range values, bad choices, syntax errors), all at once.
import CairnConfig
import Foundation
import Testing

@Suite(.timeLimit(.minutes(5)))
struct ConfigurationFileTests {
    @Test func readsTablesAndDottedKeys() {
        let file = ConfigurationFile(
            text: """
                connections.ping_interval = 20
                [server]
                host = "0.0.0.0"
                port = 8443
                [storage]
                snapshot_interval = 2      # an integer is a fine number of seconds
                [log]
                level = "WARNING"
                """, path: "a.toml")
        #expect(file.problems.isEmpty)
        #expect(file.values["server.host"] == .string("0.0.0.0"))
        #expect(file.values["server.port"] == .integer(8443))
        #expect(file.values["connections.ping_interval"] == .integer(20))
        #expect(file.values["storage.snapshot_interval"] == .decimal(2))
        #expect(file.values["log.level"] == .string("warning"))
    }

    @Test func everyWrongKeyAndValueIsNamed() {
        let file = ConfigurationFile(
            text: """
                port = 7681
                [server]
                prot = 7681
                host = 12
                [connections]
                max_message_bytes = 10
                auth_timeout = "10s"
                [accounts]
                scrypt_cost = 15.5
                [log]
                level = "loud"
                [srever]
                [tls]
                certificate = ""
                """, path: "bad.toml")
        let messages = file.problems.map(\.description)
        #expect(file.problems.count == 9, "\(messages)")
        #expect(messages.contains("bad.toml: unknown key 'port' (did you mean 'server.port'?)"))
        #expect(messages.contains("bad.toml: unknown key 'server.prot' (did you mean 'server.port'?)"))
        #expect(messages.contains("bad.toml: server.host = 12 is an integer: expected non-empty text (address)"))
        #expect(
            messages.contains(
                "bad.toml: connections.max_message_bytes = 10 is out of range: expected an integer in "
                    + "1024...16777216 (bytes)"
            ))
        #expect(
            messages.contains(
                "bad.toml: connections.auth_timeout = \"10s\" is a string: expected a number in 0.1...3600 (seconds)"))
        #expect(
            messages.contains(
                "bad.toml: accounts.scrypt_cost = 15.5 is a floating-point number: expected an integer in "
                    + "10...20 (log2(N))"
            ))
        #expect(
            messages.contains(
                "bad.toml: log.level = \"loud\" is not a valid choice: expected one of trace, debug, "
                    + "info, notice, warning, error, critical (level)"))
        #expect(messages.contains("bad.toml: unknown table [srever] (did you mean '[server]'?)"))
        #expect(messages.contains("bad.toml: tls.certificate = \"\" is empty: expected a path (PEM file)"))
        // Valid values beside the mistakes are still read.
        #expect(file.values.isEmpty)
    }

    @Test func aSectionUsedAsAValueIsNamed() {
        let file = ConfigurationFile(text: "server = 5\n", path: "s.toml")
        #expect(file.problems.map(\.description) == ["s.toml: server must be a table ([server]), not an integer"])
    }

    @Test func syntaxErrorsGiveLineAndColumn() throws {
        let file = ConfigurationFile(text: "[server]\nport = = 3\n", path: "x.toml")
        let problem = try #require(file.problems.first)
        #expect(file.problems.count == 1)
        #expect(problem.description.hasPrefix("x.toml: TOML syntax error at line 2"))
    }

    @Test func duplicateKeysAreSyntaxErrors() {
        let file = ConfigurationFile(text: "[server]\nport = 1\nport = 2\n", path: "d.toml")
        #expect(file.problems.count == 1)
        #expect(file.problems.first?.message.contains("syntax error") == true)
    }

    @Test func aMissingFileIsAProblemNotACrash() {
        let file = ConfigurationFile.load(path: "/nonexistent/cairn.toml")
        #expect(file.problems.map(\.description) == ["/nonexistent/cairn.toml: configuration file does not exist"])
    }

    @Test func checkAppliesRulesAcrossOptionsToTheFile() {
        let file = ConfigurationFile(text: "[connections]\nping_interval = 90\n", path: "r.toml")
        #expect(file.problems.isEmpty)
        let problems = ConfigurationResolver.check(file)
        #expect(
            problems.map(\.description) == [
                "r.toml: connections.idle_timeout (60 s) must be greater than connections.ping_interval (90 s)"
            ])
    }
}
