// A `places.nearest` answer as the catalog found it: the rows it points into, each hit's distance, and the few
// places written since the catalog was built that made it into the answer. It reads as a collection of
// `NearbyPlace` (each summary made when asked for), and lets the encoder copy each place's pre-rendered wire form
// instead, so answering allocates little more than the list of hits.

/// The places nearest to a position, nearest first.
public struct NearbyPlaces: Sendable, RandomAccessCollection {
    /// A hit: a row of `rows` (slot ≥ 0), or `extras[-slot - 1]`.
    typealias Hit = (slot: Int64, distance: Double)

    let rows: PlaceRows
    let hits: [Hit]
    let extras: [PendingPlace]

    /// No places.
    public init() {
        rows = PlaceRows()
        hits = []
        extras = []
    }

    init(rows: PlaceRows, hits: [Hit], extras: [PendingPlace]) {
        self.rows = rows
        self.hits = hits
        self.extras = extras
        rows.touchWire(hits)
    }

    public var startIndex: Int { 0 }
    public var endIndex: Int { hits.count }

    /// The i-th place and its distance.
    public subscript(i: Int) -> NearbyPlace {
        let hit = hits[i]
        let place = hit.slot >= 0 ? rows.summary(Int(hit.slot)) : extras[Int(-hit.slot - 1)].summary
        return NearbyPlace(place: place, distance: hit.distance)
    }

    /// The distance of the i-th place, in metres.
    public func distance(at i: Int) -> Double { hits[i].distance }

    /// Calls `body` with the i-th place's wire form and returns true, or returns false when the catalog was built
    /// without a `PlaceWireForm`.
    @inline(__always)
    public func withWire(at i: Int, _ body: (UnsafeRawBufferPointer) -> Void) -> Bool {
        let hit = hits[i]
        if hit.slot >= 0 {
            guard rows.hasWire else { return false }
            rows.withWire(Int(hit.slot), body)
            return true
        }
        let extra = extras[Int(-hit.slot - 1)]
        guard let wire = extra.wire else { return false }
        wire.withUnsafeBytes(body)
        return true
    }
}

/// A place written since the catalog was built: kept whole, with its folded name and wire form.
struct PendingPlace: Sendable {
    let summary: PlaceSummary
    let folded: String
    let wire: [UInt8]?
}
