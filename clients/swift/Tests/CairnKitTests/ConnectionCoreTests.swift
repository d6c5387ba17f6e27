// The I/O-free core on its own: inputs in, effects out. Covers request/reply matching, the handshake's order (sign in
// with the token, re-watch, then "connected", the held position, the waiting requests), timeouts, the close-code
// policy and the latest-wins position.
import Foundation
import XCTest

@testable import CairnKit

final class ConnectionCoreTests: XCTestCase {
    typealias Effect = ConnectionCore.Effect

    private func makeCore(token: String? = nil) -> ConnectionCore {
        ConnectionCore(options: .init(), token: token, random: { 0 })
    }

    private func sentLines(_ effects: [Effect]) -> [JSONValue] {
        effects.compactMap {
            guard case .send(_, let line) = $0 else { return nil }
            return try? JSONDecoder().decode(JSONValue.self, from: Data(line.utf8))
        }
    }

    private func resolutions(_ effects: [Effect]) -> [ConnectionCore.Key: Result<Data?, CairnError>] {
        var found: [ConnectionCore.Key: Result<Data?, CairnError>] = [:]
        for case .resolve(let key, let result) in effects { found[key] = result }
        return found
    }

    private func reply(_ id: JSONValue?, _ fields: [String: JSONValue] = [:]) -> String {
        var object = fields
        object["id"] = id
        object["ok"] = true
        return FakeSocket.encode(.object(object))
    }

    func testRequestBeforeConnectFailsUnlessItSignsIn() {
        var core = makeCore()
        let (key, effects) = core.request("friend.list", fields: [:])
        guard case .failure(let error)? = resolutions(effects)[key] else { return XCTFail("not refused") }
        XCTAssertEqual(error.code, CairnError.disconnected)

        let (_, loginEffects) = core.request("login", fields: ["username": "a"])
        XCTAssertTrue(loginEffects.contains(.open(generation: 1)), "a sign-in opens the connection")
        XCTAssertTrue(loginEffects.contains(.state(.connecting)))
    }

    func testRepliesAreMatchedToTheirRequestsById() throws {
        var core = makeCore()
        _ = core.connect()
        _ = core.socketOpened(generation: 1, now: .now)
        let (first, a) = core.request("user.search", fields: ["q": "al"])
        let (second, b) = core.request("friend.list", fields: [:])
        let idA = try XCTUnwrap(sentLines(a).first)["id"]
        let idB = try XCTUnwrap(sentLines(b).first)["id"]
        XCTAssertNotEqual(idA, idB)
        let effects = core.received(generation: 1, text: reply(idB, ["friends": []]) + "\n" + reply(idA), now: .now)
        let resolved = resolutions(effects)
        guard case .success(let lineB?)? = resolved[second], case .success? = resolved[first] else {
            return XCTFail("both replies should resolve")
        }
        XCTAssertEqual(try JSONDecoder().decode(JSONValue.self, from: lineB)["friends"], [])
        XCTAssertTrue(effects.contains(.cancelTimer(.request(first))))
    }

    func testHandshakeSignsInThenRewatchesThenConnectsThenSendsHeldPositionAndWaitingRequests() throws {
        var core = makeCore(token: "tok")
        core.adopt(user: CairnUser(id: 1, username: "a", name: "A"), token: "tok")
        core.addWatch("friends.watch", fields: [:])
        let (connectKey, _) = core.connect()
        XCTAssertTrue(core.report(["lat": 1, "lon": 2]).isEmpty, "held while connecting")
        XCTAssertTrue(core.report(["lat": 3, "lon": 4]).isEmpty, "held while connecting")
        let (waitingKey, queued) = core.request("friend.list", fields: [:])
        XCTAssertTrue(sentLines(queued).isEmpty, "waits for the connection")

        let auth = try XCTUnwrap(sentLines(core.socketOpened(generation: 1, now: .now)).first)
        XCTAssertEqual(auth["op"], "auth")
        XCTAssertEqual(auth["token"], "tok")

        let userReply = ["user": JSONValue.object(["id": 1, "username": "a", "name": "A"])]
        let afterAuth = core.received(generation: 1, text: reply(auth["id"], userReply), now: .now)
        let watch = sentLines(afterAuth)
        XCTAssertEqual(watch.map { $0["op"] }, ["friends.watch"])
        XCTAssertEqual(core.state, .connecting, "not connected before the watches are back")

        let watchID = try XCTUnwrap(watch.first)["id"]
        let done = core.received(generation: 1, text: reply(watchID, ["positions": []]), now: .now)
        let lines = sentLines(done)
        XCTAssertEqual(lines.map { $0["op"] }, ["pos", "friend.list"])
        XCTAssertEqual(lines.first?["lat"], 3, "only the latest held position is sent")
        XCTAssertNil(lines.first?["id"], "a position is sent without an id")
        XCTAssertTrue(done.contains(.state(.connected)))
        XCTAssertTrue(done.contains { if case .watchRenewed("friends.watch", _) = $0 { true } else { false } })
        guard case .success? = resolutions(done)[connectKey] else { return XCTFail("connect() not resolved") }
        XCTAssertNil(resolutions(done)[waitingKey], "the waiting request is sent, not answered")
        XCTAssertEqual(core.state, .connected)
    }

