// CairnKit against a real hub ($CAIRN_BIN) on loopback: sign-in, a friend's move as a typed event, a wrong password,
// the hub killed and restarted under the clients (they reconnect and their watches resume by themselves), a relic
// left with a picture and opened, and an item's tracker report arriving as an event.
import Foundation
import XCTest

@testable import CairnKit

final class IntegrationTests: XCTestCase {
    private var hub: HubProcess!
    private var clients: [CairnClient] = []
    private static let counter = Counter()

    override func setUp() async throws {
        hub = try HubProcess()
        try await hub.start()
    }

    override func tearDown() async throws {
        for client in clients { await client.close() }
        clients = []
        hub?.dispose()
    }

    private func client() -> CairnClient {
        let policy = ReconnectPolicy(initialDelay: .milliseconds(50), maximumDelay: .milliseconds(500))
        let client = CairnClient(url: hub.url, configuration: .init(reconnectPolicy: policy))
        clients.append(client)
        return client
    }

    private func username(_ prefix: String) -> String {
        "\(prefix)_\(ProcessInfo.processInfo.processIdentifier % 100_000)_\(Self.counter.next())"
    }

    /// Two signed-in clients who are friends.
    private func friends() async throws -> (CairnClient, Session, CairnClient, Session) {
        let alice = client()
        let bob = client()
        let a = try await alice.register(username: username("alice"), password: "alice password", name: "Alice")
        let b = try await bob.register(username: username("bob"), password: "bob password")
        let status = try await alice.requestFriend(b.user.id)
        XCTAssertEqual(status, .pending)
        let friend = try await bob.acceptFriend(a.user.id)
        XCTAssertEqual(friend.id, a.user.id)
        return (alice, a, bob, b)
    }

    func testRegisterThenSignInAgainWithPasswordAndToken() async throws {
        let name = username("carol")
        let first = client()
        let registered = try await first.register(username: name, password: "carol password", name: "Carol")
        XCTAssertEqual(registered.user.username, name)
        XCTAssertEqual(registered.user.name, "Carol")

        let second = client()
        let session = try await second.login(username: name, password: "carol password")
        XCTAssertEqual(session.user, registered.user)
        let me = try await second.whoami()
        XCTAssertEqual(me.id, registered.user.id)

        let third = CairnClient(url: hub.url, configuration: .init(token: session.token))
        clients.append(third)
        try await third.connect()
        let user = await third.user
        XCTAssertEqual(user, registered.user)
    }

    func testWrongPasswordThrowsInvalidCredentials() async throws {
        let name = username("dave")
        try await client().register(username: name, password: "dave password")
        do {
            try await client().login(username: name, password: "not the password")
            XCTFail("login should fail")
        } catch let error as CairnError {
            XCTAssertEqual(error.code, "invalid_credentials")
            XCTAssertEqual(error.message, "Login failed")
        }
    }

    func testSignOutEverywhereEndsTheOtherConnectionsSession() async throws {
        let name = username("fay")
        let phone = client()
        let session = try await phone.register(username: name, password: "fay password")
        let laptop = client()
        try await laptop.login(username: name, password: "fay password")
        let events = Inbox(laptop.events)
        try await phone.logout(all: true)
        let phoneToken = await phone.token
        XCTAssertNil(phoneToken, "logout forgets the token")

        let signedOut = try await events.next(where: { if case .signedOut = $0 { true } else { false } })
        guard case .signedOut(let error?) = signedOut else { return XCTFail("no reason") }
        XCTAssertEqual(error.closeCode, 4500)
        let laptopToken = await laptop.token
        XCTAssertNil(laptopToken)
        let state = await laptop.state
        XCTAssertEqual(state, .disconnected, "4500 is not retried")
        do {
            try await phone.authenticate(token: session.token)
            XCTFail("a revoked token must not sign in")
        } catch let error as CairnError {
            XCTAssertEqual(error.code, "unauthorized")
        }
    }

    func testFriendsMoveArrivesAsTypedEvent() async throws {
        let (alice, _, bob, b) = try await friends()
        let events = Inbox(alice.events)
        let positions = try await alice.watchFriends()
        XCTAssertTrue(positions.isEmpty)
        try await bob.report(latitude: 48.8566, longitude: 2.3522, accuracy: 10)
        let event = try await events.next(where: {
            if case .position(let p) = $0 { p.user == b.user.id } else { false }
        })
        guard case .position(let position) = event else { return XCTFail("no position") }
        XCTAssertEqual(position.latitude, 48.8566)
        XCTAssertEqual(position.longitude, 2.3522)
        XCTAssertEqual(position.accuracy, 10)
    }

    func testHubRestartedUnderTheClientsReconnectsAndWatchesResume() async throws {
        let (alice, _, bob, b) = try await friends()
        try await alice.watchFriends()
        let states = Inbox(alice.states)
        let bobStates = Inbox(bob.states)
        let events = Inbox(alice.events)
        let aliceState = try await states.next()
        XCTAssertEqual(aliceState, .connected)
        let bobState = try await bobStates.next()
        XCTAssertEqual(bobState, .connected)

        hub.kill()
        let lost = try await states.next(where: { $0 == .disconnected })
        XCTAssertEqual(lost, .disconnected)
        try await hub.start()
        let aliceBack = try await states.next(where: { $0 == .connected })
        XCTAssertEqual(aliceBack, .connected)
        let bobBack = try await bobStates.next(where: { $0 == .connected })
        XCTAssertEqual(bobBack, .connected)
        let renewed = try await events.next(where: { if case .friendPositions = $0 { true } else { false } })
        XCTAssertNotNil(renewed)
        let watching = await alice.isWatching("friends.watch")
        XCTAssertTrue(watching)

        try await bob.report(latitude: 51.5074, longitude: -0.1278, accuracy: 5)
        let event = try await events.next(where: {
            if case .position(let p) = $0 { p.user == b.user.id && p.latitude == 51.5074 } else { false }
        })
        XCTAssertNotNil(event)
    }

