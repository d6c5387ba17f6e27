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
