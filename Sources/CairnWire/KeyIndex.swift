// Duplicate-key detection for every object of one request text, at any depth.
// Keys are compared by their decoded bytes ("\u0069d" equals "id"), so a key with escapes is decoded once into
// a side buffer owned here; a key without escapes is just a span of the text. Nested keys (and top-level keys
// past the first 16, which the parser checks by a short linear scan) share one open-addressing hash table
// keyed by (object number, key bytes), hashed with the standard library's per-process seeded hasher so
// hostile keys cannot be made to collide. Slots carry a generation stamp, so starting a new parse is O(1) even
// after one huge message grew the table, and the table only grows, so steady-state parsing allocates nothing.
// A per-object linear scan would be quadratic in a hostile 64 KiB object.

/// Where a key's decoded bytes live: a span of the request text, or of the side buffer when it had escapes.
/// `prefix` holds the first 8 bytes (little-endian, zero-padded), so most comparisons are two integer compares.
struct KeySpan: Sendable, Equatable {
    var start: Int
    var count: Int
    var inSide: Bool
    var prefix: UInt64

    init(start: Int, count: Int, inSide: Bool, prefix: UInt64) {
        self.start = start
        self.count = count
        self.inSide = inSide
        self.prefix = prefix
    }

    /// The span of `count` bytes at `start`, whose bytes are at `bytes`.
    init(start: Int, count: Int, inSide: Bool, bytes: UnsafePointer<UInt8>) {
        self.start = start
        self.count = count
        self.inSide = inSide
        self.prefix = Self.prefix(bytes, count: count)
    }

    /// The first (up to) 8 bytes of a key as a little-endian integer, zero-padded.
    @inline(__always) static func prefix(_ bytes: UnsafePointer<UInt8>, count: Int) -> UInt64 {
        var value: UInt64 = 0
        for k in 0..<min(count, 8) { value |= UInt64(bytes[k]) << UInt64(k * 8) }
        return value
    }

    /// Whether `other` may equal this key; decisive for keys of up to 8 bytes.
    @inline(__always) func mayEqual(_ other: KeySpan) -> Bool {
        count == other.count && prefix == other.prefix
    }
}

/// The set of keys seen so far in one parse, per object, plus the decoded bytes of escaped keys.
struct KeyIndex: Sendable {
    private struct Slot: Sendable {
        var generation: UInt32 = 0
        var object: UInt32 = 0
        var hash: UInt32 = 0
        var key = KeySpan(start: 0, count: 0, inSide: false, prefix: 0)
    }

    /// Decoded bytes of keys that contained escapes.
    private(set) var side: [UInt8] = []
    private var slots: [Slot] = []
    private var generation: UInt32 = 0
    private var used = 0

    /// Forgets every key, keeping all capacity.
    mutating func reset() {
        side.removeAll(keepingCapacity: true)
        used = 0
        generation &+= 1
        if generation == 0 {
            for i in slots.indices { slots[i].generation = 0 }
            generation = 1
        }
    }

    /// Decodes the escaped key body `p[0..<count]` (already validated) into the side buffer.
    mutating func appendDecoded(_ p: UnsafePointer<UInt8>, count: Int) -> KeySpan {
        let start = side.count
        side.append(contentsOf: repeatElement(0, count: count))
        let written = side.withUnsafeMutableBufferPointer { buffer in
            JSONString.decode(p, count: count, into: buffer.baseAddress! + start)
        }
        side.removeLast(count - written)
        return side.withUnsafeBufferPointer { side in
            KeySpan(start: start, count: written, inSide: true, bytes: side.baseAddress! + start)
        }
    }

    /// Records `key` as a key of object number `object`; returns false if that object already had it.
    /// `text` is the request text that non-escaped spans point into.
    mutating func insert(_ key: KeySpan, object: UInt32, text: UnsafePointer<UInt8>) -> Bool {
        if (used + 1) * 2 > slots.count { grow() }
        let mask = slots.count - 1
        let (found, index, hash) = side.withUnsafeBufferPointer { side -> (Bool, Int, UInt32) in
            let bytes = Self.bytes(of: key, text: text, side: side)
            let hash = Self.hash(bytes, object: object)
            var i = Int(hash) & mask
            while slots[i].generation == generation {
                let other = slots[i]
                if other.hash == hash && other.object == object && other.key.mayEqual(key)
                    && (key.count <= 8 || Self.equal(bytes, Self.bytes(of: other.key, text: text, side: side)))
                {
                    return (true, i, hash)
                }
                i = (i + 1) & mask
            }
            return (false, i, hash)
        }
        if found { return false }
        slots[index] = Slot(generation: generation, object: object, hash: hash, key: key)
        used += 1
        return true
    }

    /// The decoded bytes of `key`, given the text and side buffers.
    static func bytes(
        of key: KeySpan, text: UnsafePointer<UInt8>, side: UnsafeBufferPointer<UInt8>
    ) -> UnsafeBufferPointer<UInt8> {
        let base = key.inSide ? side.baseAddress! : text
        return UnsafeBufferPointer(start: base + key.start, count: key.count)
    }

    /// Byte equality of two short buffers.
    @inline(__always) static func equal(_ a: UnsafeBufferPointer<UInt8>, _ b: UnsafeBufferPointer<UInt8>) -> Bool {
        guard a.count == b.count else { return false }
        for i in 0..<a.count where a[i] != b[i] { return false }
        return true
    }

    /// The standard library's per-process randomly seeded hash, so a client cannot precompute keys that all
    /// land in one probe chain (which would make a 64 KiB request cost quadratic time).
    private static func hash(_ bytes: UnsafeBufferPointer<UInt8>, object: UInt32) -> UInt32 {
        var hasher = Hasher()
        hasher.combine(object)
        hasher.combine(bytes: UnsafeRawBufferPointer(bytes))
        return UInt32(truncatingIfNeeded: hasher.finalize())
    }

    private mutating func grow() {
        let old = slots
        slots = Array(repeating: Slot(), count: max(32, old.count * 2))
        let mask = slots.count - 1
        for slot in old where slot.generation == generation {
            var i = Int(slot.hash) & mask
            while slots[i].generation == generation { i = (i + 1) & mask }
            slots[i] = slot
        }
    }
}
