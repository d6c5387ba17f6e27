// SHA-256 and SHA-1 through OpenSSL. SHA-256 is how session tokens are stored (only their digest reaches SQLite);
// constant-time comparison keeps hash checks from leaking where two values first differ.
import COpenSSL

/// Message digests.
public enum Digest {
    /// The SHA-256 digest of `bytes` (32 bytes).
    public static func sha256<C: Collection>(_ bytes: C) -> [UInt8] where C.Element == UInt8 {
        var out = [UInt8](repeating: 0, count: 32)
        let input = Array(bytes)
        input.withUnsafeBufferPointer { inp in
            out.withUnsafeMutableBufferPointer { o in
                _ = SHA256(inp.baseAddress, inp.count, o.baseAddress)
            }
        }
        return out
    }

    /// The SHA-256 digest of a string's UTF-8 bytes.
    public static func sha256(_ text: String) -> [UInt8] { sha256(Array(text.utf8)) }

    /// Compares two byte strings in time that depends only on their lengths.
    public static func constantTimeEqual(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        guard a.count == b.count else { return false }
        if a.isEmpty { return true }
        return a.withUnsafeBytes { pa in
            b.withUnsafeBytes { pb in CRYPTO_memcmp(pa.baseAddress, pb.baseAddress, a.count) == 0 }
        }
    }
}
