// Which cells can hold a point within a given great-circle distance of a centre. The set of such points is a
// spherical cap; this file bounds it row by row: the cap's latitude extent picks the rows, and within a row the
// cap's widest longitude half-width over the row's latitude band picks a run of columns, split in two where it
// crosses the antimeridian and widened to the whole row where the cap holds a pole.
//
// The half-width at latitude ψ of a cap of angular radius δ around (φ, λ) follows from the spherical law of
// cosines: cos L(ψ) = (cos δ − sin φ sin ψ) / (cos φ cos ψ). Its only interior extremum is at
// sin ψ* = sin φ / cos δ, a maximum when δ < π/2 (the parallel the cap's bounding meridians touch) and a minimum
// when δ > π/2 (the complement is then a small cap whose width is subtracted). So the widest point over a band is
// at ψ* when δ < π/2 and ψ* lies inside the band, and otherwise at one of the band's edges; evaluating those three
// is exact, with no sampling.
//
// Floating point must never lose a point whose computed distance equals the radius, so the cap is grown by a
// metre (far above the ~10 cm worst-case rounding of haversine near the antipode) and widths by 1e-7 rad. Because
// the cover contains every point whose computed distance is ≤ radius, "all cells of the cover visited" is also
// the lower bound nearest-neighbour search stops on: any unvisited point is farther than the radius.

import CairnGeo

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The cells covering a spherical cap on one grid.
struct SphericalCap {
    /// Metres added to every radius before bounding, so rounding never excludes a point at exactly the radius.
    static let radiusSlack = 1.0
    /// Radians added to every longitude half-width for the rounding of acos near ±1.
    static let widthSlack = 1e-7

    let center: GeoPoint
    /// Angular radius in radians, slack included.
    let delta: Double
    /// Angular radius in degrees, slack included: no point farther in latitude than this can be inside.
    let deltaDegrees: Double
    /// True when the cap is the whole sphere.
    let wholeSphere: Bool
    /// First and last row the cap reaches.
    let firstRow: Int
    let lastRow: Int

    private let phi: Double
    private let sinPhi: Double
    private let cosPhi: Double
    private let cosDelta: Double

    /// The cap of `radius` metres (≥ 0, possibly infinite) around `center`.
    init(center: GeoPoint, radius: Double, geometry: GridGeometry) {
        self.center = center
        let grown = radius + radius * 1e-9 + Self.radiusSlack
        delta = grown / GeoPoint.earthRadius
        wholeSphere = delta >= .pi
        deltaDegrees = delta * 180 / .pi
        phi = center.lat * .pi / 180
        sinPhi = sin(phi)
        cosPhi = cos(phi)
        cosDelta = wholeSphere ? -1 : cos(delta)
        if wholeSphere {
            firstRow = 0
            lastRow = geometry.rowCount - 1
        } else {
            firstRow = geometry.row(lat: max(-90, center.lat - deltaDegrees))
            lastRow = geometry.row(lat: min(90, center.lat + deltaDegrees))
        }
    }

    /// True when every longitude is within reach at some latitude: the cap holds a pole, or the centre is one.
    var spansAllLongitudes: Bool {
        wholeSphere || cosPhi < 1e-12 || phi + delta >= .pi / 2 || phi - delta <= -.pi / 2
    }

    /// The widest longitude half-width of the whole cap in degrees (≥ 180 when it spans all longitudes); the
    /// classic bounding box, used when scanning cells without the per-row cover.
    func overallHalfWidth() -> Double {
        if spansAllLongitudes { return 360 }
        // Here δ < π/2 - |φ|, so the ratio is below one.
        return (asin(min(1, sin(delta) / cosPhi)) + Self.widthSlack) * 180 / .pi
    }

