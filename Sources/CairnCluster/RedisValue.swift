// A Redis reply copied out of hiredis's `redisReply` before the callback returns (hiredis frees it then), as a
// Swift value the caller may keep.
import CHiredis

/// One Redis reply (RESP2).
public enum RedisValue: Equatable, Sendable {
    /// A bulk string, or a status reply such as `OK`, as bytes.
    case bytes([UInt8])
    /// An integer reply.
    case integer(Int64)
    /// An array reply.
    case array([RedisValue])
    /// A nil bulk or nil array.
    case null

    /// The bytes as UTF-8 text, when this is a string.
    public var text: String? {
        if case .bytes(let bytes) = self { return String(decoding: bytes, as: UTF8.self) }
        return nil
    }

    /// Copies a reply; an error reply becomes `.failure(.server(text))`.
    static func copy(_ reply: UnsafeMutablePointer<redisReply>) -> Result<RedisValue, RedisError> {
        let r = reply.pointee
        switch r.type {
        case REDIS_REPLY_ERROR: return .failure(.server(String(decoding: bytes(r), as: UTF8.self)))
        default: return .success(value(reply))
        }
    }

    private static func value(_ reply: UnsafeMutablePointer<redisReply>) -> RedisValue {
        let r = reply.pointee
        switch r.type {
        case REDIS_REPLY_STRING, REDIS_REPLY_STATUS, REDIS_REPLY_ERROR: return .bytes(bytes(r))
        case REDIS_REPLY_INTEGER: return .integer(Int64(r.integer))
        case REDIS_REPLY_ARRAY:
            guard let elements = r.element else { return .array([]) }
            return .array((0..<Int(r.elements)).compactMap { i in elements[i].map(value) })
        default: return .null
        }
    }

    private static func bytes(_ r: redisReply) -> [UInt8] {
        guard let str = r.str, r.len > 0 else { return [] }
        return str.withMemoryRebound(to: UInt8.self, capacity: Int(r.len)) {
            Array(UnsafeBufferPointer(start: $0, count: Int(r.len)))
        }
    }
}
