// Nearby pages in distance order, whatever the store: the store reads the candidates inside a box, and this decides
// how large a box to read. It starts small (`firstDistanceRadius` beyond the cursor's distance) and grows by the
// shortfall until a page is full or the radius is reached, so a page in a dense centre reads a few hundred rows and
// one in the country still finds its pictures. Both stores call it with their own box read.
public import CairnGeo

extension PictureQuery {
    /// The first box's radius beyond the cursor's distance, in metres.
    public static let firstDistanceRadius = 50.0

    /// A page in distance order around `origin`, within `radius`, reading candidates through `candidates(in:)`.
    public func pageByDistance(
        around origin: GeoPoint, within radius: Double, viewer: PictureViewer,
        candidates: (PictureArea) throws -> [PictureCandidate]
    ) rethrows -> [(candidate: PictureCandidate, key: PictureKey)] {
        var r = min(radius, (after?.distance ?? 0) + Self.firstDistanceRadius)
        while true {
            let all = try candidates(PictureArea(around: origin, radius: r))
            let page = order.page(all, viewer: viewer, after: after, radius: r, limit: limit)
            if page.count >= limit || r >= radius { return page }
            // Grow by the shortfall: a page needs limit / found times the area.
            let growth = page.isEmpty ? 4 : max(1.5, (Double(limit) / Double(page.count)).squareRoot() * 1.2)
            r = min(radius, r * growth)
        }
    }
}