    func testRefusedTokenSignsOutAndConnectFails() throws {
        var core = makeCore(token: "old")
        core.addWatch("friends.watch", fields: [:])
        let (key, _) = core.connect()
        let auth = try XCTUnwrap(sentLines(core.socketOpened(generation: 1, now: .now)).first)
        let refusal = FakeSocket.encode([
            "id": auth["id"] ?? nil, "ok": false, "error": ["code": "unauthorized", "message": "Invalid token"],
        ])
        let effects = core.received(generation: 1, text: refusal, now: .now)
        XCTAssertTrue(effects.contains { if case .signedOut = $0 { true } else { false } })
        XCTAssertNil(core.token)
        XCTAssertTrue(core.watchedOps.isEmpty)
        guard case .failure(let error)? = resolutions(effects)[key] else { return XCTFail("connect() should fail") }
        XCTAssertEqual(error.code, "unauthorized")
        XCTAssertEqual(core.state, .connected, "the connection stays open, signed out")
    }

    func testLostConnectionFailsInFlightRequestsAndSchedulesAReconnect() {
        var core = makeCore()
        _ = core.connect()
        _ = core.socketOpened(generation: 1, now: .now)
        let (key, _) = core.request("friend.list", fields: [:])
        let effects = core.socketClosed(generation: 1, code: 1006, reason: "", now: .now)
        guard case .failure(let error)? = resolutions(effects)[key] else { return XCTFail("not failed") }
        XCTAssertEqual(error.code, CairnError.disconnected)
        XCTAssertEqual(error.closeCode, 1006)
        XCTAssertTrue(effects.contains(.startTimer(.reconnect, .milliseconds(250))))
        XCTAssertTrue(
            effects.contains(.closed(CloseInfo(code: 1006, reason: "", willReconnect: true, delay: .milliseconds(250))))
        )
        XCTAssertEqual(core.state, .disconnected)
        let reopen = core.timerFired(.reconnect, now: .now)
        XCTAssertTrue(reopen.contains(.open(generation: 2)))
        XCTAssertTrue(core.socketClosed(generation: 1, code: 1006, reason: "", now: .now).isEmpty, "old socket")
    }

    func testBackOffGrowsPerFailedAttemptAndRestartsAfterAStableConnection() {
        var core = makeCore()
        _ = core.connect()
        let start = ContinuousClock.now
        var delays: [Duration] = []
        for generation in 1...3 {
            for case .startTimer(.reconnect, let delay) in core.socketClosed(
                generation: generation, code: 1006, reason: "", now: start)
            {
                delays.append(delay)
            }
            _ = core.timerFired(.reconnect, now: start)
        }
        XCTAssertEqual(delays, [.milliseconds(250), .milliseconds(500), .seconds(1)])
        _ = core.socketOpened(generation: 4, now: start)
        let later = start + .seconds(11)
        let effects = core.socketClosed(generation: 4, code: 1006, reason: "", now: later)
        XCTAssertTrue(effects.contains(.startTimer(.reconnect, .milliseconds(250))), "stable: back to the first delay")
    }

