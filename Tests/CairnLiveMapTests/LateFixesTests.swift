import CairnSocial
import Testing

// Late fixes on their own: each user keeps only the most recent arrivals, overwriting the oldest in place (the
// ring's storage never grows past the bound, however many fixes arrive), the total across users is capped, and
// taking them for a snapshot empties the rings.
@testable import CairnCore
@testable import CairnLiveMap

@Suite(.timeLimit(.minutes(5)))
struct LateFixesTests {
    @Test func eachUserKeepsTheNewestArrivalsWithinTheBound() {
        var late = LateFixes(perUser: 4, total: 1_000)
        for ts in 1...100_000 { late.keep(Fix(lat: 1, lon: 1, ts: Int64(ts)), for: 7) }
        late.keep(Fix(lat: 2, lon: 2, ts: 5), for: 8)
        #expect(late.fixes(of: 7).map(\.ts) == [99_997, 99_998, 99_999, 100_000])
        #expect(late.capacity(of: 7) == 4, "eviction overwrites in place: the ring never grows")
        #expect(late.count == 5)
        #expect(late.dropped == 99_996)
    }

    @Test func theTotalIsCappedAcrossUsers() {
        var late = LateFixes(perUser: 2, total: 3)
        for user in Int64(1)...5 { late.keep(Fix(lat: 1, lon: 1, ts: 1), for: user) }
        #expect(late.count == 3)
        #expect(late.fixes(of: 4).isEmpty && late.fixes(of: 5).isEmpty)
        late.keep(Fix(lat: 1, lon: 1, ts: 2), for: 1)  // a full total drops new fixes, even for a known user
        #expect(late.fixes(of: 1).map(\.ts) == [1])
    }

    @Test func takingThemEmptiesTheRingsAndKeepsWorking() {
        var late = LateFixes(perUser: 3, total: 100)
        for ts in 1...5 { late.keep(Fix(lat: 1, lon: 1, ts: Int64(ts)), for: 7) }
        let rows = late.takeAll()
        #expect(rows.map(\.fix.ts) == [3, 4, 5] && rows.allSatisfy { $0.userID == 7 })
        #expect(late.isEmpty && late.fixes(of: 7).isEmpty)
        late.keep(Fix(lat: 1, lon: 1, ts: 9), for: 7)
        #expect(late.fixes(of: 7).map(\.ts) == [9])
        #expect(late.capacity(of: 7) == 3)
        _ = late.takeAll()
        _ = late.takeAll()  // idle since the last snapshot: the ring is given back
        #expect(late.capacity(of: 7) == 0)
    }

    @Test func noHistoryKeepsNothing() {
        var late = LateFixes(perUser: 0, total: 100)
        late.keep(Fix(lat: 1, lon: 1, ts: 1), for: 7)
        #expect(late.isEmpty)
    }
}
