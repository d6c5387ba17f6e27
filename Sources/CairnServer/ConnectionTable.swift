// The WebSocket connections of one server, found by id without hashing. A connection's id carries its slot in a
// flat array (low 32 bits) and that slot's generation (high 32 bits): a lookup is an index and one comparison.
// A freed slot goes on a free list and its generation moves on, so an id kept by a late completion for a closed
// connection never reaches the connection that reuses the slot; a slot whose generation would wrap is retired
// rather than reused, so an id is never handed out twice in a process's lifetime (as `ConnectionID` promises).
package import CairnLoop

/// Open connections by dense id. Loop thread only. (`package` for `cairn-bench bookkeeping`.)
package struct ConnectionTable {
    fileprivate struct Entry {
        /// The generation of the id that may use this slot now (or of the next one, while the slot is free).
        var generation: UInt32
        var state: ConnectionState?
    }

    private var entries: [Entry] = []
    /// The generation a new slot starts at (1; tests start near the wrap).
    private let firstGeneration: UInt32
    /// Free slots, the most recently freed last (reused first).
    private var free: [Int32] = []
    /// Open connections.
    private(set) var count = 0

    package init(firstGeneration: UInt32 = 1) {
        precondition(firstGeneration != 0, "generation 0 would make id 0 possible")
        self.firstGeneration = firstGeneration
    }

    var isEmpty: Bool { count == 0 }

    /// Slots ever made (open, free or retired), for tests.
    var slotCount: Int { entries.count }

    /// The id the next `insert` hands out. Never 0 (no slot is used at generation 0).
    private mutating func allocate() -> ConnectionID {
        if let index = free.popLast() {
            return Self.id(index: Int(index), generation: entries[Int(index)].generation)
        }
        entries.append(Entry(generation: firstGeneration, state: nil))
        return Self.id(index: entries.count - 1, generation: firstGeneration)
    }

    /// Gives a new connection an id and a slot; `make` builds the state with that id.
    package mutating func insert(_ make: (ConnectionID) -> ConnectionState) -> ConnectionState {
        let id = allocate()
        let state = make(id)
        entries[Self.index(of: id)].state = state
        count += 1
        return state
    }

    /// The open connection with this id; nil for an id that is closed, stale or never handed out.
    package subscript(id: ConnectionID) -> ConnectionState? {
        let index = Self.index(of: id)
        guard index < entries.count, entries[index].generation == Self.generation(of: id) else { return nil }
        return entries[index].state
    }

    /// Removes the connection with this id and returns it; nil (and nothing changed) for any other id.
    mutating func remove(_ id: ConnectionID) -> ConnectionState? {
        let index = Self.index(of: id)
        guard index < entries.count, entries[index].generation == Self.generation(of: id),
            let state = entries[index].state
        else { return nil }
        entries[index].state = nil
        count -= 1
        let next = entries[index].generation &+ 1
        entries[index].generation = next
        if next != 0 { free.append(Int32(index)) }  // wrapped: retired for good
        return state
    }

    static func id(index: Int, generation: UInt32) -> ConnectionID {
        UInt64(generation) << 32 | UInt64(UInt32(index))
    }

    static func index(of id: ConnectionID) -> Int { Int(truncatingIfNeeded: UInt32(truncatingIfNeeded: id)) }

    static func generation(of id: ConnectionID) -> UInt32 { UInt32(truncatingIfNeeded: id >> 32) }
}

/// Every open connection, in slot order.
extension ConnectionTable: Sequence {
    package struct Iterator: IteratorProtocol {
        fileprivate var entries: IndexingIterator<[Entry]>

        package mutating func next() -> ConnectionState? {
            while let entry = entries.next() { if let state = entry.state { return state } }
            return nil
        }
    }

    package func makeIterator() -> Iterator { Iterator(entries: entries.makeIterator()) }

    package var underestimatedCount: Int { count }
}
