// Why this exists: TLS tests need a certificate the client can verify, made fresh for each run so nothing secret
// or expiring lives in the repository. This runs the `openssl` command (Debian package `openssl`, installed by
// deploy/install-deps.sh) to make a self-signed certificate for `localhost` and 127.0.0.1, valid for two days.

import Foundation

/// A self-signed certificate and its key, as PEM files in a directory.
public struct SelfSignedCertificate: Sendable {
    /// The certificate (also the file a client must trust).
    public let certificatePath: String
    /// The unencrypted private key.
    public let keyPath: String

    /// Creates `name.crt` and `name.key` in `directory` (which must exist).
    public static func make(in directory: String, name: String = "cairn-test") throws -> SelfSignedCertificate {
        let certificate = (directory as NSString).appendingPathComponent("\(name).crt")
        let key = (directory as NSString).appendingPathComponent("\(name).key")
        try runOpenSSL([
            "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
            "-keyout", key, "-out", certificate, "-days", "2", "-subj", "/CN=localhost",
            "-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1",
        ])
        return SelfSignedCertificate(certificatePath: certificate, keyPath: key)
    }

    /// Runs `openssl` with `arguments`; throws with its output when it fails.
    public static func runOpenSSL(_ arguments: [String]) throws {
        let candidates = ["/usr/bin/openssl", "/usr/local/bin/openssl", "/bin/openssl"]
        guard let executable = candidates.first(where: { FileManager.default.isExecutableFile(atPath: $0) }) else {
            throw TestServerError.launchFailed(executable: "openssl", reason: "not installed (apt-get install openssl)")
        }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        process.standardInput = FileHandle.nullDevice
        try process.run()
        let output = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw TestServerError.launchFailed(
                executable: executable,
                reason: "exit \(process.terminationStatus): \(String(decoding: output, as: UTF8.self))")
        }
    }
}
