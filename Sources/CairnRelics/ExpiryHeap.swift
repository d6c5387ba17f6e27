// A binary min-heap of (time, id) pairs: the next thing to expire is always at the top, so the once-a-second sweep
// costs O(log n) per expiry and nothing when nothing is due. Removal is lazy: an entry whose subject was deleted
// or re-timed stays in the heap and the caller skips it when it surfaces (checking against its own records), which
// keeps deletion O(1) and the heap a plain array.

/// A min-heap of expiry times with ids.
struct ExpiryHeap {
    private(set) var entries: [(time: Int64, id: Int64)] = []

    /// Entries held, stale ones included.
    var count: Int { entries.count }

    /// The earliest entry, if any.
    var first: (time: Int64, id: Int64)? { entries.first }

    /// Adds an entry. O(log n).
    mutating func push(_ time: Int64, _ id: Int64) {
        entries.append((time, id))
        var child = entries.count - 1
        while child > 0 {
            let parent = (child - 1) / 2
            guard entries[child].time < entries[parent].time else { break }
            entries.swapAt(child, parent)
            child = parent
        }
    }

    /// Removes and returns the earliest entry if its time is at or before `now`. O(log n).
    mutating func popDue(_ now: Int64) -> (time: Int64, id: Int64)? {
        guard let top = entries.first, top.time <= now else { return nil }
        let last = entries.removeLast()
        if !entries.isEmpty {
            entries[0] = last
            var parent = 0
            while true {
                let left = 2 * parent + 1
                let right = left + 1
                var smallest = parent
                if left < entries.count && entries[left].time < entries[smallest].time { smallest = left }
                if right < entries.count && entries[right].time < entries[smallest].time { smallest = right }
                if smallest == parent { break }
                entries.swapAt(parent, smallest)
                parent = smallest
            }
        }
        return top
    }
}
