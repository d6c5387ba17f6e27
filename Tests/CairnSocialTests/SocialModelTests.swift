// The small social models: the friend graph and the sharing rules.
import CairnSocial
import Testing

@Suite(.timeLimit(.minutes(5)))
struct FriendGraphTests {
    @Test func friendshipIsSymmetricAndClearsRequests() {
        var g = FriendGraph()
        g.addRequest(from: 1, to: 2)
        #expect(g.hasRequest(from: 1, to: 2))
        #expect(g.incomingRequests(of: 2) == [1])
        g.addFriendship(1, 2)
        #expect(g.areFriends(2, 1))
        #expect(!g.hasRequest(from: 1, to: 2))
        g.removeFriendship(2, 1)
        #expect(g.friends(of: 1).isEmpty && g.friends(of: 2).isEmpty)
    }
}

@Suite(.timeLimit(.minutes(5)))
struct ShareRulesTests {
    @Test func pauseOverridesPerFriendLevelsAndExpires() {
        var r = ShareRules()
        r.set(owner: 1, viewer: 2, level: .approximate, until: nil)
        #expect(r.level(owner: 1, viewer: 2, now: 0) == .approximate)
        #expect(r.level(owner: 1, viewer: 3, now: 0) == .precise)
        r.pause(1, until: 100)
        #expect(r.level(owner: 1, viewer: 2, now: 99) == .hidden)
        #expect(r.level(owner: 1, viewer: 2, now: 100) == .approximate)
        let ended = r.expire(now: 100)
        #expect(ended.count == 1 && ended[0].owner == 1 && ended[0].viewer == nil)
        #expect(r.expire(now: 1000).isEmpty)
    }

    @Test func anOwnersViewGivesEachViewerTheLevelOfTheRules() {
        var r = ShareRules()
        r.set(owner: 1, viewer: 2, level: .approximate, until: nil)
        r.set(owner: 1, viewer: 3, level: .hidden, until: 50)
        let view = r.view(of: 1, now: 0)
        #expect(!view.hidesFromEveryone)
        #expect(view.level(of: 2) == .approximate && view.level(of: 3) == .hidden && view.level(of: 4) == .precise)
        #expect(r.view(of: 1, now: 50).level(of: 3) == .precise)  // the timed rule is over
        #expect(r.view(of: 2, now: 0).level(of: 1) == .precise)  // another owner's rules are their own
        r.pause(1, until: nil)
        let paused = r.view(of: 1, now: 0)
        #expect(paused.hidesFromEveryone && [2, 3, 4].allSatisfy { paused.level(of: $0) == .hidden })
    }

    @Test func preciseWithoutTimeRemovesTheRule() {
        var r = ShareRules()
        r.set(owner: 1, viewer: 2, level: .hidden, until: 50)
        r.set(owner: 1, viewer: 2, level: .precise, until: nil)
        #expect(r.rule(owner: 1, viewer: 2, now: 0) == nil)
        #expect(r.expire(now: 100).isEmpty)
    }
}
