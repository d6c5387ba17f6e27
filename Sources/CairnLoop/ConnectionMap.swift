// A value per open connection, found by the connection's slot instead of by hashing. The transport hands out ids whose
// low 32 bits are a dense slot (reused after a close) and whose high 32 bits tell the slot's uses apart
// (`ConnectionTable`), so flat arrays indexed by the slot, one of full ids and one of values, hold one entry per open
// connection and no empty buckets: a dictionary spread 10,000 connections over 16,384 buckets and touched every one of
// their pages (docs/BENCHMARKS.md, "Memory per connection"). Ids from elsewhere (tests, benchmarks) work the same
// way; an id whose slot is implausibly large goes to a dictionary beside the array, so no id can make the array huge.

/// Values keyed by `ConnectionID`, stored by the id's slot. A value type like `Dictionary`; not thread-safe.
public struct ConnectionMap<Value> {
    /// Slots at or above this go to `overflow` (the transport never has that many connections open at once).
    @inlinable static var denseSlots: Int { 1 << 22 }

    /// The id in each slot (0: none), and its value. Kept apart so that finding an id never copies a value (a copy
    /// would retain everything the value holds).
    @usableFromInline var ids: [ConnectionID] = []
    @usableFromInline var stored: [Value?] = []
    @usableFromInline var overflow: [ConnectionID: Value] = [:]
    @usableFromInline var held = 0
    /// Values held.
    @inlinable public var count: Int { held }

    @inlinable public init() {}

    @inlinable public var isEmpty: Bool { held == 0 }
    /// Slots the array has room for (tests).
    var denseCapacity: Int { ids.capacity }

    @inlinable @inline(__always)
    static func slot(_ id: ConnectionID) -> Int { Int(truncatingIfNeeded: id & 0xFFFF_FFFF) }

    /// The slot holding `id`, if it is held densely.
    @inlinable @inline(__always)
    func denseSlot(_ id: ConnectionID) -> Int? {
        let slot = Self.slot(id)
        return id != 0 && slot < ids.count && ids[slot] == id ? slot : nil
    }

    /// The value for `id`; nil when none. Setting nil removes it.
    @inlinable
    public subscript(id: ConnectionID) -> Value? {
        get {
            if let slot = denseSlot(id) { return stored[slot] }
            return overflow.isEmpty ? nil : overflow[id]
        }
        set {
            if let newValue { insert(newValue, for: id) } else { removeValue(forKey: id) }
        }
        _modify {
            if let slot = denseSlot(id) {
                yield &stored[slot]
                if stored[slot] == nil {
                    ids[slot] = 0
                    held -= 1
                }
            } else {
                var value = removeValue(forKey: id)
                defer { if let value { insert(value, for: id) } }
                yield &value
            }
        }
    }

    /// Changes the value for `id` in place, if there is one; returns what `body` returned, or nil when there was none.
    @inlinable @inline(__always)
    public mutating func update<R>(_ id: ConnectionID, _ body: (inout Value) -> R) -> R? {
        if let slot = denseSlot(id) { return body(&stored[slot]!) }
        guard !overflow.isEmpty, overflow[id] != nil else { return nil }
        return body(&overflow[id]!)
    }

    /// What `body` reads from the value for `id`, without copying the value out; nil when there is none.
    @inlinable @inline(__always)
    public func read<R>(_ id: ConnectionID, _ body: (Value) -> R) -> R? {
        if let slot = denseSlot(id) { return body(stored[slot]!) }
        guard !overflow.isEmpty, let value = overflow[id] else { return nil }
        return body(value)
    }

    /// Removes and returns the value for `id`.
    @inlinable @discardableResult
    public mutating func removeValue(forKey id: ConnectionID) -> Value? {
        if let slot = denseSlot(id) {
            ids[slot] = 0
            held -= 1
            return stored[slot].take()
        }
        guard !overflow.isEmpty, let old = overflow.removeValue(forKey: id) else { return nil }
        held -= 1
        return old
    }

    /// Stores `value` in the id's slot when it is free or already the id's; otherwise (a slot too large to keep
    /// densely, or taken by another id, which the transport never does while the first is open; or id 0) beside the
    /// arrays.
    @inlinable
    mutating func insert(_ value: Value, for id: ConnectionID) {
        if let slot = denseSlot(id) {
            stored[slot] = value
            return
        }
        let slot = Self.slot(id)
        if id != 0, slot < Self.denseSlots, overflow.isEmpty || overflow[id] == nil {
            if slot >= ids.count {
                ids.append(contentsOf: repeatElement(0, count: slot + 1 - ids.count))
                stored.append(contentsOf: repeatElement(nil, count: slot + 1 - stored.count))
            }
            if ids[slot] == 0 {
                ids[slot] = id
                stored[slot] = value
                held += 1
                return
            }
        }
        if overflow.updateValue(value, forKey: id) == nil { held += 1 }
    }
}

extension ConnectionMap: Sequence {
    /// The pairs held, dense slots in slot order, then the others.
    public func makeIterator() -> AnyIterator<(key: ConnectionID, value: Value)> {
        var slot = 0
        var others = overflow.makeIterator()
        let ids = self.ids
        let stored = self.stored
        return AnyIterator {
            while slot < ids.count {
                defer { slot += 1 }
                if ids[slot] != 0, let value = stored[slot] { return (ids[slot], value) }
            }
            return others.next()
        }
    }

    /// The values held, in iteration order.
    public var values: [Value] { map(\.value) }
}
