// TLS on the hub's one port, against a fresh self-signed certificate: https GET /healthz and a wss round trip with
// a client that verifies the certificate and the name, ALPN that settles on http/1.1 even when h2 is offered, a
// client that does not trust the certificate failing verification, and the real `cairn serve` announcing TLS and
// refusing unusable TLS settings by name; TLS 1.0/1.1 and weak TLS 1.2 suites refused, and tls.min_version.
import CairnApp
import CairnServer
import CairnTestSupport
import Foundation
import Glibc
import Testing

extension ServerIntegration {
    @Suite struct TLSTests {
        static func workDirectory() throws -> String {
            let dir = NSTemporaryDirectory() + "cairn-tls-\(UUID().uuidString)"
            try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
            return dir
        }

        @Test func httpsAndWssRoundTripWithAVerifiedCertificate() throws {
            let dir = try Self.workDirectory()
            defer { try? FileManager.default.removeItem(atPath: dir) }
            let cert = try SelfSignedCertificate.make(in: dir)
            let hub = try RunningHub { config in
                config.server.tlsCertificatePath = cert.certificatePath
                config.server.tlsPrivateKeyPath = cert.keyPath
            }
            defer { hub.removeData() }
            let trusted = TLSOptions(trustedCertificates: cert.certificatePath)

            let health = try HTTPClient.get(port: hub.port, path: "/healthz", timeout: 10, tls: trusted)
            #expect(health.status == 200)
            #expect(try health.jsonObject()["status"] as? String == "ok")

            // By name too: the certificate is for localhost as well as 127.0.0.1.
            let byName = TLSOptions(trustedCertificates: cert.certificatePath, expectedName: "localhost")
            let client = try WebSocketClient(port: hub.port, timeout: 10, tls: byName)
            #expect(client.tlsProtocol == "http/1.1")
            let reply = try client.requestOK("guest")
            #expect((reply["user"] as? [String: Any])?["id"] is Int)
            #expect(try client.requestOK("whoami")["user"] != nil)
            client.close()  // the close handshake over TLS, too
            try hub.stop()
        }

        @Test func alpnKeepsOneSocketOneConnection() throws {
            let dir = try Self.workDirectory()
            defer { try? FileManager.default.removeItem(atPath: dir) }
            let cert = try SelfSignedCertificate.make(in: dir)
            let hub = try RunningHub { config in
                config.server.tlsCertificatePath = cert.certificatePath
                config.server.tlsPrivateKeyPath = cert.keyPath
            }
            defer { hub.removeData() }
            // A browser offers h2 first; the hub must still pick HTTP/1.1 so the WebSocket is its own TCP connection.
            let offer = TLSOptions(trustedCertificates: cert.certificatePath, alpn: ["h2", "http/1.1"])
            let client = try WebSocketClient(port: hub.port, timeout: 10, tls: offer)
            #expect(client.tlsProtocol == "http/1.1")
            _ = try client.requestOK("guest")
            client.close()
            try hub.stop()
        }

        @Test func aClientThatDoesNotTrustTheCertificateFailsVerification() throws {
            let dir = try Self.workDirectory()
            defer { try? FileManager.default.removeItem(atPath: dir) }
            let cert = try SelfSignedCertificate.make(in: dir)
            let other = try SelfSignedCertificate.make(in: dir, name: "other")
            let hub = try RunningHub { config in
                config.server.tlsCertificatePath = cert.certificatePath
                config.server.tlsPrivateKeyPath = cert.keyPath
            }
            defer { hub.removeData() }
            for options in [
                TLSOptions(trustedCertificates: nil), TLSOptions(trustedCertificates: other.certificatePath),
                TLSOptions(trustedCertificates: cert.certificatePath, expectedName: "example.org"),
            ] {
                let error = try #require(throws: TestClientError.self) {
                    _ = try WebSocketClient(port: hub.port, timeout: 10, tls: options)
                }
                guard case .tlsFailed(let detail) = error else {
                    Issue.record("expected a TLS failure, got \(error)")
                    continue
                }
                #expect(detail.contains("certificate verify failed"), "\(detail)")
            }
            // Plain text on the TLS port gets no hub answer.
            #expect(throws: (any Error).self) { _ = try HTTPClient.get(port: hub.port, path: "/healthz", timeout: 5) }
            // And the hub still serves trusted clients afterwards.
            let health = try HTTPClient.get(
                port: hub.port, path: "/healthz", timeout: 10,
                tls: TLSOptions(trustedCertificates: cert.certificatePath))
            #expect(health.status == 200)
            try hub.stop()
        }

