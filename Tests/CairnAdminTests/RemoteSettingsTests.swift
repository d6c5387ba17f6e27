// Live settings across nodes, through the `RemoteSettings` seam. A committed change here is announced (once, and not
// when it changed nothing); a change another node committed is read from the store and put in force here, each changed
// setting's feature hearing it once and the others not at all; a reset elsewhere (no stored override) and a stored
// value that no longer fits both bring back the default; a local change put while a read was under way is not undone by
// the older value that read saw, nor is one answered while a local change is being written; reads asked for during one
// make one more read; a failed read changes nothing.
import CairnHub
import CairnHubTestSupport
import Synchronization
import Testing

@testable import CairnAdmin
@testable import CairnCore

/// Records what Administration announced to other nodes.
final class RecordingRemoteSettings: RemoteSettings {
    var announced = 0
    func settingsChanged() { announced += 1 }
}

@MainActor
@Suite(.timeLimit(.minutes(5)))
struct RemoteSettingsTests {
    /// What the test's features heard, in order (`limit 10`, `flag true`, ...).
    final class Heard {
        var log: [String] = []
    }

    /// A hub with an admin store; user 1 is an admin connected on 1; two settings of the test's own, `limit`
    /// (1–1000, default 10) and `flag` (default true), whose features record what they hear.
    static func harness() async throws -> (DomainHarness, Caller, Heard) {
        let h = DomainHarness(admin: true)
        try await h.makeUsers(1)
        h.store.state.withLock { _ = $0.admins.insert(1) }
        let heard = Heard()
        h.hub.settings.registerInteger("limit", range: 1...1000, default: 10, help: "") {
            heard.log.append("limit \($0)")
        }
        h.hub.settings.registerBoolean("flag", default: true, help: "") { heard.log.append("flag \($0)") }
        return (h, h.connect(1, as: 1), heard)
    }

    /// Another node's commit: the store's overrides as it left them.
    static func storedElsewhere(_ h: DomainHarness, _ settings: [String: String]) {
        h.store.state.withLock { $0.settings = settings }
    }

    static func resync(_ h: DomainHarness) async throws -> Result<Int, DomainError> {
        try await outcome(h) { done in h.hub.settings.reread { done(.success($0)) } }.get()
    }

    @Test func aChangeCommittedHereIsAnnouncedOnce() async throws {
        let (h, admin, _) = try await Self.harness()
        let remote = RecordingRemoteSettings()
        h.hub.administration.remote = remote
        _ = try await outcome(h) { h.hub.administration.changeSettings(admin, [("limit", .integer(30))], $0) }.get()
        #expect(remote.announced == 1)
        // The value in force again: nothing stored, nothing announced.
        _ = try await outcome(h) { h.hub.administration.changeSettings(admin, [("limit", .integer(30))], $0) }.get()
        #expect(remote.announced == 1)
        // A failed write is not announced.
        h.store.state.withLock { $0.failWrites = true }
        let failed = try await outcome(h) { h.hub.administration.changeSettings(admin, [("limit", nil)], $0) }
        #expect(throws: DomainError.self) { try failed.get() }
        #expect(remote.announced == 1)
    }

    @Test func aChangeMadeElsewhereIsPutInForceOnceAndTheOthersAreLeftAlone() async throws {
        let (h, _, heard) = try await Self.harness()
        Self.storedElsewhere(h, ["limit": "20"])
        h.hub.settings.reread { _ in }
        try await h.scheduler.run()
        #expect(heard.log == ["limit 10", "flag true", "limit 20"])
        #expect(h.hub.settings.value("limit") == .integer(20))
        // Read again with nothing new: no feature hears anything.
        #expect(try await Self.resync(h).get() == 0)
        #expect(heard.log == ["limit 10", "flag true", "limit 20"])
        // Both changed elsewhere: each heard once.
        Self.storedElsewhere(h, ["limit": "21", "flag": "false"])
        #expect(try await Self.resync(h).get() == 2)
        #expect(heard.log.suffix(2) == ["limit 21", "flag false"])
    }

