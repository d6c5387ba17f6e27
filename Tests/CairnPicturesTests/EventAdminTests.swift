import CairnAdmin
import CairnErrorCodes
import CairnHub
import CairnHubTestSupport
import CairnLoop
import Synchronization
import Testing

// `admin.event.update` over the in-memory stores: an admin makes a public event private (its posters become
// members, its non-member watchers stop watching it, nearby watchers stop hearing of its pictures), changes the
// password (members stay members, joins need the new one), renames it and makes it public again; each change is
// audited without the password. Non-admins are forbidden whatever they send; admins' mistakes are `bad_request`
// naming the field, or `not_found`, and change nothing.
@testable import CairnCore
@testable import CairnLiveMap
@testable import CairnPictures

@MainActor
@Suite(.timeLimit(.minutes(5)))
struct EventAdminTests {
    static let media = String(repeating: "ab", count: 32)

    func code<T>(_ result: Result<T, DomainError>) -> DomainError.Code? {
        if case .failure(let error) = result { return error.code }
        return nil
    }

    func message<T>(_ result: Result<T, DomainError>) -> String {
        if case .failure(let error) = result { return error.message }
        return ""
    }

    /// Four users at one place, user 1 an admin; user 2 posted to the public event #party.
    func scene() async throws -> (DomainHarness, [Caller]) {
        let h = DomainHarness(admin: true)
        try await h.makeUsers(4)
        h.store.state.withLock { _ = $0.admins.insert(1) }
        var callers: [Caller] = []
        for n in Int64(1)...4 {
            let caller = h.connect(ConnectionID(n), as: n)
            _ = try h.hub.liveMap.report(caller, PositionReport(lat: 48.85, lon: 2.35))
            h.pictures.upload(Self.media, owner: n)
            callers.append(caller)
        }
        _ = try await outcome(h) {
            h.hub.pictures.post(callers[1], media: Self.media, caption: nil, event: "party", $0)
        }
        .get()
        return (h, callers)
    }

    func pushed(_ h: DomainHarness) -> [ConnectionID] {
        h.events.published.filter { $0.name == "picture.new" }.flatMap(\.connections)
    }

    func update(
        _ h: DomainHarness, _ caller: Caller, tag: String = "party", title: FieldChange<String> = .keep,
        password: FieldChange<String> = .keep, isPrivate: Bool? = nil
    ) async throws -> Result<EventInfo, DomainError> {
        let change = EventChange(title: title, password: password, isPrivate: isPrivate)
        return try await outcome(h) { h.hub.pictureEvents.update(caller, tag: tag, change, $0) }
    }

    @Test func anEventMadePrivateStopsReachingNonMembers() async throws {
        let (h, c) = try await scene()
        let pictures = h.hub.pictures
        _ = try await outcome(h) { pictures.watch(c[2], radius: 500, event: nil, $0) }.get()
        _ = try await outcome(h) { pictures.watch(c[3], radius: nil, event: "party", $0) }.get()
        _ = try await outcome(h) {
            pictures.post(c[1], media: Self.media, caption: nil, event: "party", place: true, $0)
        }.get()
        #expect(Set(pushed(h)) == [ConnectionID(3), ConnectionID(4)])

        let made = try await update(h, c[0], title: .set("  Party  "), password: .set("pw"))
        let info = try made.get()
        #expect(info.isPrivate && info.title == "Party" && !info.member)
        #expect(pictures.watcherCount == 1)  // user 4's watch of #party is gone; user 3's radius stays
        let before = pushed(h).count
        _ = try await outcome(h) {
            pictures.post(c[1], media: Self.media, caption: nil, event: "party", place: true, $0)
        }.get()
        #expect(pushed(h).count == before)  // the poster is a member; the nearby watcher is not
        let got = try await outcome(h) { h.hub.pictureEvents.get(c[2], tag: "party", $0) }.get()
        #expect(got.isPrivate && !got.member)
        let page = try await outcome(h) {
            pictures.eventPictures(c[2], tag: "party", sort: nil, cursor: nil, $0)
        }
        #expect(code(page) == .forbidden)
        let poster = try await outcome(h) { pictures.eventPictures(c[1], tag: "party", sort: nil, cursor: nil, $0) }
        #expect(try poster.get().pictures.count == 3)

        let audit = h.pictures.state.withLock { $0.audit }
        #expect(audit.map(\.action) == ["event.update"])
        #expect(audit.first?.targetName == "party" && audit.first?.admin.id == 1)
        #expect(audit.first?.detail == "title=Party private=true password=changed")
        let detail = audit.first?.detail ?? ""
        #expect(!detail.contains("pw"))
    }

