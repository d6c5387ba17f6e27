// Why this exists: RFC 6455 needs unpredictable bytes twice — the 16-byte Sec-WebSocket-Key and a fresh 4-byte
// mask for every client frame. We take them from OpenSSL's CSPRNG, the same generator the server uses.

import COpenSSL

/// Random bytes from OpenSSL's `RAND_bytes`.
enum ClientRandom {
    /// `count` bytes from the CSPRNG. Traps if OpenSSL cannot produce them (an unusable test environment).
    static func bytes(_ count: Int) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: count)
        guard count > 0 else { return out }
        let ok = out.withUnsafeMutableBufferPointer { RAND_bytes($0.baseAddress, Int32($0.count)) }
        precondition(ok == 1, "RAND_bytes failed")
        return out
    }
}
