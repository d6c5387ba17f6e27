// A value per open connection, found by the connection's slot instead of by hashing. The transport hands out ids whose
// low 32 bits are a dense slot (reused after a close) and whose high 32 bits tell the slot's uses apart
// (`ConnectionTable`), so a flat array indexed by the slot, each entry keeping its full id, holds one entry per open
// connection and no empty buckets: a dictionary spread 10,000 connections over 16,384 buckets and touched every one of
// their pages (docs/BENCHMARKS.md, "Memory per connection"). Ids from elsewhere (tests, benchmarks) work the same
// way; an id whose slot is implausibly large goes to a dictionary beside the array, so no id can make the array huge.

/// Values keyed by `ConnectionID`, stored by the id's slot. A value type like `Dictionary`; not thread-safe.
public struct ConnectionMap<Value> {
    private struct Entry {
        var id: ConnectionID
        var value: Value
    }

    /// Slots at or above this go to `overflow` (the transport never has that many connections open at once).
    static var denseSlots: Int { 1 << 22 }

    private var entries: [Entry?] = []
    private var overflow: [ConnectionID: Value] = [:]
    /// Values held.
    public private(set) var count = 0

    public init() {}

    public var isEmpty: Bool { count == 0 }
    /// Slots the array has room for (tests).
    var denseCapacity: Int { entries.capacity }

    @inline(__always)
    private static func slot(_ id: ConnectionID) -> Int { Int(truncatingIfNeeded: id & 0xFFFF_FFFF) }

    /// The value for `id`; nil when none. Setting nil removes it.
    public subscript(id: ConnectionID) -> Value? {
        get {
            let slot = Self.slot(id)
            if slot < entries.count, let entry = entries[slot], entry.id == id { return entry.value }
            return overflow.isEmpty ? nil : overflow[id]
        }
        set {
            if let newValue { insert(newValue, for: id) } else { removeValue(forKey: id) }
        }
        _modify {
            var value = removeValue(forKey: id)
            defer { if let value { insert(value, for: id) } }
            yield &value
        }
    }

    /// Changes the value for `id` in place, if there is one; returns what `body` returned, or nil when there was none.
    @inline(__always)
    public mutating func update<R>(_ id: ConnectionID, _ body: (inout Value) -> R) -> R? {
        let slot = Self.slot(id)
        if slot < entries.count, entries[slot]?.id == id { return body(&entries[slot]!.value) }
        guard !overflow.isEmpty, overflow[id] != nil else { return nil }
        return body(&overflow[id]!)
    }

    /// What `body` reads from the value for `id`, without copying the value out; nil when there is none.
    @inline(__always)
    public func read<R>(_ id: ConnectionID, _ body: (Value) -> R) -> R? {
        let slot = Self.slot(id)
        if slot < entries.count, entries[slot]?.id == id { return body(entries[slot]!.value) }
        guard !overflow.isEmpty, let value = overflow[id] else { return nil }
        return body(value)
    }

    /// Removes and returns the value for `id`.
    @discardableResult
    public mutating func removeValue(forKey id: ConnectionID) -> Value? {
        let slot = Self.slot(id)
        if slot < entries.count, let entry = entries[slot], entry.id == id {
            entries[slot] = nil
            count -= 1
            return entry.value
        }
        guard !overflow.isEmpty, let old = overflow.removeValue(forKey: id) else { return nil }
        count -= 1
        return old
    }

    /// Stores `value` in the id's slot when it is free or already the id's; otherwise (a slot too large to keep
    /// densely, or taken by another id, which the transport never does while the first is open) beside the array.
    private mutating func insert(_ value: Value, for id: ConnectionID) {
        let slot = Self.slot(id)
        if slot < Self.denseSlots {
            if slot >= entries.count {
                entries.append(contentsOf: repeatElement(nil, count: slot + 1 - entries.count))
            }
            if entries[slot] == nil, overflow.isEmpty || overflow[id] == nil {
                entries[slot] = Entry(id: id, value: value)
                count += 1
                return
            }
            if entries[slot]?.id == id {
                entries[slot]!.value = value
                return
            }
        }
        if overflow.updateValue(value, forKey: id) == nil { count += 1 }
    }
}

extension ConnectionMap: Sequence {
    /// The pairs held, dense slots in slot order, then the others.
    public func makeIterator() -> AnyIterator<(key: ConnectionID, value: Value)> {
        var dense = entries.makeIterator()
        var others = overflow.makeIterator()
        return AnyIterator {
            while let next = dense.next() {
                if let entry = next { return (entry.id, entry.value) }
            }
            return others.next()
        }
    }

    /// The values held, in iteration order.
    public var values: [Value] { map(\.value) }
}
