// Flags read from the option table: both `--flag value` and `--flag=value`, the last of a repeated flag wins, and
// unknown flags (with their value), missing values and stray words are refused with a suggestion where one is close.
import CairnConfig
import Testing

@Suite(.timeLimit(.minutes(5)))
struct CommandLineSettingsTests {
    @Test func readsBothForms() throws {
        let settings = try CommandLineSettings(["--port", "0", "--data=/tmp/x", "--port", "9"])
        #expect(settings.entries["server.port"] == .init(flag: "--port", text: "9"))
        #expect(settings.entries["storage.directory"] == .init(flag: "--data", text: "/tmp/x"))
    }

    @Test func negativeNumbersAreValues() throws {
        let settings = try CommandLineSettings(["--max-speed", "-5"])
        #expect(settings.entries["positions.max_speed"]?.text == "-5")
    }

    @Test func refusesUnknownFlagsMissingValuesAndStrayWords() throws {
        let error = try #require(throws: ConfigurationErrors.self) {
            try CommandLineSettings(["--prot", "1", "extra", "--tls-cert"])
        }
        let messages = error.problems.map(\.description)
        #expect(messages.contains("command line: unknown option '--prot' (did you mean '--port'?)"))
        #expect(error.problems.count == 3)
        #expect(messages.contains("command line: unexpected argument 'extra' (options are written --name value)"))
        #expect(messages.contains("command line: --tls-cert needs a value: expected a path (PEM file)"))
    }
}
