import CairnGeo
import Foundation
import Testing

// How pictures are ordered and paged, shared by every store: each sort's key, ties broken by id (newest first),
// pages strictly after the cursor with no duplicates or gaps, visibility (hidden, reported by the viewer, private
// events not joined), and cursors that survive the round trip through their opaque text and refuse anything else.
// Also event hashtags and the settings' bounds.
@testable import CairnCore
@testable import CairnPictures

@Suite(.timeLimit(.minutes(5)))
struct PictureOrderTests {
    static let origin = GeoPoint(lat: 48.85, lon: 2.35)!

    func candidate(
        _ id: Int64, north: Double = 0, likes: Int64 = 0, at: Int64 = 0, hidden: Bool = false,
        event: Int64? = nil
    ) -> PictureCandidate {
        PictureCandidate(
            id: id, point: GeoPoint(lat: Self.origin.lat + north / 111_195, lon: Self.origin.lon), likes: likes,
            createdAt: at, hidden: hidden, privateEvent: event)
    }

    let everyone = PictureViewer(user: 9, joined: [], reported: [])

    @Test func eachSortOrdersByItsKeyWithNewestFirstOnTies() {
        let pictures = [
            candidate(1, north: 300, likes: 5, at: 10), candidate(2, north: 100, likes: 5, at: 30),
            candidate(3, north: 100, likes: 9, at: 20), candidate(4, north: 200, likes: 0, at: 30),
        ]
        func ids(_ sort: PictureSort) -> [Int64] {
            PictureOrder(sort: sort, origin: Self.origin).page(
                pictures, viewer: everyone, after: nil, radius: nil, limit: 10
            ).map(\.candidate.id)
        }
        #expect(ids(.date) == [4, 2, 3, 1])
        #expect(ids(.likes) == [3, 2, 1, 4])
        #expect(ids(.distance) == [3, 2, 4, 1])
    }

    @Test func pagesAfterACursorNeitherRepeatNorSkip() {
        // Many ties: ten likes values, three dates.
        var pictures: [PictureCandidate] = []
        for n in Int64(1)...95 {
            pictures.append(candidate(n, north: Double(n % 13) * 10, likes: n % 10, at: n % 3))
        }
        for sort in PictureSort.allCases {
            let order = PictureOrder(sort: sort, origin: Self.origin)
            let whole = order.page(pictures, viewer: everyone, after: nil, radius: nil, limit: 1_000).map(
                \.candidate.id)
            var paged: [Int64] = []
            var after: PictureKey?
            repeat {
                let page = order.page(pictures, viewer: everyone, after: after, radius: nil, limit: 10)
                paged += page.map(\.candidate.id)
                after = page.count == 10 ? page.last?.key : nil
            } while after != nil
            #expect(paged == whole, "\(sort)")
            #expect(Set(paged).count == 95)
        }
    }

    @Test func aPictureArrivingBetweenPagesIsNeverShownTwiceNorShiftsTheRest() {
        var pictures = (1...30).map { candidate(Int64($0), likes: Int64($0 % 4), at: Int64($0)) }
        let order = PictureOrder(sort: .date, origin: Self.origin)
        let first = order.page(pictures, viewer: everyone, after: nil, radius: nil, limit: 10)
        pictures.append(candidate(31, at: 31))  // newer than everything: before the cursor
        let second = order.page(pictures, viewer: everyone, after: first.last?.key, radius: nil, limit: 10)
        #expect(first.map(\.candidate.id) == Array((21...30).reversed()))
        #expect(second.map(\.candidate.id) == Array((11...20).reversed()))
    }