    @Test func aNewPasswordKeepsMembersAndPublicAgainOpensIt() async throws {
        let (h, c) = try await scene()
        _ = try await update(h, c[0], password: .set("old")).get()
        _ = try await outcome(h) { h.hub.pictureEvents.join(c[2], tag: "party", password: "old", $0) }.get()
        _ = try await update(h, c[0], password: .set("new")).get()
        let member = try await outcome(h) { h.hub.pictureEvents.get(c[2], tag: "party", $0) }.get()
        #expect(member.member)  // joined before the change: still a member
        let stale = try await outcome(h) { h.hub.pictureEvents.join(c[3], tag: "party", password: "old", $0) }
        #expect(code(stale) == .wrongPassword)
        _ = try await outcome(h) { h.hub.pictureEvents.join(c[3], tag: "party", password: "new", $0) }.get()
        // `private: true` on a private event keeps its password.
        #expect(try await update(h, c[0], isPrivate: true).get().isPrivate)
        let opened = try await update(h, c[0], title: .clear, isPrivate: false).get()
        #expect(!opened.isPrivate && opened.member && opened.title == nil)
        let anyone = try await outcome(h) {
            h.hub.pictures.eventPictures(c[3], tag: "party", sort: nil, cursor: nil, $0)
        }
        #expect(try anyone.get().pictures.count == 1)
        #expect(h.pictures.state.withLock { $0.audit.last?.detail } == "title=none private=false")
    }

    @Test func refusalsNameTheFieldAndChangeNothing() async throws {
        let (h, c) = try await scene()
        let missing = try await update(h, c[0], tag: "nothere", title: .set("x"))
        #expect(code(missing) == .notFound)
        let needsPassword = try await update(h, c[0], isPrivate: true)
        #expect(code(needsPassword) == .badRequest && message(needsPassword).contains("'password'"))
        let both = try await update(h, c[0], password: .set("pw"), isPrivate: false)
        #expect(code(both) == .badRequest && message(both).contains("'private'"))
        let clash = try await update(h, c[0], password: .clear, isPrivate: true)
        #expect(code(clash) == .badRequest && message(clash).contains("'password'"))
        let long = try await update(h, c[0], title: .set(String(repeating: "t", count: 201)))
        #expect(code(long) == .badRequest && message(long).contains("'title'"))
        let empty = try await update(h, c[0], password: .set(""))
        #expect(code(empty) == .badRequest && message(empty).contains("'password'"))
        let nothing = try await update(h, c[0])
        #expect(code(nothing) == .badRequest)
        let badTag = try await update(h, c[0], tag: "no spaces", title: .set("x"))
        #expect(code(badTag) == .badRequest && message(badTag).contains("'tag'"))
        let event = try await outcome(h) { h.hub.pictureEvents.get(c[2], tag: "party", $0) }.get()
        #expect(!event.isPrivate && event.title == nil)
        #expect(h.pictures.state.withLock { $0.audit }.isEmpty)
    }

    @Test func nonAdminsAreForbiddenWhateverTheySend() async throws {
        let (h, c) = try await scene()
        let valid = try await update(h, c[1], password: .set("pw"))
        #expect(code(valid) == .forbidden)
        let invalid = try await update(h, c[1], isPrivate: true)
        #expect(code(invalid) == .forbidden)
        let unknown = try await update(h, c[1], tag: "nothere", title: .set("x"))
        #expect(code(unknown) == .forbidden)
        let event = try await outcome(h) { h.hub.pictureEvents.get(c[2], tag: "party", $0) }.get()
        #expect(!event.isPrivate)
    }
}
