// The places in memory and their indexes: the places in compact rows (`PlaceRows`: ids, points, interned
// categories, names and folded names in contiguous buffers, each place's wire form), and one `SphereTree` over
// every row whose points carry their category as a group, so a category filter is applied inside the search,
// before the limit, never after. The rows and the tree are static; a place written since they were built sits in a
// small side buffer (`pending`) that every query scans linearly, and its old row is marked stale (and removed from
// the tree). When the buffer and the stale rows together pass a threshold, `Places` builds a fresh catalog off
// the loop from the current places and swaps it in.
//
// A catalog is a value: building one (sorting a million points into a tree) runs off the loop, and the loop keeps
// answering from the old one meanwhile.
import CairnGeo
import CairnSpatial

/// The places and their indexes.
struct PlaceCatalog: Sendable {
    /// The places the tree was built with.
    private var rows = PlaceRows()
    /// Every place, its category as the point's group; a place's slot is its row.
    private var tree = SphereTree()
    /// Category to group (index into `rows.categories`).
    private var groupOf: [String: UInt16] = [:]
    /// Places written since the build: not in the rows, scanned by every query.
    private var pending: [Int64: PendingPlace] = [:]
    /// Rows written or removed since the build: stale, and gone from the tree.
    private var staleRows: Set<Int32> = []
    /// How the protocol layer renders a place, if it does.
    private let wireForm: PlaceWireForm?
    /// Places now.
    private(set) var count = 0
    /// Places now, by category.
    private(set) var categoryCounts: [String: Int] = [:]

    /// Empty.
    init(wireForm: PlaceWireForm? = nil) {
        self.wireForm = wireForm
    }

    /// Builds the indexes over `places`, an id given twice keeping its last (slow for many: call off the loop).
    init(_ places: [PlaceSummary], wireForm: PlaceWireForm? = nil) {
        self.wireForm = wireForm
        let order = places.indices.sorted { a, b in
            places[a].id < places[b].id || (places[a].id == places[b].id && a < b)
        }
        var unique: [PlaceSummary] = []
        unique.reserveCapacity(places.count)
        for (k, i) in order.enumerated() where k + 1 == order.count || places[order[k + 1]].id != places[i].id {
            unique.append(places[i])
        }
        var categories: [String] = []
        let groups = unique.map { place in
            if let known = groupOf[place.category] { return known }
            precondition(categories.count < PlaceRows.maxCategories, "more than 65,536 place categories")
            categories.append(place.category)
            groupOf[place.category] = UInt16(categories.count - 1)
            return UInt16(categories.count - 1)
        }
        tree = SphereTree(unique.map { ($0.id, $0.point) }, groups: groups)
        // Rows in slot order: `unique` is sorted by id, so each slot's place is found by bisection.
        let bySlot = (0..<tree.slotCount).map { slot in
            let id = tree.id(atSlot: slot)
            var lo = 0
            var hi = unique.count
            while lo < hi {
                let mid = (lo + hi) >> 1
                if unique[mid].id < id { lo = mid + 1 } else { hi = mid }
            }
            return unique[lo]
        }
        rows = PlaceRows(bySlot, categories: categories, groupOf: groupOf, wireForm: wireForm)
        count = rows.count
        for group in rows.categoryOf { categoryCounts[rows.categories[Int(group)], default: 0] += 1 }
    }

    /// True when the side buffer and stale rows have grown enough that a rebuild pays.
    var needsRebuild: Bool { pending.count + staleRows.count > max(256, count / 32) }

    /// The place with `id`, if there is one.
    func summary(of id: Int64) -> PlaceSummary? {
        if let written = pending[id] { return written.summary }
        guard let row = tree.slot(of: id), !staleRows.contains(Int32(row)) else { return nil }
        return rows.summary(row)
    }

    /// True when there is a place with `id`.
    func contains(_ id: Int64) -> Bool {
        if pending[id] != nil { return true }
        guard let row = tree.slot(of: id) else { return false }
        return !staleRows.contains(Int32(row))
    }

    /// Every place (for a rebuild; slow for many).
    func allSummaries() -> [PlaceSummary] {
        var all: [PlaceSummary] = []
        all.reserveCapacity(count)
        for row in 0..<rows.count where !staleRows.contains(Int32(row)) { all.append(rows.summary(row)) }
        for written in pending.values { all.append(written.summary) }
        return all
    }

