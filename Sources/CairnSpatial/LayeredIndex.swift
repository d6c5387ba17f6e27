// One GridIndex per SpatialLayer behind one value, so the hub owns a single spatial structure and every call says
// which layer it means. Layers share nothing but the cell size: a point upserted into one layer is invisible to
// queries on the others, and the same id may live in several layers at once.
//
// Threading: like GridIndex, a plain value owned by the event loop.

public import CairnGeo

/// A `GridIndex` per `SpatialLayer`, addressed by layer.
public struct LayeredIndex {
    private var layers: [GridIndex]

    /// Empty layers whose cells are about `cellSize` metres on a side (10 m to 100 km).
    public init(cellSize: Double = 500) {
        layers = SpatialLayer.allCases.map { _ in GridIndex(cellSize: cellSize) }
    }

    /// The grid of one layer, read-only.
    public subscript(layer: SpatialLayer) -> GridIndex {
        layers[layer.rawValue]
    }

    /// Points indexed in `layer`.
    public func count(in layer: SpatialLayer) -> Int {
        layers[layer.rawValue].count
    }

    /// Points indexed in all layers together.
    public var totalCount: Int {
        layers.reduce(0) { $0 + $1.count }
    }

    /// True when `id` is indexed in `layer`.
    public func contains(_ id: Int64, in layer: SpatialLayer) -> Bool {
        layers[layer.rawValue].contains(id)
    }

    /// The position of `id` in `layer`, or nil.
    public func position(of id: Int64, in layer: SpatialLayer) -> GeoPoint? {
        layers[layer.rawValue].position(of: id)
    }

    /// Inserts or moves `id` in `layer`. O(1).
    public mutating func upsert(_ id: Int64, at point: GeoPoint, in layer: SpatialLayer) {
        layers[layer.rawValue].upsert(id, at: point)
    }

    /// Removes `id` from `layer`; false when it was not there. O(1).
    @discardableResult
    public mutating func remove(_ id: Int64, from layer: SpatialLayer) -> Bool {
        layers[layer.rawValue].remove(id)
    }

    /// Calls `body` for every point of `layer` within `radius` metres of `center` (see `GridIndex.forEach`).
    public func forEach(
        in layer: SpatialLayer, within radius: Double, of center: GeoPoint,
        _ body: (Int64, GeoPoint, Double) -> Void
    ) {
        layers[layer.rawValue].forEach(within: radius, of: center, body)
    }

    /// Ids and distances of the points of `layer` within `radius` metres of `center`, in no particular order.
    public func query(in layer: SpatialLayer, within radius: Double, of center: GeoPoint)
        -> [(id: Int64, distance: Double)]
    {
        layers[layer.rawValue].query(within: radius, of: center)
    }

    /// The `k` points of `layer` nearest to `center` within `maxRadius` metres, nearest first, ties by id.
    public func nearest(_ k: Int, to center: GeoPoint, in layer: SpatialLayer, within maxRadius: Double = .infinity)
        -> [(id: Int64, distance: Double)]
    {
        layers[layer.rawValue].nearest(k, to: center, within: maxRadius)
    }
}
