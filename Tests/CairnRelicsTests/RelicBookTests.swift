import CairnGeo
import CairnHubTestSupport
import CairnLoop
import Testing

// The relic book on its own: roaming reports each crossing once, expiry sweeps only what is due and skips
// deleted relics, removal names the audience (users inside and connections shown the marker), and forgetting a
// user or a connection leaves nothing behind.
@testable import CairnCore
@testable import CairnRelics

@Suite(.timeLimit(.minutes(5)))
struct RelicBookTests {
    func marker(_ id: Int64, lat: Double = 48.85, radius: Double = 50, expires: Int64? = nil) -> RelicMarker {
        RelicMarker(
            id: id, creatorID: 1, lat: lat, lon: 2.35, radius: radius, createdAt: 0, expiresAt: expires, locked: false)
    }

    func roam(_ book: inout RelicBook, _ user: Int64, lat: Double, now: Int64 = 0) -> (entered: [Int64], left: [Int64])
    {
        var entered: [Int64] = []
        var left: [Int64] = []
        book.roam(
            user, to: GeoPoint(lat: lat, lon: 2.35)!, now: now, entered: { entered.append($0.id) },
            left: { left.append($0) })
        for id in entered { book.tell(user, id) }  // as the hub does for the relics it announces
        return (entered.sorted(), left.sorted())
    }

    @Test func roamingReportsEachCrossingOnce() {
        var book = RelicBook(coverCellSize: 1_000)
        book.add(marker(1))
        book.add(marker(2, lat: 48.8504, radius: 100))
        #expect(roam(&book, 7, lat: 48.86) == ([], []))
        #expect(roam(&book, 7, lat: 48.8502) == ([1, 2], []))
        #expect(roam(&book, 7, lat: 48.8503) == ([], []))
        #expect(roam(&book, 7, lat: 48.8510) == ([], [1]))  // ~110 m from 1, ~67 m from 2
        #expect(book.isInside(7, 2) && !book.isInside(7, 1))
        book.forget(user: 7)
        #expect(!book.isInside(7, 2))
        #expect(roam(&book, 7, lat: 48.8510) == ([2], []), "after forgetting, the next move reports afresh")
    }

    @Test func wideAndNarrowCirclesAreBothFound() {
        var book = RelicBook(coverCellSize: 250)
        book.add(marker(1, radius: 5_000))  // on the coarse cells
        book.add(marker(2, radius: 30))
        #expect(roam(&book, 7, lat: 48.85) == ([1, 2], []))
        #expect(roam(&book, 7, lat: 48.89) == ([], [2]))  // ~4.4 km north: still in the wide one
        #expect(roam(&book, 7, lat: 48.90) == ([], [1]))  // ~5.6 km: out of both
        _ = book.remove(1)
        #expect(roam(&book, 7, lat: 48.85) == ([2], []))
    }

    @Test func anExpiredRelicIsNotEnteredEvenBeforeTheSweep() {
        var book = RelicBook(coverCellSize: 1_000)
        book.add(marker(1, expires: 100))
        #expect(roam(&book, 7, lat: 48.85, now: 100) == ([], []))
        #expect(book.live(1, at: 99) != nil && book.live(1, at: 100) == nil)
    }

    @Test func sweepRemovesOnlyDueRelicsWithTheirAudience() {
        var book = RelicBook(coverCellSize: 1_000)
        book.add(marker(1, expires: 100))
        book.add(marker(2, expires: 200))
        book.add(marker(3, expires: 50))
        _ = roam(&book, 7, lat: 48.85)
        book.show([1, 2], to: 42)
        _ = book.remove(3)  // deleted before its time: the sweep skips its heap entry
        var swept: [(Int64, RelicBook.Audience)] = []
        book.sweep(now: 150) { swept.append(($0.id, $1)) }
        #expect(swept.map(\.0) == [1])
        #expect(swept.first?.1.users == [7])
        #expect(swept.first?.1.connections == [42])
        #expect(book.count == 1)
        book.forget(connection: 42)
        let removed = book.remove(2)
        #expect(removed?.1.connections.isEmpty == true)
        #expect(removed?.1.users == [7])
        #expect(book.count == 0 && book.count(of: 1) == 0)
    }

    @Test func onlyThoseToldOfARelicHearThatTheyLeftItOrThatItWent() {
        var book = RelicBook(coverCellSize: 1_000)
        book.add(marker(1))
        book.add(marker(2))
        var entered: [Int64] = []
        var left: [Int64] = []
        book.roam(7, to: GeoPoint(lat: 48.85, lon: 2.35)!, now: 0, entered: { entered.append($0.id) }, left: { _ in })
        #expect(entered.sorted() == [1, 2])
        book.tell(7, 1)  // only relic 1 was announced
        #expect(book.wasTold(7, 1) && !book.wasTold(7, 2))
        #expect(book.remove(2)?.1.users.isEmpty == true)
        book.add(marker(2))
        book.roam(7, to: GeoPoint(lat: 48.90, lon: 2.35)!, now: 0, entered: { _ in }, left: { left.append($0) })
        #expect(left == [1])
    }
}
