// HMAC-SHA-256 (RFC 2104) through OpenSSL. Signed media URLs carry an HMAC of the media id and the expiry under a
// secret only the hub knows, so a URL can be checked without any lookup and cannot be forged or extended.
import COpenSSL

/// Keyed message authentication codes.
public enum HMAC {
    /// HMAC-SHA-256 of `message` under `key` (32 bytes).
    public static func sha256(key: [UInt8], message: [UInt8]) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: 32)
        var length: UInt32 = 32
        let ok = key.withUnsafeBufferPointer { k in
            message.withUnsafeBufferPointer { m in
                out.withUnsafeMutableBufferPointer { o in
                    // A non-null key pointer even for an empty key: OpenSSL treats NULL as "reuse the last key".
                    withUnsafePointer(to: UInt8(0)) { zero in
                        COpenSSL.HMAC(
                            EVP_sha256(), k.baseAddress.map { UnsafeRawPointer($0) } ?? UnsafeRawPointer(zero),
                            Int32(k.count), m.baseAddress ?? zero, m.count, o.baseAddress, &length)
                    }
                }
            }
        }
        precondition(ok != nil && length == 32, "OpenSSL HMAC-SHA-256 failed")
        return out
    }
}

extension HMAC {
    /// An HMAC-SHA-256 key prepared once: the inner and outer digests have absorbed the padded key, so a message
    /// costs two digest copies and its own bytes, not a key schedule (about a third of `sha256(key:message:)` on short
    /// messages: the cluster signs every message it publishes). Not for concurrent use: one owner thread at a time
    /// (the event loop's).
    public final class PreparedKey: @unchecked Sendable {
        private let inner: OpaquePointer
        private let outer: OpaquePointer
        private let work: OpaquePointer

        /// Prepares `key` (any length; longer than a block, it is hashed first, as RFC 2104 says).
        public init(_ key: [UInt8]) {
            var block = [UInt8](repeating: 0, count: 64)
            if key.count > 64 {
                var digest = [UInt8](repeating: 0, count: 32)
                _ = SHA256(key, key.count, &digest)
                block.replaceSubrange(0..<32, with: digest)
            } else {
                block.replaceSubrange(0..<key.count, with: key)
            }
            guard let inner = EVP_MD_CTX_new(), let outer = EVP_MD_CTX_new(), let work = EVP_MD_CTX_new() else {
                preconditionFailure("OpenSSL could not allocate a digest context")
            }
            (self.inner, self.outer, self.work) = (inner, outer, work)
            let ipad = block.map { $0 ^ 0x36 }
            let opad = block.map { $0 ^ 0x5c }
            precondition(
                EVP_DigestInit_ex(inner, EVP_sha256(), nil) == 1 && EVP_DigestUpdate(inner, ipad, 64) == 1
                    && EVP_DigestInit_ex(outer, EVP_sha256(), nil) == 1 && EVP_DigestUpdate(outer, opad, 64) == 1,
                "OpenSSL SHA-256 failed")
        }

        deinit {
            EVP_MD_CTX_free(inner)
            EVP_MD_CTX_free(outer)
            EVP_MD_CTX_free(work)
        }

        /// HMAC-SHA-256 of `message` under this key.
        public func sha256(_ message: [UInt8]) -> [UInt8] {
            var middle = [UInt8](repeating: 0, count: 32)
            var out = [UInt8](repeating: 0, count: 32)
            var length: UInt32 = 0
            let ok = message.withUnsafeBytes { m in
                EVP_MD_CTX_copy_ex(work, inner) == 1 && EVP_DigestUpdate(work, m.baseAddress, m.count) == 1
                    && EVP_DigestFinal_ex(work, &middle, &length) == 1 && EVP_MD_CTX_copy_ex(work, outer) == 1
                    && EVP_DigestUpdate(work, middle, 32) == 1 && EVP_DigestFinal_ex(work, &out, &length) == 1
            }
            precondition(ok, "OpenSSL SHA-256 failed")
            return out
        }
    }
}
