// Password storage with scrypt from OpenSSL. The record keeps its own parameters and salt beside the derived key
// ("scrypt$N$r$p$salt$key"), so the cost can be raised later without invalidating existing accounts: old records
// verify with the parameters they were made with. Hashing is deliberately slow; callers run it off the event loop.
import COpenSSL

/// scrypt cost parameters.
public struct ScryptParameters: Sendable, Equatable {
    /// CPU/memory cost; a power of two. Memory used is about 128 · r · N bytes.
    public var n: UInt64
    /// Block size.
    public var r: UInt64
    /// Parallelisation.
    public var p: UInt64

    /// Creates parameters.
    public init(n: UInt64, r: UInt64, p: UInt64) {
        self.n = n
        self.r = r
        self.p = p
    }

    /// The production default: N = 2^15, r = 8, p = 1 (32 MiB, tens of milliseconds per hash).
    public static let standard = ScryptParameters(n: 1 << 15, r: 8, p: 1)

    /// True when OpenSSL will accept these values and they stay within sane memory (≤ 1 GiB).
    public var isValid: Bool {
        n >= 2 && n & (n - 1) == 0 && r >= 1 && p >= 1 && r * p < (1 << 30) && 128 * r * n * p <= (1 << 30)
    }
}

/// A salted scrypt password record.
public struct PasswordHash: Sendable, Equatable {
    /// The parameters the key was derived with.
    public let parameters: ScryptParameters
    /// The per-user random salt.
    public let salt: [UInt8]
    /// The derived key.
    public let key: [UInt8]

    static let keyLength = 32
    static let saltLength = 16

    /// Derives a new record for `password` with a fresh salt from `random`.
    public static func make(password: String, parameters: ScryptParameters = .standard, random: some RandomSource)
        -> PasswordHash
    {
        let salt = random.bytes(saltLength)
        let key = derive(password: password, salt: salt, parameters: parameters, length: keyLength)
        return PasswordHash(parameters: parameters, salt: salt, key: key)
    }

    /// Checks `password` against this record in constant time with respect to the key.
    public func verify(_ password: String) -> Bool {
        let candidate = Self.derive(password: password, salt: salt, parameters: parameters, length: key.count)
        return Digest.constantTimeEqual(candidate, key)
    }

    /// The stored form, `scrypt$N$r$p$salt$key` with base64url salt and key.
    public var encoded: String {
        "scrypt$\(parameters.n)$\(parameters.r)$\(parameters.p)$\(Base64URL.encode(salt))$\(Base64URL.encode(key))"
    }

    /// Parses a stored record; nil when it is not one this version understands.
    public init?(encoded: String) {
        let parts = encoded.split(separator: "$", omittingEmptySubsequences: false)
        guard parts.count == 6, parts[0] == "scrypt",
            let n = UInt64(parts[1]), let r = UInt64(parts[2]), let p = UInt64(parts[3]),
            let salt = Base64URL.decode(String(parts[4])), let key = Base64URL.decode(String(parts[5])),
            !salt.isEmpty, !key.isEmpty
        else { return nil }
        let params = ScryptParameters(n: n, r: r, p: p)
        guard params.isValid else { return nil }
        self.init(parameters: params, salt: salt, key: key)
    }

    init(parameters: ScryptParameters, salt: [UInt8], key: [UInt8]) {
        self.parameters = parameters
        self.salt = salt
        self.key = key
    }

    static func derive(password: String, salt: [UInt8], parameters: ScryptParameters, length: Int) -> [UInt8] {
        precondition(parameters.isValid, "invalid scrypt parameters \(parameters)")
        var out = [UInt8](repeating: 0, count: length)
        // A trailing NUL keeps the buffer non-empty (so it has an address) without being counted in the length.
        let pw = Array(password.utf8).map { CChar(bitPattern: $0) } + [0]
        let pwLength = pw.count - 1
        // OpenSSL refuses work above maxmem (default 32 MiB); allow what the parameters need plus slack.
        let maxmem = 128 * parameters.r * parameters.n * parameters.p + 128 * parameters.r * parameters.p + (1 << 20)
        let rc = pw.withUnsafeBufferPointer { pwp in
            salt.withUnsafeBufferPointer { sp in
                out.withUnsafeMutableBufferPointer { op in
                    EVP_PBE_scrypt(
                        pwp.baseAddress, pwLength, sp.baseAddress, salt.count,
                        parameters.n, parameters.r, parameters.p, maxmem, op.baseAddress, length)
                }
            }
        }
        precondition(rc == 1, "EVP_PBE_scrypt failed for valid parameters \(parameters)")
        return out
    }
}
