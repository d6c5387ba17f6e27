// Precedence (flag > environment > file > default), the source each value reports, and that problems from every
// source are collected and named.
import CairnApp
import CairnConfig
import CairnCore
import CairnCrypto
import CairnServer
import Foundation
import Logging
import Testing

@Suite(.timeLimit(.minutes(5)))
struct ConfigurationResolverTests {
    @Test func defaultsMatchTheConfigurationStructs() throws {
        let resolved = try ConfigurationResolver.resolve()
        let app = resolved.app
        let plain = AppConfiguration()
        #expect(app.server.host == plain.server.host)
        #expect(app.server.port == plain.server.port)
        #expect(app.server.maxMessageBytes == plain.server.maxMessageBytes)
        #expect(app.server.maxOutboundBytes == plain.server.maxOutboundBytes)
        #expect(app.server.pingIntervalSeconds == plain.server.pingIntervalSeconds)
        #expect(app.server.idleTimeoutSeconds == plain.server.idleTimeoutSeconds)
        #expect(app.server.shutdownGraceSeconds == plain.server.shutdownGraceSeconds)
        #expect(app.server.fileLimit == plain.server.fileLimit)
        #expect(app.server.tlsCertificatePath == nil && app.server.tlsPrivateKeyPath == nil)
        #expect(app.dataDirectory == plain.dataDirectory)
        #expect(app.hub.authTimeoutMs == plain.hub.authTimeoutMs)
        #expect(app.hub.snapshotIntervalMs == plain.hub.snapshotIntervalMs)
        #expect(app.hub.maxSpeed == plain.hub.maxSpeed)
        #expect(app.hub.watchMaxAgeMs == plain.hub.watchMaxAgeMs)
        #expect(app.hub.staleAfterMs == plain.hub.staleAfterMs)
        #expect(app.hub.approximateHysteresis == plain.hub.approximateHysteresis)
        #expect(app.scrypt == plain.scrypt)
        #expect(app.hashWorkers == ProcessInfo.processInfo.activeProcessorCount)
        #expect(app.logLevel == .info)
        #expect(app.media.maxBytes == plain.media.maxBytes)
        #expect(app.media.urlLifetimeMs == plain.media.urlLifetimeMs)
        #expect(app.media.garbageGraceMs == plain.media.garbageGraceMs)
        #expect(app.media.garbagePeriodMs == plain.media.garbagePeriodMs)
        #expect(app.hub.relicRetentionMs == plain.hub.relicRetentionMs)
        #expect(app.hub.relicsPerUser == plain.hub.relicsPerUser)
        #expect(resolved.settings.allSatisfy { $0.source == .defaultValue })
    }

    @Test func flagBeatsEnvironmentBeatsFileBeatsDefault() throws {
        let file = ConfigurationFile(
            text: """
                [server]
                port = 1111
                host = "10.0.0.1"
                [connections]
                auth_timeout = 2.5
                """, path: "cairn.toml")
        #expect(file.problems.isEmpty)
        let resolved = try ConfigurationResolver.resolve(
            file: file,
            environment: ["CAIRN_PORT": "2222", "CAIRN_HOST": "10.0.0.2", "CAIRN_MAX_SPEED": "42"],
            commandLine: CommandLineSettings(["--port", "3333"]))
        #expect(resolved.app.server.port == 3333)
        #expect(resolved.setting("server.port")?.source == .flag("--port"))
        #expect(resolved.app.server.host == "10.0.0.2")
        #expect(resolved.setting("server.host")?.source == .environment("CAIRN_HOST"))
        #expect(resolved.app.hub.authTimeoutMs == 2500)
        #expect(resolved.setting("connections.auth_timeout")?.source == .file("cairn.toml"))
        #expect(resolved.app.hub.maxSpeed == 42)
        #expect(resolved.app.server.idleTimeoutSeconds == 60)
        #expect(resolved.setting("connections.idle_timeout")?.source == .defaultValue)
    }

