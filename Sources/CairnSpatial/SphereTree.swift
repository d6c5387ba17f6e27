public import CairnGeo

// An exact k-nearest index for points that rarely change (places of interest): a static 3D kd-tree over unit
// vectors. The chord between two unit vectors grows strictly with the great-circle angle, so the tree prunes by
// chord and needs no special case at the antimeridian or the poles: there is no seam on the sphere in 3D.
//
// The order of the answer is haversine as `GeoPoint.distance(to:)` computes it, bit for bit, ties broken by id.
// Chord and haversine round differently, so the chord only decides what is worth measuring, with a slack far
// above any rounding (`chordSlack`): every point whose haversine could rank in the answer is measured exactly and
// offered to a bounded max-heap ordered by (distance, id). Near-ties are therefore never reordered nor dropped.
//
// Layout: flat arrays in tree order (an implicit tree: the node of the range [lo, hi) is its middle element, its
// children the halves on either side), small ranges scanned as leaves. A query allocates only its result (the
// heap and the walk live in stack-allocated scratch). Removal marks a slot dead; the owner rebuilds when many are.
//
// Groups (the places' categories): each point may carry a small group number, and each inner node the union of
// its subtree's groups as a 64-bit mask (groups from 63 up share the last bit), so a query for one group skips
// every subtree without it and checks the group of each point it measures: one tree serves every category,
// exactly, instead of a tree per category. The id-to-slot map for removal is two sorted arrays, not a dictionary.
#if canImport(Glibc)
import Glibc
#endif

/// A static kd-tree of points on the sphere, answering exact k-nearest queries by great-circle distance.
public struct SphereTree: Sendable {
    /// Unit vectors, `x, y, z` per slot, in tree order.
    private var vectors: [Double] = []
    /// The haversine terms per slot: latitude in radians, its cosine, longitude in degrees.
    private var terms: [Double] = []
    /// Ids per slot.
    private var ids: [Int64] = []
    /// The split axis (0, 1, 2) of the node at each slot (meaningful for inner nodes only).
    private var axes: [UInt8] = []
    /// Slots removed since the tree was built.
    private var dead: [Bool] = []
    /// The group of each slot (empty when the tree was built without groups).
    private var groups: [UInt16] = []
    /// The groups under each inner node (its range's slots), one bit each (`groupBit`); empty without groups.
    private var masks: [UInt64] = []
    /// The ids in ascending order, and the slot of each: the id-to-slot map, searched by bisection.
    private var sortedIDs: [Int64] = []
    private var slotsOfSorted: [Int32] = []
    /// Live points.
    public private(set) var count = 0

    /// Ranges this small are scanned, not split.
    static let leafSize = 8
    /// Added to every chord² bound: far above the rounding of chord² (about 1e-15) or of haversine's sine, so a
    /// point that haversine ranks within the bound is never pruned by the chord.
    static let chordSlack = 1e-12

    /// An empty tree.
    public init() {}

    /// Builds the tree over `points`; an id given twice keeps its last point. With `groups` (one per point), a
    /// query can ask for one group only.
    public init(_ points: [(id: Int64, point: GeoPoint)], groups pointGroups: [UInt16]? = nil) {
        precondition(pointGroups == nil || pointGroups!.count == points.count, "one group per point")
        var last: [Int64: Int] = [:]
        last.reserveCapacity(points.count)
        for (i, p) in points.enumerated() { last[p.id] = i }
        var order: [Int32] = []
        order.reserveCapacity(last.count)
        for (i, p) in points.enumerated() where last[p.id] == i { order.append(Int32(i)) }
        let n = order.count
        var unit = [Double](repeating: 0, count: 3 * n)
        for (slot, i) in order.enumerated() {
            let v = Self.unitVector(points[Int(i)].point)
            unit[3 * slot] = v.x
            unit[3 * slot + 1] = v.y
            unit[3 * slot + 2] = v.z
        }
        // Arrange a permutation of 0..<n in tree order, then lay every array out in it.
        var perm = (0..<n).map { Int32($0) }
        var axisOf = [UInt8](repeating: 0, count: n)
        Self.arrange(&perm, &axisOf, unit: unit, lo: 0, hi: n)
        vectors.reserveCapacity(3 * n)
        terms.reserveCapacity(3 * n)
        ids.reserveCapacity(n)
        if pointGroups != nil { groups.reserveCapacity(n) }
        for slot in 0..<n {
            let j = Int(perm[slot])
            let point = points[Int(order[j])].point
            vectors.append(unit[3 * j])
            vectors.append(unit[3 * j + 1])
            vectors.append(unit[3 * j + 2])
            let φ = point.lat * .pi / 180
            terms.append(φ)
            terms.append(cos(φ))
            terms.append(point.lon)
            ids.append(points[Int(order[j])].id)
            if let pointGroups { groups.append(pointGroups[Int(order[j])]) }
        }
        axes = axisOf
        dead = [Bool](repeating: false, count: n)
        count = n
        if !groups.isEmpty {
            masks = [UInt64](repeating: 0, count: n)
            _ = Self.fillMasks(&masks, groups: groups, lo: 0, hi: n)
        }
        let bySorted = (0..<n).sorted { ids[$0] < ids[$1] }
        sortedIDs = bySorted.map { ids[$0] }
        slotsOfSorted = bySorted.map { Int32($0) }
    }

