// Why this exists: the hub's TLS (wss:// and https://) must be tested the way a phone would use it — a real TLS
// handshake that verifies the server's certificate against a trusted CA file and checks the name — not by turning
// verification off. This wraps OpenSSL's libssl around an already-connected non-blocking LoopbackSocket; every
// step is bounded by the caller's Deadline through poll(), like the plain socket.

import CLibSSL
import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A TLS protocol version a test client may be limited to.
public enum TLSProtocolVersion: Sendable {
    case tls11, tls12, tls13

    var openSSLValue: Int {
        switch self {
        case .tls11: Int(TLS1_1_VERSION)
        case .tls12: Int(TLS1_2_VERSION)
        case .tls13: Int(TLS1_3_VERSION)
        }
    }
}

/// How a test client should speak TLS.
public struct TLSOptions: Sendable {
    /// PEM file of the certificates to trust (for a self-signed server: its own certificate). Nil trusts nothing,
    /// so verification must fail.
    public var trustedCertificates: String?
    /// The name or IP address the certificate must be valid for; nil means the host connected to.
    public var expectedName: String?
    /// ALPN protocols to offer, in preference order.
    public var alpn: [String]
    /// The newest protocol version to offer; nil offers what OpenSSL does.
    public var maxVersion: TLSProtocolVersion?
    /// TLS 1.2-and-older cipher suites to offer (OpenSSL syntax); nil offers OpenSSL's defaults. Old protocol
    /// versions need "@SECLEVEL=0" here, or OpenSSL 3 will not even offer them.
    public var ciphers: String?

    /// Verifies against `trustedCertificates`, checking the name (or IP) the client connects to.
    public init(
        trustedCertificates: String?, expectedName: String? = nil, alpn: [String] = ["http/1.1"],
        maxVersion: TLSProtocolVersion? = nil, ciphers: String? = nil
    ) {
        self.trustedCertificates = trustedCertificates
        self.expectedName = expectedName
        self.alpn = alpn
        self.maxVersion = maxVersion
        self.ciphers = ciphers
    }
}

/// One TLS connection over a connected socket. Not thread-safe; owned by its LoopbackSocket.
final class TLSClientSession {
    private let context: OpaquePointer
    private let ssl: OpaquePointer
    /// The ALPN protocol the server selected ("" if none).
    let negotiatedProtocol: String

    /// Performs the handshake on `fd` (non-blocking), verifying the peer as `options` say.
    init(fd: Int32, host: String, options: TLSOptions, deadline: Deadline) throws {
        guard let context = SSL_CTX_new(TLS_client_method()) else {
            throw TestClientError.tlsFailed("SSL_CTX_new failed")
        }
        self.context = context
        SSL_CTX_set_verify(context, SSL_VERIFY_PEER, nil)
        // Partial writes are retried from wherever the Swift buffer lives at that moment.
        _ = SSL_CTX_ctrl(context, SSL_CTRL_MODE, Int(SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER), nil)
        if let version = options.maxVersion {
            _ = SSL_CTX_ctrl(context, SSL_CTRL_SET_MAX_PROTO_VERSION, version.openSSLValue, nil)
        }
        if let ciphers = options.ciphers, SSL_CTX_set_cipher_list(context, ciphers) != 1 {
            SSL_CTX_free(context)
            throw TestClientError.tlsFailed("cipher list '\(ciphers)' refused: \(Self.errorQueue())")
        }
        if let trusted = options.trustedCertificates,
            SSL_CTX_load_verify_locations(context, trusted, nil) != 1
        {
            SSL_CTX_free(context)
            throw TestClientError.tlsFailed("cannot load trusted certificates from \(trusted): \(Self.errorQueue())")
        }
        guard let ssl = SSL_new(context) else {
            SSL_CTX_free(context)
            throw TestClientError.tlsFailed("SSL_new failed")
        }
        self.ssl = ssl
        let name = options.expectedName ?? host
        var address = in_addr()
        if inet_pton(AF_INET, name, &address) == 1 {
            _ = X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(ssl), name)
        } else {
            _ = SSL_set1_host(ssl, name)
            _ = name.withCString {
                SSL_ctrl(
                    ssl, SSL_CTRL_SET_TLSEXT_HOSTNAME, Int(TLSEXT_NAMETYPE_host_name),
                    UnsafeMutableRawPointer(mutating: $0))
            }
        }
        var wire: [UInt8] = []
        for proto in options.alpn {
            wire.append(UInt8(proto.utf8.count))
            wire += proto.utf8
        }
        if !wire.isEmpty { _ = SSL_set_alpn_protos(ssl, wire, UInt32(wire.count)) }
        SSL_set_fd(ssl, fd)