    @Test func aFlagHidesABadEnvironmentValue() throws {
        let resolved = try ConfigurationResolver.resolve(
            environment: ["CAIRN_PORT": "not-a-port"],
            commandLine: CommandLineSettings(["--port=0"]))
        #expect(resolved.app.server.port == 0)
    }

    @Test func emptyEnvironmentValuesAreIgnored() throws {
        let resolved = try ConfigurationResolver.resolve(environment: ["CAIRN_HOST": ""])
        #expect(resolved.app.server.host == "127.0.0.1")
    }

    @Test func everyProblemIsReportedWithItsSource() throws {
        let file = ConfigurationFile(text: "[server]\nport = 70000\n", path: "f.toml")
        let error = try #require(throws: ConfigurationErrors.self) {
            try ConfigurationResolver.resolve(
                file: file, environment: ["CAIRN_MAX_SPEED": "fast"],
                commandLine: CommandLineSettings(["--scrypt-cost", "9"]))
        }
        let text = error.description
        #expect(error.problems.count == 3)
        #expect(
            text.contains("f.toml: server.port = 70000 is out of range: expected an integer in 0...65535 (TCP port)"))
        #expect(text.contains("environment: CAIRN_MAX_SPEED='fast' is not a number"))
        #expect(
            text.contains("command line: --scrypt-cost '9' is out of range: expected an integer in 10...20 (log2(N))"))
    }

    @Test func crossOptionRulesNameBothKeys() throws {
        let error = try #require(throws: ConfigurationErrors.self) {
            try ConfigurationResolver.resolve(
                commandLine: CommandLineSettings(["--ping-interval", "60", "--idle-timeout", "30"]))
        }
        #expect(
            error.description.contains(
                "connections.idle_timeout (30 s) must be greater than connections.ping_interval (60 s)"))
    }

    @Test func tlsNeedsBothFiles() throws {
        let error = try #require(throws: ConfigurationErrors.self) {
            try ConfigurationResolver.resolve(environment: ["CAIRN_TLS_CERT": "/nonexistent/cert.pem"])
        }
        #expect(error.description.contains("tls.certificate is set but tls.key is not"))
        #expect(error.description.contains("tls.certificate file '/nonexistent/cert.pem' does not exist"))
    }

    @Test func tlsFilesMustHoldPEM() throws {
        let dir = NSTemporaryDirectory() + "cairn-pem-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try "not a certificate".write(toFile: dir + "/cert.pem", atomically: true, encoding: .utf8)
        try "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n".write(
            toFile: dir + "/key.pem", atomically: true, encoding: .utf8)
        let error = try #require(throws: ConfigurationErrors.self) {
            try ConfigurationResolver.resolve(
                commandLine: CommandLineSettings([
                    "--tls-cert", dir + "/cert.pem",
                    "--tls-key", dir + "/key.pem",
                ]))
        }
        #expect(error.problems.count == 1)
        #expect(error.description.contains("holds no PEM 'CERTIFICATE' block"))
    }

    @Test func valuesLandWhereTheyBelong() throws {
        let resolved = try ConfigurationResolver.resolve(
            commandLine: CommandLineSettings([
                "--scrypt-cost", "12", "--snapshot-interval", "0.25", "--log-level", "DEBUG", "--data", "/srv/cairn",
                "--max-outbound-bytes", "131072", "--shutdown-grace", "9", "--file-limit", "4096",
            ]))
        #expect(resolved.app.scrypt.n == 4096)
        #expect(resolved.app.hub.snapshotIntervalMs == 250)
        #expect(resolved.app.logLevel == .debug)
        #expect(resolved.app.dataDirectory == "/srv/cairn")
        #expect(resolved.app.server.maxOutboundBytes == 131072)
        #expect(resolved.app.server.shutdownGraceSeconds == 9)
        #expect(resolved.app.server.fileLimit == 4096)
    }
}