    /// The bit of a group in a node's mask.
    @inline(__always)
    static func groupBit(_ group: UInt16) -> UInt64 { 1 << UInt64(min(group, 63)) }

    /// Stores at each inner node the groups of its range and returns those of [lo, hi).
    private static func fillMasks(_ masks: inout [UInt64], groups: [UInt16], lo: Int, hi: Int) -> UInt64 {
        guard hi - lo > leafSize else {
            var mask: UInt64 = 0
            for slot in lo..<hi { mask |= groupBit(groups[slot]) }
            return mask
        }
        let mid = (lo + hi) >> 1
        let mask =
            fillMasks(&masks, groups: groups, lo: lo, hi: mid) | groupBit(groups[mid])
            | fillMasks(&masks, groups: groups, lo: mid + 1, hi: hi)
        masks[mid] = mask
        return mask
    }

    /// The id in `slot` (0..<slotCount, tree order: points near each other in space are mostly near in it).
    public func id(atSlot slot: Int) -> Int64 { ids[slot] }

    /// The slot of `id`, if it is in the tree (removed or not).
    public func slot(of id: Int64) -> Int? {
        var lo = 0
        var hi = sortedIDs.count
        while lo < hi {
            let mid = (lo + hi) >> 1
            if sortedIDs[mid] < id { lo = mid + 1 } else { hi = mid }
        }
        guard lo < sortedIDs.count, sortedIDs[lo] == id else { return nil }
        return Int(slotsOfSorted[lo])
    }

    /// True when `id` is in the tree and not removed.
    public func contains(_ id: Int64) -> Bool {
        guard let slot = slot(of: id) else { return false }
        return !dead[slot]
    }

    /// Slots in the tree, live or removed (the owner rebuilds when too many are removed).
    public var slotCount: Int { ids.count }

    /// Removes `id`; false when it was not there.
    @discardableResult
    public mutating func remove(_ id: Int64) -> Bool {
        guard let slot = slot(of: id), !dead[slot] else { return false }
        dead[slot] = true
        count -= 1
        return true
    }

    /// The unit vector of a point.
    @inline(__always)
    static func unitVector(_ p: GeoPoint) -> (x: Double, y: Double, z: Double) {
        let φ = p.lat * .pi / 180
        let λ = p.lon * .pi / 180
        let c = cos(φ)
        return (c * cos(λ), c * sin(λ), sin(φ))
    }

    /// The chord² (unit sphere) of a great-circle distance in metres, without slack; 4 beyond half the globe.
    @inline(__always)
    static func chordSquared(metres: Double) -> Double {
        let half = metres / (2 * GeoPoint.earthRadius)
        guard half < .pi / 2 else { return 4 }
        let s = sin(half)
        return 4 * s * s
    }

    // MARK: Building

    private static func arrange(_ perm: inout [Int32], _ axisOf: inout [UInt8], unit: [Double], lo: Int, hi: Int) {
        guard hi - lo > leafSize else { return }
        // Split on the axis of widest spread.
        var low = (Double.infinity, Double.infinity, Double.infinity)
        var high = (-Double.infinity, -Double.infinity, -Double.infinity)
        for i in lo..<hi {
            let j = 3 * Int(perm[i])
            low = (min(low.0, unit[j]), min(low.1, unit[j + 1]), min(low.2, unit[j + 2]))
            high = (max(high.0, unit[j]), max(high.1, unit[j + 1]), max(high.2, unit[j + 2]))
        }
        let spread = (high.0 - low.0, high.1 - low.1, high.2 - low.2)
        let axis = spread.0 >= spread.1 && spread.0 >= spread.2 ? 0 : (spread.1 >= spread.2 ? 1 : 2)
        let mid = (lo + hi) >> 1
        select(&perm, unit: unit, axis: axis, lo: lo, hi: hi, nth: mid)
        axisOf[mid] = UInt8(axis)
        arrange(&perm, &axisOf, unit: unit, lo: lo, hi: mid)
        arrange(&perm, &axisOf, unit: unit, lo: mid + 1, hi: hi)
    }