    func testFrozenHubIsNoticedByPingsAndTheClientComesBackWhenItThaws() async throws {
        let policy = ReconnectPolicy(initialDelay: .milliseconds(50), maximumDelay: .milliseconds(500))
        let configuration = CairnClient.Configuration(
            transport: WSClientTransport(pingInterval: .milliseconds(500)), connectTimeout: .seconds(2),
            reconnectPolicy: policy)
        let alice = CairnClient(url: hub.url, configuration: configuration)
        clients.append(alice)
        let session = try await alice.register(username: username("gus"), password: "gus password")
        try await alice.watchFriends()
        let states = Inbox(alice.states)
        let connected = try await states.next()
        XCTAssertEqual(connected, .connected)

        // The hub stops answering without closing anything, as when the network silently goes away.
        hub.freeze()
        defer { hub.thaw() }
        let lost = try await states.next(where: { $0 == .disconnected })
        XCTAssertEqual(lost, .disconnected, "an unanswered ping drops the connection")
        hub.thaw()
        let back = try await states.next(where: { $0 == .connected })
        XCTAssertEqual(back, .connected)
        let me = try await alice.whoami()
        XCTAssertEqual(me.id, session.user.id)
        let watching = await alice.isWatching("friends.watch")
        XCTAssertTrue(watching)
    }

    func testCancellingADownloadEndsItAtOnce() async throws {
        let configuration = CairnClient.Configuration(transferTimeout: .seconds(20))
        let alice = CairnClient(url: hub.url, configuration: configuration)
        clients.append(alice)
        hub.freeze()  // the hub takes the connection but never answers
        defer { hub.thaw() }
        let downloading = Task { try await alice.download("/healthz") }
        downloading.cancel()
        let outcome = await downloading.result
        XCTAssertThrowsError(try outcome.get()) { XCTAssertTrue($0 is CancellationError, "\($0)") }
    }

    func testRelicWithPictureLeftAndOpened() async throws {
        let (alice, a, bob, _) = try await friends()
        // Two reports at the same place confirm each other: relics trust a position only then.
        for who in [alice, bob] {
            try await who.report(latitude: 46.0, longitude: 7.7, accuracy: 5)
            try await who.report(latitude: 46.0, longitude: 7.7, accuracy: 5)
        }
        let picture = Data([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]) + Data("a tiny picture".utf8)
        let media = try await alice.upload(picture, contentType: "image/png")
        XCTAssertEqual(media.count, 64)
        let left = try await alice.createRelic(NewRelic(text: "look up", radius: 50, media: media))
        XCTAssertEqual(left.text, "look up")
        XCTAssertEqual(left.latitude, 46.0, accuracy: 0.0001)

        let nearby = try await bob.nearbyRelics()
        XCTAssertEqual(nearby.map(\.id), [left.id])
        XCTAssertNil(nearby.first?.text, "a marker carries no text")
        let opened = try await bob.openRelic(left.id)
        XCTAssertEqual(opened.text, "look up")
        XCTAssertEqual(opened.creatorUser?.id, a.user.id)
        let url = try XCTUnwrap(opened.mediaURL)
        let bytes = try await bob.download(url)
        XCTAssertEqual(bytes, picture)
    }

    func testItemTrackerReportArrivesAsEvent() async throws {
        let owner = client()
        try await owner.register(username: username("erin"), password: "erin password")
        let bucket = try await owner.createBucket(name: "Gear")
        let item = try await owner.createItem(in: bucket.id, name: "Bike")
        let device = "dev\(Self.counter.next())\(ProcessInfo.processInfo.processIdentifier)"
        let tracker = try await owner.pairTracker(item: item.id, device: device)
        let key = try XCTUnwrap(tracker.key)
        XCTAssertFalse(tracker.active)
        try await owner.activateTracker(tracker.id)
        let events = Inbox(owner.events)
        let items = try await owner.watchItems()
        XCTAssertEqual(items, [])

        var report = URLComponents(
            url: hub.httpURL.appendingPathComponent("v1/ingest/osmand"), resolvingAgainstBaseURL: false)!
        let now = Int(Date().timeIntervalSince1970)
        report.queryItems = [
            .init(name: "id", value: device), .init(name: "key", value: key), .init(name: "lat", value: "48.8"),
            .init(name: "lon", value: "2.3"), .init(name: "timestamp", value: String(now)),
            .init(name: "batt", value: "85"),
        ]
        let answer = try await http(report.url!)
        XCTAssertEqual(answer.status, 200)
        let event = try await events.next(where: { if case .itemPosition = $0 { true } else { false } })
        guard case .itemPosition(let position) = event else { return XCTFail("no item position") }
        XCTAssertEqual(position.item, item.id)
        XCTAssertEqual(position.latitude, 48.8)
        XCTAssertEqual(position.longitude, 2.3)
        XCTAssertEqual(position.battery, 85)
        XCTAssertEqual(position.timestamp, Int64(now) * 1000)
        let located = try await owner.locateItem(item.id)
        XCTAssertEqual(located.position?.latitude, 48.8)
    }
}

/// Unique numbers for names, across the tests of one run.
final class Counter: @unchecked Sendable {
    private let lock = NSLock()
    private var value = 0

    func next() -> Int {
        lock.locked {
            value += 1
            return value
        }
    }
}