        var protocolName = ""
        do {
            try Self.retry(ssl: ssl, fd: fd, deadline: deadline, what: "TLS handshake") { SSL_connect(ssl) }
            var data: UnsafePointer<UInt8>?
            var length: UInt32 = 0
            SSL_get0_alpn_selected(ssl, &data, &length)
            if let data, length > 0 {
                protocolName = String(decoding: UnsafeBufferPointer(start: data, count: Int(length)), as: UTF8.self)
            }
        } catch {
            SSL_free(ssl)
            SSL_CTX_free(context)
            throw error
        }
        negotiatedProtocol = protocolName
    }

    deinit {
        SSL_free(ssl)
        SSL_CTX_free(context)
    }

    /// Writes all of `bytes`.
    func write(_ bytes: [UInt8], fd: Int32, deadline: Deadline) throws {
        var offset = 0
        while offset < bytes.count {
            let written = try Self.retry(ssl: ssl, fd: fd, deadline: deadline, what: "TLS write") {
                bytes.withUnsafeBytes { SSL_write(ssl, $0.baseAddress! + offset, Int32($0.count - offset)) }
            }
            offset += Int(written)
        }
    }

    /// Reads what is available (waiting until `deadline`); nil at the end of the stream.
    func read(fd: Int32, deadline: Deadline, maxBytes: Int) throws -> [UInt8]? {
        var buffer = [UInt8](repeating: 0, count: maxBytes)
        do {
            let count = try Self.retry(ssl: ssl, fd: fd, deadline: deadline, what: "TLS read") {
                buffer.withUnsafeMutableBytes { SSL_read(ssl, $0.baseAddress, Int32($0.count)) }
            }
            return Array(buffer[0..<Int(count)])
        } catch TestClientError.connectionLost {
            return nil
        }
    }

    /// Reads and discards what is already decrypted or buffered, without waiting.
    func drainAvailable() {
        var buffer = [UInt8](repeating: 0, count: 16384)
        while buffer.withUnsafeMutableBytes({ SSL_read(ssl, $0.baseAddress, Int32($0.count)) }) > 0 {}
    }

    /// Runs `operation` until it succeeds, polling the socket when OpenSSL wants to read or write.
    @discardableResult
    private static func retry(
        ssl: OpaquePointer, fd: Int32, deadline: Deadline, what: String,
        _ operation: () -> Int32
    ) throws -> Int32 {
        while true {
            ERR_clear_error()
            let result = operation()
            if result > 0 { return result }
            let code = SSL_get_error(ssl, result)
            switch code {
            case SSL_ERROR_WANT_READ, SSL_ERROR_WANT_WRITE:
                var pfd = pollfd(fd: fd, events: Int16(code == SSL_ERROR_WANT_READ ? POLLIN : POLLOUT), revents: 0)
                let rc = poll(&pfd, 1, deadline.pollMilliseconds)
                if rc == 0 && deadline.hasPassed { throw TestClientError.timeout(what) }
                if rc < 0 && errno != EINTR {
                    throw TestClientError.ioFailed("poll: \(String(cString: strerror(errno)))")
                }
            case SSL_ERROR_ZERO_RETURN:
                throw TestClientError.connectionLost("\(what): the server closed the TLS session")
            case SSL_ERROR_SYSCALL where ERR_peek_error() == 0:
                throw TestClientError.connectionLost("\(what): the connection ended")
            default:
                let verify = SSL_get_verify_result(ssl)
                var detail = errorQueue()
                if verify != Int(X509_V_OK) {
                    detail += "; certificate: " + String(cString: X509_verify_cert_error_string(verify))
                }
                throw TestClientError.tlsFailed("\(what): \(detail)")
            }
        }
    }

    /// OpenSSL's error queue as text.
    static func errorQueue() -> String {
        var parts: [String] = []
        while true {
            let code = ERR_get_error()
            if code == 0 { break }
            var buffer = [CChar](repeating: 0, count: 256)
            ERR_error_string_n(code, &buffer, buffer.count)
            parts.append(String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))
        }
        return parts.isEmpty ? "unknown TLS error" : parts.joined(separator: "; ")
    }
}
