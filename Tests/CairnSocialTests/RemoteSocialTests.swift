// Friendships, requests and sharing rules across nodes, through the `RemoteSocial` seam. Changes committed here are
// handed to the port with their versions, and a change that lets a viewer see less (a hide, an unfriend) is
// answered only once the port confirms; changes committed elsewhere are applied through the same paths as a local
// one (a hide says `pos.hidden` to a watcher here, an unfriend withdraws, a new friendship shows and follows), and
// anything not newer than what this node holds is ignored.
import CairnErrorCodes
import CairnHub
import CairnHubTestSupport
import CairnLoop
import Synchronization
import Testing

@testable import CairnCore
@testable import CairnLiveMap
@testable import CairnSocial

/// Records what Social handed to other nodes; confirmations are released by the test.
final class RecordingSocial: RemoteSocial {
    var log: [String] = []
    var pending: [(Bool) -> Void] = []

    func friendshipBegan(_ a: Int64, _ b: Int64, version: Int64, crossed: Bool) {
        log.append("began \(a) \(b)\(crossed ? " crossed" : "")")
    }
    func friendshipEnded(
        _ a: Int64, _ b: Int64, versionAB: Int64, versionBA: Int64, confirmed: @escaping (Bool) -> Void
    ) {
        log.append("ended \(a) \(b)")
        pending.append(confirmed)
    }
    func requestChanged(from: Int64, to: Int64, pending: Bool, version: Int64) {
        log.append("request \(from) \(to) \(pending)")
    }
    func ruleChanged(
        owner: Int64, viewer: Int64?, level: ShareLevel?, until: Int64?, version: Int64, confirmed: ((Bool) -> Void)?
    ) {
        log.append("rule \(owner) \(viewer ?? 0) \(level?.rawValue ?? "default")\(confirmed == nil ? "" : " wait")")
        if let confirmed { pending.append(confirmed) }
    }

    func confirmAll(_ applied: Bool = true) {
        let all = pending
        pending = []
        for confirm in all { confirm(applied) }
    }
}

@MainActor
@Suite(.timeLimit(.minutes(5)))
struct RemoteSocialTests {
    /// Users 1 and 2 friends, 3 a friend of neither; 2 watches here; 1 connected here and has reported.
    static func harness() async throws -> (DomainHarness, RecordingSocial, Caller) {
        let h = DomainHarness()
        try await h.makeUsers(3)
        try h.restore(friends: [(1, 2)])
        let social = RecordingSocial()
        h.hub.social.remote = social
        let owner = h.connect(1, as: 1)
        h.connect(2, as: 2, watching: true)
        _ = try h.hub.liveMap.report(owner, PositionReport(lat: 10, lon: 10))
        h.events.clear()
        return (h, social, owner)
    }

    @Test func aRemoteHideSaysHiddenHereAndStopsTheFanOut() async throws {
        let (h, _, owner) = try await Self.harness()
        let version = h.clock.now() * 1000 + 50
        h.hub.social.applyRemoteRule(owner: 1, viewer: 2, level: .hidden, until: nil, version: version)
        #expect(h.hub.social.level(owner: 1, viewer: 2, now: h.clock.now()) == .hidden)
        #expect(h.events.hidden.map { "\($0.owner)>\($0.viewer)" } == ["1>2"])
        #expect(h.events.published.contains { $0.name == "presence.offline" && $0.users == [2] })
        _ = try h.hub.liveMap.report(owner, PositionReport(lat: 10.5, lon: 10))
        #expect(h.events.moved.isEmpty)
        // An older message (or the same one again) changes nothing.
        h.hub.social.applyRemoteRule(owner: 1, viewer: 2, level: nil, until: nil, version: version - 1)
        h.hub.social.applyRemoteRule(owner: 1, viewer: 2, level: nil, until: nil, version: version)
        #expect(h.hub.social.level(owner: 1, viewer: 2, now: h.clock.now()) == .hidden)
        // A newer one reveals, as a local reveal would.
        h.hub.social.applyRemoteRule(owner: 1, viewer: 2, level: nil, until: nil, version: version + 1)
        #expect(h.hub.social.level(owner: 1, viewer: 2, now: h.clock.now()) == .precise)
        #expect(h.events.shown.last.map { $0.viewer == 2 && $0.position.owner == 1 } == true)
    }

    @Test func aRemotePauseHidesFromEveryFriend() async throws {
        let (h, _, _) = try await Self.harness()
        h.hub.social.applyRemoteRule(
            owner: 1, viewer: nil, level: .hidden, until: nil, version: h.clock.now() * 1000 + 1)
        #expect(h.hub.social.isPaused(1, now: h.clock.now()))
        #expect(h.events.hidden.map(\.viewer) == [2])
    }

    @Test func aRemoteUnfriendWithdrawsAndALateBeginningDoesNotUndoIt() async throws {
        let (h, _, owner) = try await Self.harness()
        let version = h.clock.now() * 1000 + 10
        h.hub.social.applyRemoteFriendshipBegan(1, 2, version: version - 5)  // already friends: nothing
        h.hub.social.applyRemoteFriendshipEnded(1, 2, versionAB: version, versionBA: version + 1)
        #expect(!h.hub.social.areFriends(1, 2))
        #expect(h.events.withdrawn.map { "\($0.owner)>\($0.viewer)" } == ["1>2"])
        _ = try h.hub.liveMap.report(owner, PositionReport(lat: 11, lon: 10))
        #expect(h.events.moved.isEmpty)
        h.hub.social.applyRemoteFriendshipBegan(1, 2, version: version)  // older than the end: ignored
        #expect(!h.hub.social.areFriends(1, 2))
        h.hub.social.applyRemoteFriendshipBegan(1, 2, version: version + 2)  // newer: friends again, and shown at once
        #expect(h.hub.social.areFriends(1, 2))
        #expect(h.events.shown.last.map { $0.viewer == 2 && $0.position.fix.lat == 11 } == true)
    }

