// A set that remembers only its most recent members: what was revoked or deleted a moment ago, kept so that a check
// or a message racing the change cannot undo it, and forgotten oldest first once `limit` is reached (by then any
// race is long over). The order is a ring, so a full set forgets in constant time.

/// The `limit` most recently inserted members.
package struct RecentSet<Element: Hashable> {
    private var members: Set<Element> = []
    private var ring: [Element] = []
    private var oldest = 0
    let limit: Int

    /// An empty set keeping at most `limit` members.
    package init(limit: Int = 4096) { self.limit = max(1, limit) }

    /// True when nothing is remembered.
    package var isEmpty: Bool { members.isEmpty }

    /// True when `member` was inserted and not forgotten since.
    package func contains(_ member: Element) -> Bool { members.contains(member) }

    /// Remembers `member` (again: nothing changes), forgetting the oldest one when full.
    package mutating func insert(_ member: Element) {
        guard members.insert(member).inserted else { return }
        if ring.count < limit {
            ring.append(member)
            return
        }
        members.remove(ring[oldest])
        ring[oldest] = member
        oldest = (oldest + 1) % limit
    }
}
