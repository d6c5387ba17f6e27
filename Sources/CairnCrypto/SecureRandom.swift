// Randomness for tokens and salts. The domain receives a `RandomSource` rather than calling OpenSSL itself, so tests
// can pass a seeded source and get the same tokens every run; production uses OpenSSL's CSPRNG (RAND_bytes).
import COpenSSL

/// Fills buffers with random bytes.
public protocol RandomSource: Sendable {
    /// Writes `count` random bytes.
    func bytes(_ count: Int) -> [UInt8]
}

/// OpenSSL's cryptographically secure generator (`RAND_bytes`).
public struct SecureRandom: RandomSource {
    /// Creates the system generator.
    public init() {}

    /// Returns `count` bytes from `RAND_bytes`; a failing CSPRNG is unrecoverable, so it stops the process.
    public func bytes(_ count: Int) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: count)
        let ok = out.withUnsafeMutableBufferPointer { RAND_bytes($0.baseAddress, Int32(count)) }
        precondition(ok == 1, "OpenSSL RAND_bytes failed: the system has no usable entropy source")
        return out
    }
}