    @Test func visibilityAndRadiusFilterBeforeTheLimit() {
        let pictures = [
            candidate(1), candidate(2, hidden: true), candidate(3, event: 7), candidate(4), candidate(5, north: 900),
        ]
        let order = PictureOrder(sort: .date, origin: Self.origin)
        let reporter = PictureViewer(user: 1, joined: [], reported: [4])
        let member = PictureViewer(user: 2, joined: [7], reported: [])
        #expect(order.page(pictures, viewer: reporter, after: nil, radius: 500, limit: 2).map(\.candidate.id) == [1])
        #expect(order.page(pictures, viewer: member, after: nil, radius: 500, limit: 2).map(\.candidate.id) == [4, 3])
        #expect(
            order.page(pictures, viewer: member, after: nil, radius: 1_000, limit: 9).map(\.candidate.id) == [
                5, 4, 3, 1,
            ])
    }

    @Test func cursorsRoundTripAndRefuseForgeries() throws {
        let cursor = PictureCursor(
            sort: .distance, after: PictureKey(rank: 0, distance: 123.456_789_012_3, id: 42), origin: Self.origin)
        let back = try #require(PictureCursor(text: cursor.text))
        #expect(back == cursor)
        let dated = PictureCursor(
            sort: .date, after: PictureKey(rank: -1_700_000_000_000, distance: 0, id: 7), origin: nil)
        #expect(PictureCursor(text: dated.text) == dated)
        #expect(PictureCursor(text: "") == nil)
        #expect(PictureCursor(text: "not a cursor") == nil)
        #expect(PictureCursor(text: "c2l6ZX4xfjB-Mg") == nil)  // "size~1~0~2": no such sort
        #expect(PictureCursor(text: String(repeating: "A", count: 400)) == nil)
        // Ranks this hub never hands out: Int64.min (whose negation would trap the walk), positive ranks for date
        // and likes, a rank for distance, a non-positive id.
        func forged(_ text: String) -> String {
            Data(text.utf8).base64EncodedString().replacingOccurrences(of: "+", with: "-")
                .replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
        }
        #expect(PictureCursor(text: forged("date~-9223372036854775808~0~1")) == nil)
        #expect(PictureCursor(text: forged("likes~-9223372036854775808~0~1")) == nil)
        #expect(PictureCursor(text: forged("date~5~0~1")) == nil)
        #expect(PictureCursor(text: forged("distance~3~0~1")) == nil)
        #expect(PictureCursor(text: forged("date~-5~0~0")) == nil)
        #expect(PictureCursor(text: forged("date~-5~0~1")) != nil)
        let placeless = PictureCursor(
            sort: .distance, after: PictureKey(rank: 0, distance: .infinity, id: 9), origin: Self.origin)
        #expect(PictureCursor(text: placeless.text) == placeless)
    }

    @Test func hashtagsAreCanonicalAndFoundInCaptions() throws {
        #expect(try EventTag.canonical("#Party2026") == "party2026")
        #expect(try EventTag.canonical("Fête_de_la_musique") == "fête_de_la_musique")
        for bad in ["", "#", "two words", "#a#b", "semi;colon", String(repeating: "x", count: 65)] {
            #expect(throws: DomainError.self) { try EventTag.canonical(bad) }
        }
        #expect(EventTag.hashtags(in: "Dinner #Paris with #friends, #paris again #") == ["paris", "friends"])
    }

    @Test func settingsOutsideTheirBoundsAreNamed() {
        #expect(PictureSettings().problem == nil)
        #expect(PictureSettings(reportThreshold: 0).problem?.contains("report_threshold") == true)
        #expect(PictureSettings(maxNearbyRadius: 5).problem?.contains("max_nearby_radius") == true)
        #expect(PictureSettings(postsPerHour: 0).problem?.contains("posts_per_hour") == true)
    }

    @Test func anAreasBoxAndStripsHoldEveryPointOfItsCircle() {
        var rng = SystemRandomNumberGenerator()
        for (lat, lon, radius) in [
            (48.85, 2.35, 250.0), (0.0, 179.999, 5_000.0), (-33.9, -180.0, 1_000.0), (70.0, 20.0, 5_000.0),
        ] {
            let origin = GeoPoint(lat: lat, lon: lon)!
            let area = PictureArea(around: origin, radius: radius)
            let strips = area.strips
            for _ in 0..<2_000 {
                let bearing = Double.random(in: 0..<(2 * .pi), using: &rng)
                let d = Double.random(in: 0...radius, using: &rng) / GeoPoint.earthRadius
                let φ1 = lat * .pi / 180
                let φ2 = asin(sin(φ1) * cos(d) + cos(φ1) * sin(d) * cos(bearing))
                var λ2 = lon + atan2(sin(bearing) * sin(d) * cos(φ1), cos(d) - sin(φ1) * sin(φ2)) * 180 / .pi
                if λ2 > 180 { λ2 -= 360 } else if λ2 < -180 { λ2 += 360 }
                let point = GeoPoint(lat: φ2 * 180 / .pi, lon: λ2)!
                guard origin.distance(to: point) <= radius else { continue }
                #expect(point.lat >= area.latMin && point.lat <= area.latMax)
                let strip = PictureArea.strip(lon: point.lon)
                #expect(
                    strips.contains { s in
                        (s.last.map { (s.first...$0).contains(strip) } ?? (s.first == strip))
                            && point.lon >= s.lonMin && point.lon <= s.lonMax
                    }, "\(point) outside the strips of \(origin)")
            }
        }
        // Across ±180° two ranges; near a pole every longitude, read as ranges rather than thousands of seeks.
        #expect(PictureArea(around: GeoPoint(lat: 0, lon: 179.999)!, radius: 5_000).lons.count == 2)
        let polar = PictureArea(around: GeoPoint(lat: 89.99, lon: 0)!, radius: 5_000)
        #expect(polar.lons.count == 1 && polar.lons[0] == (-180, 180))
        #expect(polar.strips.allSatisfy { $0.last != nil })
    }
}
