// The client as an app uses it, over the fake transport: typed requests and errors, typed events, states, the
// reconnect that signs in again and re-watches by itself, and close().
import Foundation
import XCTest

@testable import CairnKit

final class CairnClientTests: XCTestCase {
    private let url = URL(string: "ws://127.0.0.1:1/ws")!

    private func makeClient(_ transport: FakeTransport, token: String? = nil) -> CairnClient {
        let policy = ReconnectPolicy(initialDelay: .milliseconds(1), maximumDelay: .milliseconds(2))
        let configuration = CairnClient.Configuration(
            token: token, transport: transport, reconnectPolicy: policy, random: { 0 })
        return CairnClient(url: url, configuration: configuration)
    }

    private let alice: JSONValue = ["id": 1, "username": "alice", "name": "Alice"]

    func testLoginOpensTheConnectionAndReturnsTheSession() async throws {
        let transport = FakeTransport()
        let client = makeClient(transport)
        async let session = client.login(username: "alice", password: "secret pw")
        let socket = try await transport.nextSocket()
        XCTAssertEqual(socket.subprotocol, "cairn.v1")
        socket.accept()
        let login = try await socket.nextSent()
        XCTAssertEqual(login["op"], "login")
        XCTAssertEqual(login["username"], "alice")
        socket.reply(to: login, ["user": alice, "token": "tok"])
        let result = try await session
        XCTAssertEqual(result, Session(user: CairnUser(id: 1, username: "alice", name: "Alice"), token: "tok"))
        let token = await client.token
        XCTAssertEqual(token, "tok")
    }

    func testHubErrorIsThrownAsCairnErrorWithTheWireCode() async throws {
        let transport = FakeTransport()
        let client = makeClient(transport)
        async let session = client.login(username: "alice", password: "wrong one")
        let socket = try await transport.nextSocket()
        socket.accept()
        socket.fail(try await socket.nextSent(), code: "invalid_credentials", message: "Login failed")
        do {
            _ = try await session
            XCTFail("login should fail")
        } catch let error as CairnError {
            XCTAssertEqual(error.code, "invalid_credentials")
            XCTAssertEqual(error.message, "Login failed")
            XCTAssertEqual(error.op, "login")
        }
    }