    /// The widest longitude half-width of the cap within `row`'s latitude band, in degrees: ≥ 180 for the whole
    /// row, negative when the cap misses the row.
    func halfWidth(row: Int, geometry: GridGeometry) -> Double {
        if wholeSphere || cosPhi < 1e-12 { return 360 }
        // The band, widened by rounding-scale margins and clipped to the cap's latitude extent.
        let edgeSlack = 1e-9
        let south = max((geometry.southEdge(row: row) - edgeSlack) * .pi / 180, phi - delta, -.pi / 2)
        let north = min((geometry.northEdge(row: row) + edgeSlack) * .pi / 180, phi + delta, .pi / 2)
        if south > north { return -1 }
        var widest = max(width(at: south), width(at: north))
        if delta < .pi / 2 {
            let s = sinPhi / cosDelta
            if abs(s) < 1 {
                let tangent = asin(s)
                if south < tangent && tangent < north { widest = max(widest, width(at: tangent)) }
            }
        }
        if widest >= .pi { return 360 }
        return (widest + Self.widthSlack) * 180 / .pi
    }

    /// Half-width in radians of the cap along the parallel at `psi`, for `psi` within the cap's latitude extent.
    @inline(__always)
    private func width(at psi: Double) -> Double {
        let cosPsi = cos(psi)
        if cosPsi < 1e-12 { return .pi }  // a pole inside the cap: every longitude
        let x = (cosDelta - sinPhi * sin(psi)) / (cosPhi * cosPsi)
        if x <= -1 { return .pi }
        if x >= 1 { return 0 }
        return acos(x)
    }
}

/// A run of columns in one row, possibly wrapping past the antimeridian: `count` columns starting at `start`,
/// modulo the row's column count. A count equal to the row's column count is the whole row.
struct ColumnRun: Equatable {
    var start: Int
    var count: Int

    static let empty = ColumnRun(start: 0, count: 0)

    /// The columns of a row of `columns` columns within `halfWidth` degrees of longitude `lon`; the whole row when
    /// `halfWidth` ≥ 180, nothing when it is negative. Monotone: a wider half-width gives a superset.
    @inline(__always)
    init(around lon: Double, halfWidth: Double, columns: Int, geometry: GridGeometry) {
        if halfWidth < 0 {
            self = .empty
            return
        }
        if halfWidth >= 180 {
            self.init(start: 0, count: columns)
            return
        }
        let west = lon - halfWidth
        let east = lon + halfWidth
        // Split at the antimeridian into [first, columns) and [0, last], each computed from an in-range
        // longitude with the same function that placed the points, so edges agree exactly.
        let first: Int
        let last: Int
        if west < -180 {
            first = geometry.column(lon: west + 360, columns: columns)
            last = geometry.column(lon: east, columns: columns)
        } else if east > 180 {
            first = geometry.column(lon: west, columns: columns)
            last = geometry.column(lon: east - 360, columns: columns)
        } else {
            let a = geometry.column(lon: west, columns: columns)
            let b = geometry.column(lon: east, columns: columns)
            self.init(start: a, count: b - a + 1)
            return
        }
        if first <= last + 1 {
            self.init(start: 0, count: columns)
        } else {
            self.init(start: first, count: columns - first + last + 1)
        }
    }

    init(start: Int, count: Int) {
        self.start = start
        self.count = count
    }

    /// True when column `column` of a row of `columns` columns is in the run.
    func contains(_ column: Int, columns: Int) -> Bool {
        var offset = column - start
        if offset < 0 { offset += columns }
        return offset < count
    }

    /// The columns of `self` not in `inner`, as at most two runs, for `inner` ⊆ `self`.
    func subtracting(_ inner: ColumnRun, columns: Int) -> (ColumnRun, ColumnRun) {
        if inner.count == 0 { return (self, .empty) }
        if inner.count >= columns { return (.empty, .empty) }
        if count >= columns {
            var after = inner.start + inner.count
            if after >= columns { after -= columns }
            return (ColumnRun(start: after, count: columns - inner.count), .empty)
        }
        var offset = inner.start - start
        if offset < 0 { offset += columns }
        assert(offset + inner.count <= count, "inner run is not inside the outer run")
        var after = start + offset + inner.count
        if after >= columns { after -= columns }
        return (ColumnRun(start: start, count: offset), ColumnRun(start: after, count: count - offset - inner.count))
    }

    /// Calls `body` with each column of the run in order, for a row of `columns` columns.
    @inline(__always)
    func forEach(columns: Int, _ body: (Int) -> Void) {
        var column = start
        for _ in 0..<count {
            body(column)
            column += 1
            if column == columns { column = 0 }
        }
    }
}
