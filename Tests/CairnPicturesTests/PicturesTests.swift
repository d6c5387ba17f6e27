import CairnErrorCodes
import CairnHub
import CairnHubTestSupport
import CairnLoop
import CairnPictures
import CairnSessions
import CairnSocial
import Testing

// The pictures feature over the in-memory store: `picture.new` reaches only watchers who may see the picture
// (within their radius, or watching its event; a private event's only its members) and stops when they unwatch or
// their connection goes; settings replaced at run time take effect on the next request and invalid ones are
// refused; a refused post leaves nothing stored.
@testable import CairnCore
@testable import CairnLiveMap

@MainActor
@Suite(.timeLimit(.minutes(5)))
struct PicturesTests {
    static let media = String(repeating: "ab", count: 32)

    /// Three users at the same place (user 3 a kilometre north), each with an upload.
    func scene(configure: (inout HubConfiguration) -> Void = { _ in }) async throws -> (DomainHarness, [Caller]) {
        let h = DomainHarness(configure: configure)
        try await h.makeUsers(3)
        var callers: [Caller] = []
        for n in Int64(1)...3 {
            let caller = h.connect(ConnectionID(n), as: n)
            _ = try h.hub.liveMap.report(caller, PositionReport(lat: 48.85 + (n == 3 ? 0.009 : 0), lon: 2.35))
            h.pictures.upload(Self.media, owner: n)
            callers.append(caller)
        }
        return (h, callers)
    }

    func pushed(_ h: DomainHarness) -> [ConnectionID] {
        h.events.published.filter { $0.name == "picture.new" }.flatMap(\.connections)
    }