    func testPushedPositionArrivesAsATypedEvent() async throws {
        let transport = FakeTransport()
        let client = makeClient(transport)
        let events = Inbox(client.events)
        async let connected: Void = client.connect()
        let socket = try await transport.nextSocket()
        socket.accept()
        try await connected
        socket.deliver(#"{"ev":"pos","user":2,"lat":48.85,"lon":2.35,"acc":12,"ts":1700000000000,"flagged":true}"#)
        socket.deliver(#"{"ev":"relic.vanish","id":9,"reason":"deleted"}"# + "\n" + #"{"ev":"new.thing","x":1}"#)
        let expected = FriendPosition(
            user: 2, latitude: 48.85, longitude: 2.35, accuracy: 12, timestamp: 1_700_000_000_000, flagged: true)
        let position = try await events.next()
        XCTAssertEqual(position, .position(expected))
        let vanished = try await events.next()
        XCTAssertEqual(vanished, .relicVanished(id: 9, deleted: true))
        let unknown = try await events.next()
        XCTAssertEqual(unknown, .unknown(name: "new.thing", ["ev": "new.thing", "x": 1]))
    }

    func testReconnectSignsInAgainRewatchesAndReportsConnected() async throws {
        let transport = FakeTransport()
        let client = makeClient(transport)
        let states = Inbox(client.states)
        let events = Inbox(client.events)
        let initial = try await states.next()
        XCTAssertEqual(initial, .disconnected)

        async let session = client.login(username: "alice", password: "secret pw")
        let first = try await transport.nextSocket()
        first.accept()
        first.reply(to: try await first.nextSent(), ["user": alice, "token": "tok"])
        _ = try await session
        async let watched = client.watchFriends()
        let watch = try await first.nextSent()
        XCTAssertEqual(watch["op"], "friends.watch")
        first.reply(to: watch, ["positions": [["user": 2, "lat": 1.0, "lon": 2.0, "ts": 5]]])
        let watchedUsers = try await watched.map(\.user)
        XCTAssertEqual(watchedUsers, [2])
        let connected = try await states.next(where: { $0 == .connected })
        XCTAssertEqual(connected, .connected)

        try await client.report(latitude: 10, longitude: 20, accuracy: 5)
        let sentOp = try await first.nextSent()["op"]
        XCTAssertEqual(sentOp, "pos")
        first.drop(code: 1001, reason: "server shutting down")
        let afterDrop = try await states.next()
        XCTAssertEqual(afterDrop, .disconnected)
        try await client.report(latitude: 11, longitude: 21, accuracy: 5)
        try await client.report(latitude: 12, longitude: 22, accuracy: 5)

        let second = try await transport.nextSocket()
        let reconnecting = try await states.next()
        XCTAssertEqual(reconnecting, .connecting)
        second.accept()
        let auth = try await second.nextSent()
        XCTAssertEqual(auth["op"], "auth")
        XCTAssertEqual(auth["token"], "tok")
        second.reply(to: auth, ["user": alice])
        let rewatch = try await second.nextSent()
        XCTAssertEqual(rewatch["op"], "friends.watch")
        second.reply(to: rewatch, ["positions": [["user": 2, "lat": 3.0, "lon": 4.0, "ts": 6]]])
        let held = try await second.nextSent()
        XCTAssertEqual(held["op"], "pos")
        XCTAssertEqual(held["lat"], 12, "latest wins while offline")
        let reconnected = try await states.next()
        XCTAssertEqual(reconnected, .connected)
        let renewed = try await events.next(where: { if case .friendPositions = $0 { true } else { false } })
        XCTAssertEqual(renewed, .friendPositions([FriendPosition(user: 2, latitude: 3, longitude: 4, timestamp: 6)]))
    }

    func testTokenRevokedCloseSignsOutWithoutReconnecting() async throws {
        let transport = FakeTransport()
        let client = makeClient(transport, token: "tok")
        let events = Inbox(client.events)
        async let connected: Void = client.connect()
        let socket = try await transport.nextSocket()
        socket.accept()
        socket.reply(to: try await socket.nextSent(), ["user": alice])
        try await connected
        socket.drop(code: 4500, reason: "token revoked")
        let signedOut = try await events.next(where: { if case .signedOut = $0 { true } else { false } })
        guard case .signedOut(let error?) = signedOut else { return XCTFail("no error") }
        XCTAssertEqual(error.closeCode, 4500)
        let token = await client.token
        XCTAssertNil(token)
        let state = await client.state
        XCTAssertEqual(state, .disconnected)
        XCTAssertEqual(transport.count, 1, "no reconnect after 4500")
    }

    func testCloseFailsPendingRequestsAndEndsTheStreams() async throws {
        let transport = FakeTransport()
        let client = makeClient(transport)
        let events = client.events
        async let connected: Void = client.connect()
        let socket = try await transport.nextSocket()
        socket.accept()
        try await connected
        async let pending = client.friends()
        _ = try await socket.nextSent()
        await client.close()
        do {
            _ = try await pending
            XCTFail("should fail")
        } catch let error as CairnError {
            XCTAssertEqual(error.code, CairnError.closed)
        }
        XCTAssertEqual(socket.closeCodes, [1000])
        let ended = try await within { () async -> Bool? in
            for await _ in events {}
            return true
        }
        XCTAssertTrue(ended)
        do {
            try await client.report(latitude: 1, longitude: 2, accuracy: nil)
            XCTFail("should fail")
        } catch let error as CairnError {
            XCTAssertEqual(error.code, CairnError.closed)
        }
    }

    func testCancellingTheTaskEndsConnectAndARequestAtOnce() async throws {
        let transport = FakeTransport()
        let client = makeClient(transport)
        // A deadline: should a cancelled call go on waiting, closing the client ends it (with `closed`, which fails
        // the test) rather than hanging the suite.
        let deadline = Task {
            try await Task.sleep(for: .seconds(10))
            await client.close()
        }
        defer { deadline.cancel() }
        // A hub that never answers the handshake: connect() waits (and retries) until its task is cancelled.
        let connecting = Task { try await client.connect() }
        let socket = try await transport.nextSocket()
        connecting.cancel()
        let connectOutcome = await connecting.result
        XCTAssertThrowsError(try connectOutcome.get()) { XCTAssertTrue($0 is CancellationError, "\($0)") }

        socket.accept()
        let asking = Task { try await client.friends() }
        let sent = try await socket.nextSent()
        XCTAssertEqual(sent["op"], "friend.list")
        asking.cancel()
        let askOutcome = await asking.result
        XCTAssertThrowsError(try askOutcome.get()) { XCTAssertTrue($0 is CancellationError, "\($0)") }

        // The late reply is ignored, and the client goes on.
        socket.reply(to: sent, ["friends": []])
        async let searched = client.searchUsers("al")
        let search = try await socket.nextSent()
        XCTAssertEqual(search["op"], "user.search")
        socket.reply(to: search, ["users": [alice]])
        let users = try await searched
        XCTAssertEqual(users.map(\.id), [1])
    }

    func testCancelledWatchIsNotKept() async throws {
        let transport = FakeTransport()
        let client = makeClient(transport, token: "tok")
        async let connected: Void = client.connect()
        let first = try await transport.nextSocket()
        first.accept()
        first.reply(to: try await first.nextSent(), ["user": alice])
        try await connected
        let watching = Task { try await client.watchFriends() }
        let watch = try await first.nextSent()
        XCTAssertEqual(watch["op"], "friends.watch")
        watching.cancel()
        let outcome = await watching.result
        XCTAssertThrowsError(try outcome.get()) { XCTAssertTrue($0 is CancellationError, "\($0)") }
        let kept = await client.isWatching("friends.watch")
        XCTAssertFalse(kept, "a watch given up on is not sent again after reconnects")
    }

    func testLogoutForgetsTheSessionEvenWhenTheRequestFails() async throws {
        let transport = FakeTransport()
        let client = makeClient(transport, token: "tok")
        async let connected: Void = client.connect()
        let first = try await transport.nextSocket()
        first.accept()
        first.reply(to: try await first.nextSent(), ["user": alice])
        try await connected
        async let watched = client.watchFriends()
        first.reply(to: try await first.nextSent(), ["positions": []])
        _ = try await watched

        // The connection goes before the hub answers the logout.
        async let loggedOut: Void = client.logout()
        let logout = try await first.nextSent()
        XCTAssertEqual(logout["op"], "logout")
        first.drop(code: 1006)
        do {
            try await loggedOut
            XCTFail("the logout had no reply")
        } catch let error as CairnError {
            XCTAssertEqual(error.code, CairnError.disconnected)
        }
        let token = await client.token
        XCTAssertNil(token, "a user who signed out is not signed in again with the old token")
        let watching = await client.isWatching("friends.watch")
        XCTAssertFalse(watching)

        // The reconnect neither signs in nor watches: the first line on the new socket is the app's own request.
        let second = try await transport.nextSocket()
        second.accept()
        async let session = client.login(username: "bob", password: "bob password")
        let line = try await second.nextSent()
        XCTAssertEqual(line["op"], "login")
        second.reply(to: line, ["user": ["id": 2, "username": "bob", "name": "Bob"], "token": "tok2"])
        _ = try await session
    }

    func testNonFiniteNumbersAreRefusedBeforeSending() async throws {
        let transport = FakeTransport()
        let client = makeClient(transport)
        async let connected: Void = client.connect()
        let socket = try await transport.nextSocket()
        socket.accept()
        try await connected
        do {
            try await client.request("relic.nearby", ["radius": .double(.nan)])
            XCTFail("NaN cannot be sent")
        } catch let error as CairnError {
            XCTAssertEqual(error.code, "bad_request")
            XCTAssertEqual(error.op, "relic.nearby")
        }
        do {
            try await client.report(latitude: 1, longitude: 2, accuracy: .infinity)
            XCTFail("an infinite accuracy cannot be sent")
        } catch let error as CairnError {
            XCTAssertEqual(error.code, "bad_request")
            XCTAssertEqual(error.message, "field 'acc' must be a finite number")
        }
        // Nothing went out for either: the next line is the next request's.
        async let listed = client.friends()
        let next = try await socket.nextSent()
        XCTAssertEqual(next["op"], "friend.list")
        socket.reply(to: next, ["friends": []])
        _ = try await listed
    }

    func testPrintingASessionOrConfigurationLeavesTheTokenOut() {
        let token = "q0Gm0zJ2sEcReT"
        let session = Session(user: CairnUser(id: 1, username: "alice", name: "Alice"), token: token)
        let configuration = CairnClient.Configuration(token: token)
        var dumped = ""
        dump(session, to: &dumped)
        dump(configuration, to: &dumped)
        let printed = [
            "\(session)", String(reflecting: session), "\(configuration)", String(reflecting: configuration), dumped,
        ]
        for text in printed {
            XCTAssertFalse(text.contains(token), text)
        }
        XCTAssertTrue("\(session)".contains("alice"))
    }

    func testHTTPBaseIsDerivedFromTheWebSocketURL() {
        XCTAssertEqual(
            CairnClient.httpBase(of: URL(string: "ws://127.0.0.1:7681/ws")!).absoluteString, "http://127.0.0.1:7681")
        XCTAssertEqual(
            CairnClient.httpBase(of: URL(string: "wss://hub.example/x/ws?token=t")!).absoluteString,
            "https://hub.example/x")
    }
}