        @Test func serveAnnouncesTLSAndStopsCleanly() throws {
            let dir = try Self.workDirectory()
            defer { try? FileManager.default.removeItem(atPath: dir) }
            let cert = try SelfSignedCertificate.make(in: dir)
            let server = try TestServerProcess(
                arguments: ["serve", "--port", "0", "--data", dir + "/data", "--scrypt-cost", "10"],
                environment: ["CAIRN_TLS_CERT": cert.certificatePath, "CAIRN_TLS_KEY": cert.keyPath])
            let line = try server.waitForLine(containing: "cairn listening on", timeout: 60)
            #expect(line.hasSuffix(" (tls)"))
            let port = try server.waitForListeningPort()
            let client = try WebSocketClient(
                port: port, timeout: 10,
                tls: TLSOptions(trustedCertificates: cert.certificatePath))
            _ = try client.requestOK("register", ["username": "tess", "password": "password1"])
            server.signal(SIGTERM)
            #expect(try client.expectClose(timeout: 15).code == 1001)
            #expect(try server.waitForExit(timeout: 15) == 0, "output: \(server.output)")
        }

        @Test func unusableTLSSettingsAreRefusedByName() throws {
            let dir = try Self.workDirectory()
            defer { try? FileManager.default.removeItem(atPath: dir) }
            let cert = try SelfSignedCertificate.make(in: dir)
            // Only a certificate, and a key path that does not exist: both named, exit 78 (EX_CONFIG).
            let half = try TestServerProcess(arguments: [
                "serve", "--port", "0", "--data", dir + "/data",
                "--tls-cert", cert.certificatePath,
            ])
            #expect(try half.waitForExit(timeout: 30) == 78)
            #expect(half.output.contains("tls.certificate is set but tls.key is not"), "\(half.output)")
            let missing = try TestServerProcess(arguments: [
                "serve", "--port", "0", "--data", dir + "/data",
                "--tls-cert", cert.certificatePath,
                "--tls-key", dir + "/absent.key",
            ])
            #expect(try missing.waitForExit(timeout: 30) == 78)
            #expect(missing.output.contains("tls.key file '\(dir)/absent.key' does not exist"), "\(missing.output)")
            // A key that does not belong to the certificate: libwebsockets refuses it and the hub says so.
            let other = try SelfSignedCertificate.make(in: dir, name: "other")
            let mismatched = try TestServerProcess(arguments: [
                "serve", "--port", "0", "--data", dir + "/data",
                "--tls-cert", cert.certificatePath,
                "--tls-key", other.keyPath,
            ])
            #expect(try mismatched.waitForExit(timeout: 30) != 0)
            #expect(mismatched.output.contains("with TLS"), "\(mismatched.output)")
        }

        /// True when a TLS handshake and a GET /healthz with `options` succeed.
        static func handshakes(port: Int, _ options: TLSOptions) -> Bool {
            (try? HTTPClient.get(port: port, path: "/healthz", timeout: 10, tls: options).status) == 200
        }

        @Test func oldProtocolsAndWeakSuitesAreRefused() throws {
            let dir = try Self.workDirectory()
            defer { try? FileManager.default.removeItem(atPath: dir) }
            let cert = try SelfSignedCertificate.make(in: dir)
            let hub = try RunningHub { config in
                config.server.tlsCertificatePath = cert.certificatePath
                config.server.tlsPrivateKeyPath = cert.keyPath
            }
            defer { hub.removeData() }
            let trusted = cert.certificatePath
            // TLS 1.1 (offered at security level 0, which OpenSSL 3 needs to speak it at all).
            #expect(
                !Self.handshakes(
                    port: hub.port,
                    TLSOptions(
                        trustedCertificates: trusted,
                        maxVersion: .tls11,
                        ciphers: "DEFAULT@SECLEVEL=0")))
            // TLS 1.2 with only CBC suites without AEAD (which OpenSSL alone would still accept).
            let cbcOnly = "ECDHE-ECDSA-AES128-SHA:ECDHE-RSA-AES128-SHA"
            #expect(
                !Self.handshakes(
                    port: hub.port,
                    TLSOptions(
                        trustedCertificates: trusted, maxVersion: .tls12,
                        ciphers: cbcOnly)))
            // TLS 1.2 with a modern suite, and the default (TLS 1.3), work.
            #expect(
                Self.handshakes(
                    port: hub.port,
                    TLSOptions(
                        trustedCertificates: trusted,
                        maxVersion: .tls12,
                        ciphers: "ECDHE-ECDSA-AES128-GCM-SHA256")))
            #expect(Self.handshakes(port: hub.port, TLSOptions(trustedCertificates: trusted)))
            try hub.stop()
        }

        @Test func aMinimumOfTLS13RefusesTLS12Clients() throws {
            let dir = try Self.workDirectory()
            defer { try? FileManager.default.removeItem(atPath: dir) }
            let cert = try SelfSignedCertificate.make(in: dir)
            let server = try TestServerProcess(
                arguments: [
                    "serve", "--port", "0", "--data", dir + "/data", "--tls-cert", cert.certificatePath,
                    "--tls-key", cert.keyPath, "--tls-min-version", "1.3",
                ])
            let port = try server.waitForListeningPort(timeout: 60)
            let trusted = cert.certificatePath
            #expect(
                !Self.handshakes(
                    port: port,
                    TLSOptions(
                        trustedCertificates: trusted,
                        maxVersion: .tls12)))
            #expect(Self.handshakes(port: port, TLSOptions(trustedCertificates: trusted)))
            server.signal(SIGTERM)
            #expect(try server.waitForExit(timeout: 15) == 0, "output: \(server.output)")
        }
    }
}
