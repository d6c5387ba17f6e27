// The bounded set of recent members (revoked tokens, their fingerprints, deleted relics): it holds what was inserted,
// forgets the oldest first once full, and inserting a member it holds changes nothing (not even its age).
import Testing

@testable import CairnCore

@Suite(.timeLimit(.minutes(5)))
struct RecentSetTests {
    @Test func holdsTheMostRecentAndForgetsTheOldestFirst() {
        var recent = RecentSet<Int64>(limit: 3)
        #expect(recent.isEmpty)
        for id: Int64 in [1, 2, 3] { recent.insert(id) }
        #expect([1, 2, 3].allSatisfy { recent.contains($0) })
        recent.insert(2)  // held already: nothing moves
        recent.insert(4)
        #expect(!recent.contains(1) && recent.contains(2) && recent.contains(3) && recent.contains(4))
        recent.insert(5)
        recent.insert(6)
        #expect(!recent.contains(2) && !recent.contains(3))
        #expect([4, 5, 6].allSatisfy { recent.contains($0) })
        recent.insert(1)  // forgotten members can come back
        #expect(recent.contains(1) && !recent.contains(4))
    }
}
