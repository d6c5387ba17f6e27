// A connection's latest-wins slots: at most one pending object per key (a friend's position, an item's), written
// in the order the keys first appeared since the last write. A connection watches few keys (its friends), so the
// slots are flat arrays searched linearly, which costs less than hashing at that size; past `linearLimit` keys (a
// viewer of a large bucket of items) a key-to-position index is kept beside them, so a look-up stays constant.
// With the index, a dropped key only marks its slot dead (shifting the later slots would mean rewriting the index
// for each of them, quadratic when a bucket's keys are dropped one by one); dead slots are skipped, and squeezed
// out in one pass once they outnumber the live ones. The bytes are shared with every other connection given the
// same object (an array is copy-on-write and nobody writes to it after encoding), never copied until they are
// written into the connection's frame.

/// Pending latest-wins objects of one connection. Loop thread only. (`package` for `cairn-bench bookkeeping`.)
package struct LatestSlots {
    /// Beyond this many keys the slots keep an index rather than scan.
    static let linearLimit = 16
    /// Slots whose room is kept for reuse once emptied (about twice the keys of a connection that watches many
    /// friends); a larger array, and its index, is given back.
    static let retainedCapacity = 128

    private struct Slot {
        var key: Int64
        var bytes: [UInt8]
        /// When the frame that produced the object arrived (monotonic ns), to time the fan-out.
        var receivedAt: UInt64
        /// False once the key was dropped while indexed (the slot then holds no bytes and no index entry).
        var isLive = true
    }

    /// One array (one allocation, one uniqueness check per change), in the order the keys first appeared. Only
    /// while indexed may it hold dead slots.
    private var slots: [Slot] = []
    /// Key to position in `slots` of every live key, kept only once more than `linearLimit` keys were pending.
    private var index: [Int64: Int]?
    /// Dead slots in `slots`.
    private var dead = 0
    /// Slots moved and index entries written while dropping keys, since the start (for tests that bound it).
    private(set) var dropWork = 0

    var count: Int { slots.count - dead }
    var isEmpty: Bool { slots.count == dead }
    /// The pending keys, in order.
    var keys: [Int64] { slots.compactMap { $0.isLive ? $0.key : nil } }
    /// Whether look-ups go through the index (for tests).
    var isIndexed: Bool { index != nil }
    /// Slots the array has room for (for tests).
    var capacity: Int { slots.capacity }

    /// Bytes pending, counting one separator per object.
    var pendingBytes: Int { slots.reduce(0) { $1.isLive ? $0 + $1.bytes.count + 1 : $0 } }

    /// The length of `prefix` bytes followed by the pending objects, each joined with a newline to what precedes
    /// it once anything does (the join of `ConnectionState.collectLatest`: no separator before the first byte).
    func joinedLength(after prefix: Int) -> Int {
        var length = prefix
        for slot in slots where slot.isLive { length += (length > 0 ? 1 : 0) + slot.bytes.count }
        return length
    }

    private func position(of key: Int64) -> Int? {
        if let index { return index[key] }
        for i in slots.indices where slots[i].key == key { return i }
        return nil
    }

    /// Puts `json` under `key`, replacing what is pending there (which keeps its place in the order).
    package mutating func set(_ key: Int64, _ json: [UInt8], receivedAt: UInt64) {
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
        if index == nil {
            slots.remove(at: i)
            dropWork += slots.count - i
        } else {
            index![key] = nil
            slots[i].bytes = []
            slots[i].isLive = false
            dead += 1
            dropWork += 1
        }
        if isEmpty {
            removeAll()
        } else if dead > count {
            compact()
        }
    }

    /// Squeezes the dead slots out, live ones keeping their order, and rewrites the index once (or drops it when few
    /// keys are left, back to the linear scan).
    private mutating func compact() {
        let keepIndex = count > Self.linearLimit
        var kept = 0
        for i in slots.indices where slots[i].isLive {
            if kept != i {
                slots.swapAt(kept, i)
                dropWork += 1
            }
            if keepIndex {
                index![slots[kept].key] = kept
                dropWork += 1
            }
            kept += 1
        }
        slots.removeLast(slots.count - kept)
        dead = 0
        if !keepIndex { index = nil }
    }

    /// Hands every pending object, in order, with its receipt time, to `body`, then empties the slots (keeping a
    /// modest capacity, and the index only if it was needed).
    mutating func drain(_ body: ([UInt8], UInt64) -> Void) {
        for slot in slots where slot.isLive { body(slot.bytes, slot.receivedAt) }
        let fewKeys = count <= Self.linearLimit
        removeAll()
        if fewKeys { index = nil }
    }

    /// Empties the slots, giving back a large array (and its index).
    mutating func removeAll() {
        let keep = slots.capacity <= Self.retainedCapacity
        slots.removeAll(keepingCapacity: keep)
        dead = 0
        if keep { index?.removeAll(keepingCapacity: true) } else { index = nil }
    }
}
