// The connections of one user (those bound to the account, those watching the live map): almost always one. Kept as
// an array, each user cost a heap allocation per list and each fan-out a retain and release per friend; one
// connection is kept inline here, and only a second makes an array (docs/BENCHMARKS.md, "Memory per connection").

/// One or more connections, in the order they were added. Empty lists are not kept: a user without connections has
/// no list.
public enum ConnectionList: RandomAccessCollection, Equatable, Sendable {
    case one(ConnectionID)
    /// Two or more.
    case many([ConnectionID])

    @inlinable public var startIndex: Int { 0 }
    @inlinable public var endIndex: Int {
        switch self {
        case .one: 1
        case .many(let ids): ids.count
        }
    }

    @inlinable public subscript(position: Int) -> ConnectionID {
        switch self {
        case .one(let id):
            precondition(position == 0, "index out of range")
            return id
        case .many(let ids): return ids[position]
        }
    }

    /// This list with `id` added at the end.
    @inlinable public func adding(_ id: ConnectionID) -> ConnectionList {
        var list: ConnectionList? = self
        list.add(id)
        return list!
    }

    /// This list without `id`; nil when nothing is left.
    @inlinable public func removing(_ id: ConnectionID) -> ConnectionList? {
        switch self {
        case .one(let only): return only == id ? nil : self
        case .many(let ids):
            let rest = ids.filter { $0 != id }
            if rest.isEmpty { return nil }
            return rest.count == 1 ? .one(rest[0]) : .many(rest)
        }
    }
}

extension Optional where Wrapped == ConnectionList {
    /// Adds `id` to the list, making one if there is none.
    @inlinable public mutating func add(_ id: ConnectionID) {
        switch self {
        case nil: self = .one(id)
        case .one(let first)?: self = .many([first, id])
        case .many(var ids)?:
            // Out of the optional first, so the array is uniquely held and grows in place.
            self = nil
            ids.append(id)
            self = .many(ids)
        }
    }

    /// Removes `id`; the list goes when it is left empty.
    @inlinable public mutating func remove(_ id: ConnectionID) {
        self = self?.removing(id)
    }
}