    @Test func aRemoteFriendshipIsLiveAndFollowedHere() async throws {
        let (h, _, owner) = try await Self.harness()
        let fanOut = RecordingRemote()
        h.hub.liveMap.remote = fanOut
        h.connect(3, as: 3, watching: true)
        try await h.store.addFriendRequest(from: 1, to: 3, at: h.clock.now())  // the shared store has it
        h.hub.social.applyRemoteRequest(from: 1, to: 3, pending: true, version: h.clock.now() * 1000 + 1)
        // The request made elsewhere can be accepted here.
        let three = Caller(connection: 3, user: h.users[3]!)
        _ = try await outcome(h) { h.hub.social.accept(three, target: 1, $0) }.get()
        #expect(h.hub.social.areFriends(1, 3))
        h.hub.social.applyRemoteFriendshipEnded(
            1, 3, versionAB: h.clock.now() * 1000 + 900, versionBA: h.clock.now() * 1000 + 901)
        #expect(!fanOut.following.contains("1>3"))
        h.hub.social.applyRemoteFriendshipBegan(1, 3, version: h.clock.now() * 1000 + 902)
        #expect(fanOut.following.contains("1>3") && fanOut.following.contains("3>1"))
        h.events.clear()
        _ = try h.hub.liveMap.report(owner, PositionReport(lat: 12, lon: 10))
        #expect(Set(h.events.moved.map(\.viewer)) == [2, 3])
    }

    @Test func aHideHereIsAnsweredOnlyOnceOtherNodesConfirm() async throws {
        let (h, social, owner) = try await Self.harness()
        var answer: Result<Int64?, DomainError>?
        h.hub.social.setLevel(owner, viewer: 2, level: .hidden, forSeconds: nil) { answer = $0 }
        // Memory changed at once, before the commit and the others' acks.
        #expect(h.hub.social.level(owner: 1, viewer: 2, now: h.clock.now()) == .hidden)
        while social.pending.isEmpty { try await h.scheduler.run() }
        #expect(social.log == ["rule 1 2 hidden wait"])
        #expect(answer == nil)
        social.confirmAll()
        guard case .success? = answer else {
            Issue.record("hide not answered after the acks: \(String(describing: answer))")
            return
        }
        // A reveal waits for nobody.
        let shown = try await outcome(h) {
            h.hub.social.setLevel(owner, viewer: 2, level: .precise, forSeconds: nil, $0)
        }
        guard case .success = shown else {
            Issue.record("reveal refused: \(shown)")
            return
        }
        #expect(social.log.last == "rule 1 2 default")
    }

    @Test func anUnfriendHereIsAnsweredOnlyOnceOtherNodesConfirm() async throws {
        let (h, social, owner) = try await Self.harness()
        var answer: Result<FriendReply, DomainError>?
        h.hub.social.remove(owner, target: 2) { answer = $0 }
        while social.pending.isEmpty { try await h.scheduler.run() }
        #expect(social.log == ["ended 1 2"] && answer == nil)
        social.confirmAll()
        #expect((try? answer?.get())?.status == .removed)
    }

    @Test func aHideOtherNodesDidNotConfirmIsAnsweredWithAnErrorAndStaysInForceHere() async throws {
        let (h, social, owner) = try await Self.harness()
        var answer: Result<Int64?, DomainError>?
        h.hub.social.setLevel(owner, viewer: 2, level: .hidden, forSeconds: nil) { answer = $0 }
        while social.pending.isEmpty { try await h.scheduler.run() }
        social.confirmAll(false)
        guard case .failure(let error)? = answer else {
            Issue.record("a hide nobody confirmed was answered \(String(describing: answer))")
            return
        }
        #expect(error.code == .internal && error.message.contains("not every other hub confirmed"))
        // Committed and in force here all the same: nothing is rolled back.
        #expect(h.hub.social.level(owner: 1, viewer: 2, now: h.clock.now()) == .hidden)
        #expect(h.store.state.withLock { $0.rules[[1, 2]]?.0 } == .hidden)
    }

    @Test func requestsAndAcceptsHereAreTold() async throws {
        let (h, social, _) = try await Self.harness()
        let three = h.connect(3, as: 3)
        _ = try await outcome(h) { h.hub.social.request(three, target: 1, $0) }.get()
        let one = Caller(connection: 1, user: h.users[1]!)
        _ = try await outcome(h) { h.hub.social.accept(one, target: 3, $0) }.get()
        #expect(social.log == ["request 3 1 true", "began 1 3"])
    }
}

extension RemoteSocialTests {
    @Test func crossedRequestsHereAreToldAsCrossed() async throws {
        let (h, social, _) = try await Self.harness()
        let three = h.connect(3, as: 3)
        // 3 asks 1; while that commits, 1's request to 3 arrives from another node: the two crossed.
        var answer: Result<FriendReply, DomainError>?
        h.hub.social.request(three, target: 1) { answer = $0 }
        let held = try await h.scheduler.hold()
        try await h.store.addFriendRequest(from: 1, to: 3, at: h.clock.now())  // the shared store has both
        h.hub.social.applyRemoteRequest(from: 1, to: 3, pending: true, version: h.clock.now() * 1000 + 1)
        for job in held { job() }
        while h.hub.operationsInFlight > 0 { try await h.scheduler.run() }
        #expect((try? answer?.get())?.status == .pending)
        #expect(h.hub.social.areFriends(1, 3))
        #expect(social.log == ["began 3 1 crossed"])
    }
}
