// A connection's latest-wins slots: at most one pending object per key (a friend's position, an item's), written
// in the order the keys first appeared since the last write. A connection watches few keys (its friends), so the
// slots are flat arrays searched linearly, which costs less than hashing at that size; past `linearLimit` keys (a
// viewer of a large bucket of items) a key-to-position index is kept beside them, so a look-up stays constant.
// The bytes are shared with every other connection given the same object (an array is copy-on-write and nobody
// writes to it after encoding), never copied until they are written into the connection's frame.

/// Pending latest-wins objects of one connection. Loop thread only.
struct LatestSlots {
    /// Beyond this many keys the slots keep an index rather than scan.
    static let linearLimit = 16

    private struct Slot {
        var key: Int64
        var bytes: [UInt8]
        /// When the frame that produced the object arrived (monotonic ns), to time the fan-out.
        var receivedAt: UInt64
    }

    /// One array (one allocation, one uniqueness check per change), in the order the keys first appeared.
    private var slots: [Slot] = []
    /// Key to position in `slots`, kept only once more than `linearLimit` keys were pending at once.
    private var index: [Int64: Int]?

    var count: Int { slots.count }
    var isEmpty: Bool { slots.isEmpty }
    /// The pending keys, in order.
    var keys: [Int64] { slots.map(\.key) }
    /// Whether look-ups go through the index (for tests).
    var isIndexed: Bool { index != nil }

    /// Bytes pending, counting one separator per object.
    var pendingBytes: Int { slots.reduce(0) { $0 + $1.bytes.count + 1 } }

    private func position(of key: Int64) -> Int? {
        if let index { return index[key] }
        for i in slots.indices where slots[i].key == key { return i }
        return nil
    }

    /// Puts `json` under `key`, replacing what is pending there (which keeps its place in the order).
    mutating func set(_ key: Int64, _ json: [UInt8], receivedAt: UInt64) {
        if let i = position(of: key) {
            slots[i].bytes = json
            slots[i].receivedAt = receivedAt
            return
        }
        slots.append(Slot(key: key, bytes: json, receivedAt: receivedAt))
        if index != nil {
            index![key] = slots.count - 1
        } else if slots.count > Self.linearLimit {
            var built = [Int64: Int](minimumCapacity: slots.count * 2)
            for (i, slot) in slots.enumerated() { built[slot.key] = i }
            index = built
        }
    }

    /// The object pending under `key`, if any.
    subscript(key: Int64) -> [UInt8]? { position(of: key).map { slots[$0].bytes } }

    /// Drops what is pending under `key`; the others keep their order.
    mutating func remove(_ key: Int64) {
        guard let i = position(of: key) else { return }
        slots.remove(at: i)
        guard index != nil else { return }
        index![key] = nil
        for j in i..<slots.count { index![slots[j].key] = j }
    }

    /// Hands every pending object, in order, with its receipt time, to `body`, then empties the slots (keeping a
    /// modest capacity).
    mutating func drain(_ body: ([UInt8], UInt64) -> Void) {
        for slot in slots { body(slot.bytes, slot.receivedAt) }
        removeAll()
    }

    /// Empties the slots.
    mutating func removeAll() {
        let keep = slots.count <= 64
        slots.removeAll(keepingCapacity: keep)
        if keep { index?.removeAll(keepingCapacity: true) } else { index = nil }
    }
}