    func testTerminalCloseEndsTheSessionAndFailsWaitingRequests() {
        var core = makeCore(token: "tok")
        core.adopt(user: CairnUser(id: 1, username: "a", name: "A"), token: "tok")
        core.addWatch("friends.watch", fields: [:])
        _ = core.connect()
        let (key, _) = core.request("friend.list", fields: [:])
        let effects = core.socketClosed(generation: 1, code: 4500, reason: "token revoked", now: .now)
        XCTAssertFalse(effects.contains { if case .startTimer(.reconnect, _) = $0 { true } else { false } })
        XCTAssertTrue(effects.contains { if case .signedOut = $0 { true } else { false } })
        guard case .failure(let error)? = resolutions(effects)[key] else { return XCTFail("not failed") }
        XCTAssertEqual(error.closeCode, 4500)
        XCTAssertNil(core.token)
        XCTAssertNil(core.user)
        XCTAssertTrue(core.watchedOps.isEmpty)
    }

    func testRateLimitCloseReconnectsAfterThePause() {
        var core = makeCore()
        _ = core.connect()
        let effects = core.socketClosed(generation: 1, code: 4429, reason: "too many requests", now: .now)
        XCTAssertTrue(effects.contains(.startTimer(.reconnect, .seconds(30))))
    }

    func testRequestTimesOutWhetherWaitingOrInFlight() throws {
        var core = makeCore()
        _ = core.connect()
        let (waiting, _) = core.request("friend.list", fields: [:])
        guard case .failure(let error)? = resolutions(core.timerFired(.request(waiting), now: .now))[waiting] else {
            return XCTFail("no timeout")
        }
        XCTAssertEqual(error.code, CairnError.timeout)
        _ = core.socketOpened(generation: 1, now: .now)
        let (inFlight, sent) = core.request("friend.list", fields: [:])
        XCTAssertEqual(sentLines(sent).count, 1)
        guard case .failure(let late)? = resolutions(core.timerFired(.request(inFlight), now: .now))[inFlight] else {
            return XCTFail("no timeout")
        }
        XCTAssertEqual(late.code, CairnError.timeout)
        let id = try XCTUnwrap(sentLines(sent).first)["id"]
        XCTAssertTrue(resolutions(core.received(generation: 1, text: reply(id), now: .now)).isEmpty, "late reply")
    }

    func testOversizedRequestIsRefusedBeforeSending() {
        var core = makeCore()
        _ = core.connect()
        _ = core.socketOpened(generation: 1, now: .now)
        let (key, effects) = core.request("chat.send", fields: ["text": .string(String(repeating: "x", count: 70_000))])
        XCTAssertTrue(sentLines(effects).isEmpty)
        guard case .failure(let error)? = resolutions(effects)[key] else { return XCTFail("not refused") }
        XCTAssertEqual(error.code, CairnError.tooLarge)
    }

    func testOpeningHandshakeTimeoutAbandonsTheSocketAndRetries() {
        var core = makeCore()
        _ = core.connect()
        let effects = core.timerFired(.open, now: .now)
        XCTAssertTrue(effects.contains(.closeSocket(generation: 1, code: 4000)))
        XCTAssertTrue(effects.contains { if case .startTimer(.reconnect, _) = $0 { true } else { false } })
    }

    func testEventsArePassedOnAndCloseIsForGood() {
        var core = makeCore()
        _ = core.connect()
        _ = core.socketOpened(generation: 1, now: .now)
        let effects = core.received(generation: 1, text: #"{"ev":"presence","user":2,"online":true}"#, now: .now)
        XCTAssertTrue(effects.contains { if case .event("presence", _) = $0 { true } else { false } })
        let (key, _) = core.request("friend.list", fields: [:])
        let closing = core.close()
        XCTAssertTrue(closing.contains(.closeSocket(generation: 1, code: 1000)))
        XCTAssertTrue(closing.contains(.finished))
        guard case .failure(let error)? = resolutions(closing)[key] else { return XCTFail("not failed") }
        XCTAssertEqual(error.code, CairnError.closed)
        let (after, refused) = core.request("login", fields: [:])
        guard case .failure(let closed)? = resolutions(refused)[after] else { return XCTFail("not refused") }
        XCTAssertEqual(closed.code, CairnError.closed)
    }
}
