// Pictures across nodes, through the `RemotePictures` seam: a post committed here is told to the port once, by id;
// a post committed through another node (written to the shared store, told to this node by id) is pushed to the
// watchers here by the rule a local post follows (within their radius, or watching its event; a private event's
// only to its members now), and a picture hidden by reports before the news arrived reaches nobody.
import CairnCore
import CairnGeo
import CairnHub
import CairnHubTestSupport
import CairnLoop
import Testing

@testable import CairnPictures

/// Records the posts told to other nodes.
final class RecordingRemotePictures: RemotePictures {
    var posted: [Int64] = []
    func picturePosted(_ id: Int64) { posted.append(id) }
}

@MainActor
@Suite(.timeLimit(.minutes(5)))
struct RemotePicturesTests {
    func pushed(_ h: DomainHarness) -> [ConnectionID] {
        h.events.published.filter { $0.name == "picture.new" }.flatMap(\.connections)
    }

    /// A post by user `by` written straight to the store, as another node would.
    func postedElsewhere(_ h: DomainHarness, by: Int64, event: String? = nil) async throws -> Int64 {
        try await h.pictures.postPicture(
            NewPicture(
                by: by, mediaID: PicturesTests.media, caption: nil, eventTag: event,
                point: GeoPoint(lat: 48.85, lon: 2.35), createdAt: h.clock.now(), postsPerHour: 100)
        ).record.id
    }

    @Test func aPostHereIsToldToTheOtherNodesOnce() async throws {
        let (h, c) = try await PicturesTests().scene()
        let remote = RecordingRemotePictures()
        h.hub.pictures.remote = remote
        let posted = try await outcome(h) {
            h.hub.pictures.post(c[0], media: PicturesTests.media, caption: "hi", event: nil, $0)
        }.get()
        #expect(remote.posted == [posted.record.id])
        let refused = try await outcome(h) {
            h.hub.pictures.post(c[0], media: String(repeating: "cd", count: 32), caption: nil, event: nil, $0)
        }
        #expect((try? refused.get()) == nil)
        #expect(remote.posted == [posted.record.id], "a refused post is told to nobody")
    }

    @Test func aPostMadeElsewhereReachesTheWatchersHereWhoMaySeeIt() async throws {
        let (h, c) = try await PicturesTests().scene()
        let pictures = h.hub.pictures
        h.hub.pictures.remote = RecordingRemotePictures()
        _ = try await outcome(h) { pictures.watch(c[1], radius: 500, event: nil, $0) }.get()
        _ = try await outcome(h) { pictures.watch(c[2], radius: 500, event: nil, $0) }.get()  // 1 km away

        let nearby = try await postedElsewhere(h, by: 1)
        h.hub.pictures.applyRemotePosted(nearby)
        try await h.scheduler.run()
        #expect(pushed(h) == [ConnectionID(2)])
        h.hub.pictures.applyRemotePosted(nearby)  // heard again (a PUBLISH sent twice): pushed once
        #expect(h.hub.operationsInFlight == 0)
        #expect(pushed(h) == [ConnectionID(2)])

        // A private event's picture: not to a non-member, even within the radius; to a member watching the event.
        _ = try await outcome(h) { h.hub.pictureEvents.create(c[0], tag: "secret", title: nil, password: "pw", $0) }
            .get()
        let secret = try await postedElsewhere(h, by: 1, event: "secret")
        h.hub.pictures.applyRemotePosted(secret)
        try await h.scheduler.run()
        #expect(pushed(h) == [ConnectionID(2)])
        _ = try await outcome(h) { h.hub.pictureEvents.join(c[2], tag: "secret", password: "pw", $0) }.get()
        _ = try await outcome(h) { pictures.watch(c[2], radius: nil, event: "secret", $0) }.get()
        let second = try await postedElsewhere(h, by: 1, event: "secret")
        h.hub.pictures.applyRemotePosted(second)
        try await h.scheduler.run()
        #expect(pushed(h) == [ConnectionID(2), ConnectionID(3)])

        // Hidden by reports before the news arrived: nobody.
        let reported = try await postedElsewhere(h, by: 1)
        _ = try await h.pictures.report(
            NewReport(
                picture: reported, reporter: h.users[2]!, reason: .spam, text: nil, at: h.clock.now(), threshold: 1))
        h.hub.pictures.applyRemotePosted(reported)
        try await h.scheduler.run()
        #expect(pushed(h) == [ConnectionID(2), ConnectionID(3)])
    }
}