    /// Quickselect: afterwards perm[nth] holds the element of rank nth along `axis`, with none greater before it
    /// and none smaller after it.
    private static func select(_ perm: inout [Int32], unit: [Double], axis: Int, lo: Int, hi: Int, nth: Int) {
        var lo = lo
        var hi = hi - 1
        @inline(__always) func key(_ i: Int) -> Double { unit[3 * Int(perm[i]) + axis] }
        while lo < hi {
            // Median of three as the pivot, then Hoare partition.
            let m = (lo + hi) >> 1
            if key(m) < key(lo) { perm.swapAt(m, lo) }
            if key(hi) < key(lo) { perm.swapAt(hi, lo) }
            if key(hi) < key(m) { perm.swapAt(hi, m) }
            let pivot = key(m)
            var i = lo
            var j = hi
            while i <= j {
                while key(i) < pivot { i += 1 }
                while key(j) > pivot { j -= 1 }
                if i <= j {
                    perm.swapAt(i, j)
                    i += 1
                    j -= 1
                }
            }
            if nth <= j {
                hi = j
            } else if nth >= i {
                lo = i
            } else {
                return
            }
        }
    }

    // MARK: Querying

    /// The `k` points nearest to `center` within `maxRadius` metres (great-circle), nearest first, ties broken by
    /// smaller id; distances are `center.distance(to:)` exactly. None when `k` ≤ 0 or `maxRadius` is negative or NaN.
    /// With `group`, only the points of that group (none when the tree was built without groups).
    public func nearest(_ k: Int, to center: GeoPoint, within maxRadius: Double = .infinity, group: UInt16? = nil)
        -> [(id: Int64, distance: Double)]
    {
        search(k, to: center, within: maxRadius, group: group) { $0.map { ($0.id, $0.distance) } }
    }

    /// `nearest`, answering each point's slot instead of its id (same order), so an owner that keeps its data in
    /// slot order (`id(atSlot:)`) reads the answer's neighbours close together.
    public func nearestSlots(
        _ k: Int, to center: GeoPoint, within maxRadius: Double = .infinity, group: UInt16? = nil
    ) -> [(slot: Int64, distance: Double)] {
        search(k, to: center, within: maxRadius, group: group) { $0.map { (Int64($0.slot), $0.distance) } }
    }

    private func search<R>(
        _ k: Int, to center: GeoPoint, within maxRadius: Double, group: UInt16?,
        _ answer: (UnsafeMutableBufferPointer<Neighbor>) -> [R]
    ) -> [R] {
        guard k > 0, maxRadius >= 0, count > 0 else { return [] }
        if group != nil && groups.isEmpty { return [] }
        let capacity = min(k, count)
        return withUnsafeTemporaryAllocation(of: Neighbor.self, capacity: capacity) { storage in
            var search = TreeSearch(center: center, maxRadius: maxRadius, heap: ScratchHeap(storage))
            vectors.withUnsafeBufferPointer { v in
                terms.withUnsafeBufferPointer { t in
                    ids.withUnsafeBufferPointer { idp in
                        axes.withUnsafeBufferPointer { a in
                            dead.withUnsafeBufferPointer { d in
                                let tree = TreeArrays(vectors: v, terms: t, ids: idp, axes: a, dead: d)
                                if let group {
                                    groups.withUnsafeBufferPointer { g in
                                        masks.withUnsafeBufferPointer { m in
                                            search.visit(
                                                tree, groups: g, masks: m, group: group,
                                                bit: Self.groupBit(group), lo: 0, hi: ids.count)
                                        }
                                    }
                                } else {
                                    search.visit(tree, lo: 0, hi: ids.count)
                                }
                            }
                        }
                    }
                }
            }
            return answer(search.heap.sorted())
        }
    }
}

/// The tree's arrays as raw buffers for the duration of one query.
private struct TreeArrays {
    let vectors: UnsafeBufferPointer<Double>
    let terms: UnsafeBufferPointer<Double>
    let ids: UnsafeBufferPointer<Int64>
    let axes: UnsafeBufferPointer<UInt8>
    let dead: UnsafeBufferPointer<Bool>
}

/// One query's state: the centre in both forms, the bound in chord² and the heap.
private struct TreeSearch {
    let qx: Double
    let qy: Double
    let qz: Double
    let φ: Double
    let cosφ: Double
    let lon: Double
    let maxRadius: Double
    /// chord² of `maxRadius` plus slack.
    let radiusBound: Double
    /// Current pruning bound in chord²: the radius bound, or the heap's worst plus slack once full.
    var bound: Double
    var heap: ScratchHeap

    init(center: GeoPoint, maxRadius: Double, heap: ScratchHeap) {
        let v = SphereTree.unitVector(center)
        qx = v.x
        qy = v.y
        qz = v.z
        φ = center.lat * .pi / 180
        cosφ = cos(φ)
        lon = center.lon
        self.maxRadius = maxRadius
        radiusBound = SphereTree.chordSquared(metres: maxRadius) + SphereTree.chordSlack
        bound = radiusBound
        self.heap = heap
    }

