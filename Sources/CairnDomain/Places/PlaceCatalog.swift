// The places in memory and their indexes: one `SphereTree` over every place plus one per category (so a category
// filter is applied before the limit, never after), and the folded names sorted for prefix search. The trees are
// static; a place written since they were built sits in a small side buffer (`pending`) that every query scans
// linearly, and its old slot is marked removed in the trees. When the buffer and the removed slots together pass
// `rebuildThreshold`, `Places` builds a fresh catalog off the loop from the current summaries and swaps it in.
//
// A catalog is a value: building one (sorting a million points into trees) runs off the loop, and the loop keeps
// answering from the old one meanwhile.
import CairnGeo
import CairnSpatial

/// The places and their indexes.
struct PlaceCatalog: Sendable {
    /// Every place by id.
    private(set) var summaries: [Int64: PlaceSummary] = [:]
    /// All places in the trees when they were built.
    private var all = SphereTree()
    private var byCategory: [String: SphereTree] = [:]
    /// Folded names of the places the trees were built with, sorted by UTF-8 then id.
    private var names: [(folded: String, id: Int64)] = []
    /// Places written since the build: not in the trees, scanned by every query.
    private var pending: [Int64: PlaceSummary] = [:]
    /// The folded names of the places in `pending`, folded once when written rather than by every search.
    private var pendingNames: [Int64: String] = [:]
    /// Places written or removed since the build: their entry in `names` is stale.
    private var changed: Set<Int64> = []
    /// Slots marked removed in the trees since the build.
    private var removedSlots = 0

    /// Empty.
    init() {}

    /// Builds the indexes over `places` (slow for many: call off the loop).
    init(_ places: [PlaceSummary]) {
        summaries.reserveCapacity(places.count)
        for place in places { summaries[place.id] = place }
        let current = Array(summaries.values)
        all = SphereTree(current.map { ($0.id, $0.point) })
        var groups: [String: [(id: Int64, point: GeoPoint)]] = [:]
        for place in current { groups[place.category, default: []].append((place.id, place.point)) }
        for (category, points) in groups { byCategory[category] = SphereTree(points) }
        names = current.map { (NameFold.fold($0.name), $0.id) }
        names.sort { Self.precedes($0, $1) }
    }

    /// How many places.
    var count: Int { summaries.count }

    /// True when the side buffer and removed slots have grown enough that a rebuild pays.
    var needsRebuild: Bool { pending.count + removedSlots > max(256, summaries.count / 32) }

    /// Writes one place (new or changed).
    mutating func upsert(_ place: PlaceSummary) {
        dropFromTrees(place.id)
        summaries[place.id] = place
        pending[place.id] = place
        pendingNames[place.id] = NameFold.fold(place.name)
        changed.insert(place.id)
    }

    /// Removes one place; false when it was not there.
    @discardableResult
    mutating func remove(_ id: Int64) -> Bool {
        guard summaries[id] != nil else { return false }
        dropFromTrees(id)
        summaries.removeValue(forKey: id)
        pending.removeValue(forKey: id)
        pendingNames.removeValue(forKey: id)
        changed.insert(id)
        return true
    }

    private mutating func dropFromTrees(_ id: Int64) {
        guard let old = summaries[id], pending[id] == nil else { return }
        if all.remove(id) { removedSlots += 1 }
        byCategory[old.category]?.remove(id)
    }

    /// The `limit` places nearest to `center` (of `category` when given, within `radius` metres when given),
    /// nearest first, ties broken by id.
    func nearest(_ limit: Int, to center: GeoPoint, category: String?, radius: Double?) -> [NearbyPlace] {
        let within = radius ?? .infinity
        let fromTrees: [(id: Int64, distance: Double)]
        if let category {
            fromTrees = byCategory[category]?.nearest(limit, to: center, within: within) ?? []
        } else {
            fromTrees = all.nearest(limit, to: center, within: within)
        }
        var found = fromTrees.map { NearbyPlace(place: summaries[$0.id]!, distance: $0.distance) }
        if !pending.isEmpty {
            for place in pending.values where category == nil || place.category == category {
                let distance = center.distance(to: place.point)
                if distance <= within { found.append(NearbyPlace(place: place, distance: distance)) }
            }
            found.sort { $0.distance < $1.distance || ($0.distance == $1.distance && $0.place.id < $1.place.id) }
            if found.count > limit { found.removeLast(found.count - limit) }
        }
        return found
    }

    /// Up to `limit` places whose folded name starts with the folded `prefix`, by folded name then id.
    func search(_ prefix: String, limit: Int) -> [PlaceSummary] {
        let folded = NameFold.fold(prefix)
        var found: [(folded: String, id: Int64)] = []
        // The first name not before the prefix, then every one that starts with it.
        var lo = 0
        var hi = names.count
        while lo < hi {
            let mid = (lo + hi) / 2
            if names[mid].folded.utf8.lexicographicallyPrecedes(folded.utf8) { lo = mid + 1 } else { hi = mid }
        }
        var i = lo
        while i < names.count, names[i].folded.utf8.starts(with: folded.utf8), found.count < limit {
            if !changed.contains(names[i].id) { found.append(names[i]) }
            i += 1
        }
        for (id, name) in pendingNames where name.utf8.starts(with: folded.utf8) { found.append((name, id)) }
        found.sort { Self.precedes($0, $1) }
        return found.prefix(limit).compactMap { summaries[$0.id] }
    }

    private static func precedes(_ a: (folded: String, id: Int64), _ b: (folded: String, id: Int64)) -> Bool {
        if a.folded.utf8.elementsEqual(b.folded.utf8) { return a.id < b.id }
        return a.folded.utf8.lexicographicallyPrecedes(b.folded.utf8)
    }
}
