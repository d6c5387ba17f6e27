// The k best candidates seen so far during a nearest-neighbour search: a bounded max-heap on (distance, id), so
// the worst kept candidate is at the root and a better one replaces it in O(log k). Ties in distance are broken
// by id, which makes the answer a function of the data alone, never of the order cells were visited in.

/// A candidate neighbour.
struct Neighbor {
    var id: Int64
    var distance: Double
    /// Where the index holds it (the SphereTree's slot; unused elsewhere).
    var slot: Int32 = 0

    /// The total order of results: nearer first, then smaller id.
    @inline(__always)
    func precedes(_ other: Neighbor) -> Bool {
        distance < other.distance || (distance == other.distance && id < other.id)
    }
}

/// At most `capacity` best neighbours.
struct NearestHeap {
    let capacity: Int
    private var items: [Neighbor] = []

    init(capacity: Int) {
        self.capacity = capacity
        items.reserveCapacity(capacity)
    }

    /// True when `capacity` neighbours are held.
    var isFull: Bool { items.count >= capacity }

    /// Distance of the worst neighbour held (meaningful when not empty).
    var worstDistance: Double { items[0].distance }

    /// Offers a candidate; it is kept if the heap is not full or it precedes the worst one held.
    @inline(__always)
    mutating func offer(_ candidate: Neighbor) {
        if items.count < capacity {
            items.append(candidate)
            siftUp(items.count - 1)
        } else if candidate.precedes(items[0]) {
            items[0] = candidate
            siftDown(0)
        }
    }

    mutating func removeAll() {
        items.removeAll(keepingCapacity: true)
    }

    /// The neighbours held, nearest first; the heap is left sorted (no longer a heap), so call it last.
    mutating func takeSorted() -> [(id: Int64, distance: Double)] {
        items.sort { $0.precedes($1) }
        return items.map { ($0.id, $0.distance) }
    }

    private mutating func siftUp(_ start: Int) {
        var child = start
        while child > 0 {
            let parent = (child - 1) / 2
            guard items[parent].precedes(items[child]) else { return }
            items.swapAt(parent, child)
            child = parent
        }
    }

    private mutating func siftDown(_ start: Int) {
        var parent = start
        while true {
            let left = 2 * parent + 1
            if left >= items.count { return }
            var worse = left
            let right = left + 1
            if right < items.count && items[left].precedes(items[right]) { worse = right }
            guard items[parent].precedes(items[worse]) else { return }
            items.swapAt(parent, worse)
            parent = worse
        }
    }
}