    /// Writes one place (new or changed).
    mutating func upsert(_ place: PlaceSummary) {
        if let old = summary(of: place.id) {
            uncount(old.category)
        } else {
            count += 1
        }
        markStale(place.id)
        pending[place.id] = PendingPlace(
            summary: place, folded: NameFold.fold(place.name), wire: wireForm.map { $0(place) })
        categoryCounts[place.category, default: 0] += 1
    }

    /// Removes one place; false when it was not there.
    @discardableResult
    mutating func remove(_ id: Int64) -> Bool {
        guard let old = summary(of: id) else { return false }
        uncount(old.category)
        count -= 1
        markStale(id)
        pending.removeValue(forKey: id)
        return true
    }

    private mutating func uncount(_ category: String) {
        let left = (categoryCounts[category] ?? 1) - 1
        categoryCounts[category] = left > 0 ? left : nil
    }

    private mutating func markStale(_ id: Int64) {
        guard let row = tree.slot(of: id), staleRows.insert(Int32(row)).inserted else { return }
        tree.remove(id)
    }

    /// The `limit` places nearest to `center` (of `category` when given, within `radius` metres when given),
    /// nearest first, ties broken by id.
    func nearest(_ limit: Int, to center: GeoPoint, category: String?, radius: Double?) -> NearbyPlaces {
        let within = radius ?? .infinity
        var hits: [NearbyPlaces.Hit]
        if let category {
            if let group = groupOf[category] {
                hits = tree.nearestSlots(limit, to: center, within: within, group: group)
            } else {
                hits = []
            }
        } else {
            hits = tree.nearestSlots(limit, to: center, within: within)
        }
        guard !pending.isEmpty else { return NearbyPlaces(rows: rows, hits: hits, extras: []) }
        var extras: [PendingPlace] = []
        for written in pending.values where category == nil || written.summary.category == category {
            let distance = center.distance(to: written.summary.point)
            guard distance <= within else { continue }
            extras.append(written)
            hits.append((-Int64(extras.count), distance))
        }
        guard !extras.isEmpty else { return NearbyPlaces(rows: rows, hits: hits, extras: []) }
        let rows = self.rows
        func placeID(_ hit: NearbyPlaces.Hit) -> Int64 {
            hit.slot >= 0 ? rows.ids[Int(hit.slot)] : extras[Int(-hit.slot - 1)].summary.id
        }
        hits.sort { $0.distance < $1.distance || ($0.distance == $1.distance && placeID($0) < placeID($1)) }
        if hits.count > limit { hits.removeLast(hits.count - limit) }
        return NearbyPlaces(rows: rows, hits: hits, extras: extras)
    }

    /// Up to `limit` places whose folded name starts with the folded `prefix`, by folded name then id.
    func search(_ prefix: String, limit: Int) -> [PlaceSummary] {
        let folded = Array(NameFold.fold(prefix).utf8)
        var found: [(folded: ArraySlice<UInt8>, id: Int64, row: Int)] = []
        // The first name not before the prefix, then every one that starts with it.
        var lo = 0
        var hi = rows.count
        while lo < hi {
            let mid = (lo + hi) / 2
            if rows.foldedName(mid).lexicographicallyPrecedes(folded) { lo = mid + 1 } else { hi = mid }
        }
        var i = lo
        while i < rows.count, found.count < limit {
            let name = rows.foldedName(i)
            guard name.starts(with: folded) else { break }
            let row = Int(rows.byName[i])
            if !staleRows.contains(Int32(row)) { found.append((name, rows.ids[row], row)) }
            i += 1
        }
        for written in pending.values where written.folded.utf8.starts(with: folded) {
            found.append((ArraySlice(written.folded.utf8), written.summary.id, -1))
        }
        found.sort { a, b in
            a.folded.elementsEqual(b.folded) ? a.id < b.id : a.folded.lexicographicallyPrecedes(b.folded)
        }
        return found.prefix(limit).map { $0.row >= 0 ? rows.summary($0.row) : pending[$0.id]!.summary }
    }
}