    @Test func aResetElsewhereOrAStoredValueThatNoLongerFitsBringsBackTheDefault() async throws {
        let (h, _, heard) = try await Self.harness()
        Self.storedElsewhere(h, ["limit": "20", "flag": "false"])
        #expect(try await Self.resync(h).get() == 2)
        // `limit` reset through another node: its override is gone from the store.
        Self.storedElsewhere(h, ["flag": "false"])
        #expect(try await Self.resync(h).get() == 1)
        #expect(h.hub.settings.value("limit") == .integer(10) && h.hub.settings.value("flag") == .boolean(false))
        // A value out of bounds (written by a node with other bounds): the default holds.
        Self.storedElsewhere(h, ["flag": "maybe"])
        #expect(try await Self.resync(h).get() == 1)
        #expect(heard.log == ["limit 10", "flag true", "limit 20", "flag false", "limit 10", "flag true"])
    }

    @Test func aLocalChangePutWhileTheStoreWasReadWins() async throws {
        let (h, admin, heard) = try await Self.harness()
        Self.storedElsewhere(h, ["limit": "20"])
        h.hub.settings.reread { _ in }
        // The read has seen `limit` 20; its answer is held back while an admin here sets 30 and it is put in force.
        let read = try await h.scheduler.hold()
        #expect(read.count == 1)
        _ = try await outcome(h) { h.hub.administration.changeSettings(admin, [("limit", .integer(30))], $0) }.get()
        #expect(h.hub.settings.value("limit") == .integer(30))
        for job in read { job() }
        // The late answer is not put in force: the store is read again, and holds 30.
        try await h.scheduler.run()
        #expect(h.hub.settings.value("limit") == .integer(30))
        #expect(heard.log == ["limit 10", "flag true", "limit 30"])
        #expect(h.store.state.withLock { $0.settings } == ["limit": "30"])
    }

    @Test func aReadAnsweredWhileALocalChangeIsBeingWrittenIsReadAgainAfterIt() async throws {
        let (h, admin, heard) = try await Self.harness()
        Self.storedElsewhere(h, ["limit": "20"])
        var counted: [Result<Int, DomainError>] = []
        h.hub.settings.reread { counted.append($0) }
        let read = try await h.scheduler.hold()  // it saw 20
        var answered: Result<AdminSettingsReading, DomainError>?
        h.hub.administration.changeSettings(admin, [("limit", .integer(30))]) { answered = $0 }
        let written = try await h.scheduler.hold()  // 30 committed, not yet in force
        for job in read { job() }
        #expect(counted.isEmpty && h.hub.settings.value("limit") == .integer(10))
        for job in written { job() }
        #expect(answered != nil && h.hub.settings.value("limit") == .integer(30))
        try await h.scheduler.run()  // read again once the change was in force: nothing new
        #expect(counted.count == 1 && (try? counted[0].get()) == 0)
        #expect(heard.log == ["limit 10", "flag true", "limit 30"])
    }

    @Test func readsAskedForDuringOneMakeOneMoreRead() async throws {
        let (h, _, heard) = try await Self.harness()
        Self.storedElsewhere(h, ["limit": "20"])
        var first: Result<Int, DomainError>?
        h.hub.settings.reread { first = $0 }
        let read = try await h.scheduler.hold()
        Self.storedElsewhere(h, ["limit": "40"])
        var later: [Result<Int, DomainError>] = []
        for _ in 0..<3 { h.hub.settings.reread { later.append($0) } }
        for job in read { job() }
        #expect((try? first?.get()) == 1 && later.isEmpty)
        try await h.scheduler.run()
        // One more read answered all three: it changed one setting (a read each would answer 1, 0, 0).
        #expect(later.count == 3 && later.allSatisfy { (try? $0.get()) == 1 })
        #expect(heard.log == ["limit 10", "flag true", "limit 20", "limit 40"])
        #expect(h.scheduler.pending == 0)
    }

    @Test func aFailedReadChangesNothing() async throws {
        let (h, _, heard) = try await Self.harness()
        Self.storedElsewhere(h, ["limit": "20"])
        h.store.state.withLock { $0.failReads = true }
        let failed = try await Self.resync(h)
        #expect(throws: DomainError.self) { try failed.get() }
        h.hub.settings.reread { _ in }
        try await h.scheduler.run()
        #expect(h.hub.settings.value("limit") == .integer(10))
        #expect(heard.log == ["limit 10", "flag true"])
        // Readable again: the next read puts it in force.
        h.store.state.withLock { $0.failReads = false }
        #expect(try await Self.resync(h).get() == 1)
        #expect(h.hub.settings.value("limit") == .integer(20))
    }
}