    @Test func newPicturesReachWatchersWhoMaySeeThem() async throws {
        let (h, c) = try await scene()
        let pictures = h.hub.pictures
        _ = try await outcome(h) { pictures.watch(c[1], radius: 500, event: nil, $0) }.get()
        _ = try await outcome(h) { pictures.watch(c[2], radius: 500, event: nil, $0) }.get()  // 1 km away
        _ = try await outcome(h) { pictures.post(c[0], media: Self.media, caption: "hi", event: nil, $0) }.get()
        #expect(pushed(h) == [ConnectionID(2)])
        // A private event: only members hear of its pictures, even within the radius.
        _ = try await outcome(h) { h.hub.pictureEvents.create(c[0], tag: "secret", title: nil, password: "pw", $0) }
            .get()
        let before = pushed(h).count
        _ = try await outcome(h) { pictures.post(c[0], media: Self.media, caption: nil, event: "secret", $0) }.get()
        #expect(pushed(h).count == before)
        let watchEvent = try await outcome(h) { pictures.watch(c[1], radius: nil, event: "secret", $0) }
        #expect((try? watchEvent.get()) == nil)
        if case .failure(let error) = watchEvent { #expect(error.code == .forbidden) }
        _ = try await outcome(h) { h.hub.pictureEvents.join(c[1], tag: "secret", password: "pw", $0) }.get()
        _ = try await outcome(h) { pictures.post(c[0], media: Self.media, caption: nil, event: "secret", $0) }.get()
        #expect(pushed(h).suffix(1) == [ConnectionID(2)])
        // Unwatching and a closed connection stop the pushes.
        pictures.unwatch(c[1])
        _ = try await outcome(h) { pictures.watch(c[2], radius: 5_000, event: nil, $0) }.get()
        h.hub.sessions.close(ConnectionID(3))
        let count = pushed(h).count
        _ = try await outcome(h) { pictures.post(c[0], media: Self.media, caption: nil, event: nil, $0) }.get()
        #expect(pushed(h).count == count)
        #expect(pictures.watcherCount == 0)
    }

    @Test func aPictureIsPlacedOnlyWhenAskedAndNeverWhilePaused() async throws {
        let (h, c) = try await scene()
        let pictures = h.hub.pictures
        // An event post carries no place unless its poster asks for one.
        let plain = try await outcome(h) { pictures.post(c[0], media: Self.media, caption: nil, event: "fair", $0) }
            .get()
        #expect(plain.record.point == nil)
        let placed = try await outcome(h) {
            pictures.post(c[0], media: Self.media, caption: nil, event: "fair", place: true, $0)
        }.get()
        #expect(placed.record.point != nil)
        // Paused (ghost mode): a nearby post and a placed event post are refused as a relic is, and store nothing;
        // an event post without a place still goes, and carries none.
        _ = try await outcome(h) { h.hub.social.pause(c[0], forSeconds: nil, $0) }.get()
        let stored = h.pictures.count
        for event in [nil, "fair"] {
            let refused = try await outcome(h) {
                pictures.post(c[0], media: Self.media, caption: nil, event: event, place: event != nil, $0)
            }
            if case .failure(let error) = refused {
                #expect(error.code == .forbidden)
                #expect(error.message.contains("share.pause"))
            } else {
                Issue.record("a paused user's post was placed")
            }
        }
        #expect(h.pictures.count == stored)
        let ghost = try await outcome(h) { pictures.post(c[0], media: Self.media, caption: nil, event: "fair", $0) }
            .get()
        #expect(ghost.record.point == nil)
        let seen = try await outcome(h) { pictures.get(c[1], picture: ghost.record.id, $0) }.get()
        #expect(seen.record.point == nil)
        // Resumed, a nearby post is placed again.
        _ = try await outcome(h) { h.hub.social.resume(c[0], $0) }.get()
        let nearby = try await outcome(h) { pictures.post(c[0], media: Self.media, caption: nil, event: nil, $0) }
            .get()
        #expect(nearby.record.point != nil)
    }

    @Test func settingsChangeAtRunTime() async throws {
        let (h, c) = try await scene()
        let pictures = h.hub.pictures
        let guest = User(id: 99, username: "guest-9", name: "Guest", isGuest: true)
        h.pictures.add(guest)
        h.pictures.upload(Self.media, owner: 99)
        _ = try h.hub.liveMap.report(
            Caller(connection: ConnectionID(9), user: guest), PositionReport(lat: 48.85, lon: 2.35))
        let guestCaller = Caller(connection: ConnectionID(9), user: guest)
        let refused = try await outcome(h) {
            pictures.post(guestCaller, media: Self.media, caption: nil, event: nil, $0)
        }
        if case .failure(let error) = refused { #expect(error.code == .forbidden) } else { Issue.record("posted") }
        var settings = pictures.settings
        settings.guestsMayPost = true
        settings.reportThreshold = 1
        try pictures.apply(settings)
        let posted = try await outcome(h) {
            pictures.post(guestCaller, media: Self.media, caption: nil, event: nil, $0)
        }
        .get()
        // A threshold of one: a single member's report hides it from everyone.
        let hidden = try await outcome(h) {
            pictures.report(c[0], picture: posted.record.id, reason: "spam", text: nil, $0)
        }.get()
        #expect(hidden)
        let seen = try await outcome(h) { pictures.get(c[1], picture: posted.record.id, $0) }
        if case .failure(let error) = seen { #expect(error.code == .notFound) } else { Issue.record("still visible") }
        // Invalid settings are refused and the old ones stay.
        settings.maxNearbyRadius = 1
        #expect(throws: DomainError.self) { try pictures.apply(settings) }
        #expect(pictures.settings.maxNearbyRadius == 5_000)
        settings.maxNearbyRadius = 100
        try pictures.apply(settings)
        let wide = try await outcome(h) { pictures.nearby(c[0], radius: 200, sort: nil, cursor: nil, $0) }
        if case .failure(let error) = wide { #expect(error.code == .badRequest) } else { Issue.record("accepted") }
    }

    @Test func aRefusedPostStoresNothing() async throws {
        let (h, c) = try await scene { $0.pictureCaptionBytes = 10 }
        let pictures = h.hub.pictures
        let long = try await outcome(h) {
            pictures.post(c[0], media: Self.media, caption: "twelve bytes", event: nil, $0)
        }
        if case .failure(let error) = long { #expect(error.code == .tooLarge) } else { Issue.record("posted") }
        let other = try await outcome(h) {
            pictures.post(c[0], media: String(repeating: "cd", count: 32), caption: nil, event: nil, $0)
        }
        if case .failure(let error) = other { #expect(error.code == .notFound) } else { Issue.record("posted") }
        let badTag = try await outcome(h) { pictures.post(c[0], media: Self.media, caption: nil, event: "a b", $0) }
        if case .failure(let error) = badTag { #expect(error.code == .badRequest) } else { Issue.record("posted") }
        #expect(h.pictures.count == 0)
        _ = try await outcome(h) { pictures.post(c[0], media: Self.media, caption: "ten bytes!", event: nil, $0) }.get()
        #expect(h.pictures.count == 1)
    }
}