    mutating func visit(_ tree: TreeArrays, lo: Int, hi: Int) {
        if hi - lo <= SphereTree.leafSize {
            for slot in lo..<hi { consider(tree, slot) }
            return
        }
        let mid = (lo + hi) >> 1
        let axis = Int(tree.axes[mid])
        let q = axis == 0 ? qx : (axis == 1 ? qy : qz)
        let diff = q - tree.vectors[3 * mid + axis]
        consider(tree, mid)
        if diff < 0 {
            visit(tree, lo: lo, hi: mid)
            if diff * diff <= bound { visit(tree, lo: mid + 1, hi: hi) }
        } else {
            visit(tree, lo: mid + 1, hi: hi)
            if diff * diff <= bound { visit(tree, lo: lo, hi: mid) }
        }
    }

    /// `visit` for the points of one group only: subtrees whose mask lacks the group's bit are skipped.
    mutating func visit(
        _ tree: TreeArrays, groups: UnsafeBufferPointer<UInt16>, masks: UnsafeBufferPointer<UInt64>, group: UInt16,
        bit: UInt64, lo: Int, hi: Int
    ) {
        if hi - lo <= SphereTree.leafSize {
            for slot in lo..<hi where groups[slot] == group { consider(tree, slot) }
            return
        }
        let mid = (lo + hi) >> 1
        guard masks[mid] & bit != 0 else { return }
        let axis = Int(tree.axes[mid])
        let q = axis == 0 ? qx : (axis == 1 ? qy : qz)
        let diff = q - tree.vectors[3 * mid + axis]
        if groups[mid] == group { consider(tree, mid) }
        if diff < 0 {
            visit(tree, groups: groups, masks: masks, group: group, bit: bit, lo: lo, hi: mid)
            if diff * diff <= bound {
                visit(tree, groups: groups, masks: masks, group: group, bit: bit, lo: mid + 1, hi: hi)
            }
        } else {
            visit(tree, groups: groups, masks: masks, group: group, bit: bit, lo: mid + 1, hi: hi)
            if diff * diff <= bound {
                visit(tree, groups: groups, masks: masks, group: group, bit: bit, lo: lo, hi: mid)
            }
        }
    }

    @inline(__always)
    mutating func consider(_ tree: TreeArrays, _ slot: Int) {
        if tree.dead[slot] { return }
        let dx = tree.vectors[3 * slot] - qx
        let dy = tree.vectors[3 * slot + 1] - qy
        let dz = tree.vectors[3 * slot + 2] - qz
        guard dx * dx + dy * dy + dz * dz <= bound else { return }
        let distance = GeoPoint.haversine(
            φ1: φ, cosφ1: cosφ, lon1: lon, φ2: tree.terms[3 * slot], cosφ2: tree.terms[3 * slot + 1],
            lon2: tree.terms[3 * slot + 2])
        guard distance <= maxRadius else { return }
        if heap.offer(Neighbor(id: tree.ids[slot], distance: distance, slot: Int32(slot))) && heap.isFull {
            bound = min(radiusBound, SphereTree.chordSquared(metres: heap.worstDistance) + SphereTree.chordSlack)
        }
    }
}

/// A bounded max-heap on (distance, id) over caller-provided scratch: the worst kept neighbour at the root.
struct ScratchHeap {
    private let items: UnsafeMutableBufferPointer<Neighbor>
    private(set) var count = 0

    init(_ storage: UnsafeMutableBufferPointer<Neighbor>) { items = storage }

    var isFull: Bool { count == items.count }
    var worstDistance: Double { items[0].distance }

    /// Offers a candidate; true when it was kept.
    @inline(__always)
    mutating func offer(_ candidate: Neighbor) -> Bool {
        if count < items.count {
            items.initializeElement(at: count, to: candidate)
            count += 1
            var child = count - 1
            while child > 0 {
                let parent = (child - 1) / 2
                guard items[parent].precedes(items[child]) else { break }
                items.swapAt(parent, child)
                child = parent
            }
            return true
        }
        guard candidate.precedes(items[0]) else { return false }
        items[0] = candidate
        var parent = 0
        while true {
            let left = 2 * parent + 1
            if left >= count { break }
            var worse = left
            if left + 1 < count && items[left].precedes(items[left + 1]) { worse = left + 1 }
            guard items[parent].precedes(items[worse]) else { break }
            items.swapAt(parent, worse)
            parent = worse
        }
        return true
    }

    /// The neighbours held, nearest first (sorted in place in the scratch).
    func sorted() -> UnsafeMutableBufferPointer<Neighbor> {
        var held = UnsafeMutableBufferPointer(rebasing: items[0..<count])
        held.sort { $0.precedes($1) }
        return held
    }
}
