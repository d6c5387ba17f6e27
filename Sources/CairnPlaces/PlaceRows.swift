// The places a catalog was built with, in compact column arrays rather than a dictionary of structs with their own
// strings: a place is a row (its slot in the catalog's SphereTree, so the places of one answer, near each other
// in space, mostly lie near each other in memory too), its category a 16-bit index into the interned
// categories, its name and its folded name slices of two contiguous UTF-8 buffers (the folded ones in name order,
// for prefix search by bisection), and, when the protocol layer supplies a `PlaceWireForm`, the bytes it renders
// for the place once at build time (a nearest answer then copies them instead of encoding each field again).
// Immutable once built, and a class, so an answer can keep the rows it points into for one retain.
import CairnGeo
import Synchronization

/// How the protocol layer renders a place once, at build time; opaque bytes to the domain.
public typealias PlaceWireForm = @Sendable (PlaceSummary) -> [UInt8]

/// Places in rows, in the order of the catalog's tree. Immutable.
final class PlaceRows: Sendable {
    /// Most distinct categories (a row keeps its category in 16 bits).
    static let maxCategories = 65_536

    /// Ids by row.
    let ids: [Int64]
    /// Points by row.
    let points: [GeoPoint]
    /// Category index by row.
    let categoryOf: [UInt16]
    /// The categories, by index.
    let categories: [String]
    /// Names, back to back, UTF-8; row r is `names[nameEnds[r - 1]..<nameEnds[r]]` (from 0 for row 0).
    private let names: [UInt8]
    private let nameEnds: [UInt32]
    /// Folded names in (folded name, id) order, back to back; `byName[i]` is the row of the i-th.
    private let folded: [UInt8]
    private let foldedEnds: [UInt32]
    let byName: [Int32]
    /// Each row's wire form, back to back; empty without a `PlaceWireForm`.
    private let wire: [UInt8]
    private let wireEnds: [UInt32]

    /// No places.
    convenience init() { self.init([], categories: [], groupOf: [:], wireForm: nil) }

    /// Rows for `places` in this order, each category one of `categories` (`groupOf` its index).
    init(_ places: [PlaceSummary], categories: [String], groupOf: [String: UInt16], wireForm: PlaceWireForm?) {
        var categoryOf: [UInt16] = []
        categoryOf.reserveCapacity(places.count)
        var names: [UInt8] = []
        var nameEnds: [UInt32] = []
        nameEnds.reserveCapacity(places.count)
        var wire: [UInt8] = []
        var wireEnds: [UInt32] = []
        var foldedNames: [(name: [UInt8], row: Int32)] = []
        foldedNames.reserveCapacity(places.count)
        for (row, place) in places.enumerated() {
            categoryOf.append(groupOf[place.category]!)
            names.append(contentsOf: place.name.utf8)
            nameEnds.append(Self.offset(names.count))
            if let wireForm {
                wire.append(contentsOf: wireForm(place))
                wireEnds.append(Self.offset(wire.count))
            }
            foldedNames.append((Array(NameFold.fold(place.name).utf8), Int32(row)))
        }
        foldedNames.sort { a, b in
            a.name.elementsEqual(b.name)
                ? places[Int(a.row)].id < places[Int(b.row)].id : a.name.lexicographicallyPrecedes(b.name)
        }
        var folded: [UInt8] = []
        var foldedEnds: [UInt32] = []
        foldedEnds.reserveCapacity(places.count)
        for entry in foldedNames {
            folded.append(contentsOf: entry.name)
            foldedEnds.append(Self.offset(folded.count))
        }
        self.ids = places.map(\.id)
        self.points = places.map(\.point)
        self.categoryOf = categoryOf
        self.categories = categories
        self.names = names
        self.nameEnds = nameEnds
        self.folded = folded
        self.foldedEnds = foldedEnds
        self.byName = foldedNames.map(\.row)
        self.wire = wire
        self.wireEnds = wireEnds
    }

    private static func offset(_ count: Int) -> UInt32 {
        precondition(count <= Int(UInt32.max), "place names or wire forms beyond 4 GiB")
        return UInt32(count)
    }

    /// How many rows.
    var count: Int { ids.count }

    /// The place in `row`.
    func summary(_ row: Int) -> PlaceSummary {
        let start = row == 0 ? 0 : Int(nameEnds[row - 1])
        let name = String(decoding: names[start..<Int(nameEnds[row])], as: UTF8.self)
        return PlaceSummary(
            id: ids[row], name: name, category: categories[Int(categoryOf[row])], point: points[row])
    }

    /// The i-th folded name in name order.
    func foldedName(_ i: Int) -> ArraySlice<UInt8> {
        folded[(i == 0 ? 0 : Int(foldedEnds[i - 1]))..<Int(foldedEnds[i])]
    }

    /// True when the rows carry wire forms.
    var hasWire: Bool { !wireEnds.isEmpty }

    /// Reads the first and last byte of the wire form of each row in `slots` (the non-negative ones), so the
    /// cache misses of an answer's places overlap instead of coming one at a time as each form is copied.
    func touchWire(_ slots: [(slot: Int64, distance: Double)]) {
        guard hasWire else { return }
        var sum: UInt8 = 0
        wire.withUnsafeBufferPointer { bytes in
            for hit in slots where hit.slot >= 0 {
                let row = Int(hit.slot)
                let start = row == 0 ? 0 : Int(wireEnds[row - 1])
                sum &+= bytes[start] &+ bytes[Int(wireEnds[row]) - 1]
            }
        }
        Self.touched.store(sum, ordering: .relaxed)
    }
    /// Where `touchWire` leaves its sum, so the reads are not optimised away (atomic: catalogs on several threads,
    /// as in parallel tests, may answer at once).
    private static let touched = Atomic<UInt8>(0)

    /// Calls `body` with the wire form of `row` (rows built with a `PlaceWireForm` only).
    @inline(__always)
    func withWire<R>(_ row: Int, _ body: (UnsafeRawBufferPointer) -> R) -> R {
        let start = row == 0 ? 0 : Int(wireEnds[row - 1])
        let end = Int(wireEnds[row])
        return wire.withUnsafeBytes { body(UnsafeRawBufferPointer(rebasing: $0[start..<end])) }
    }
}
