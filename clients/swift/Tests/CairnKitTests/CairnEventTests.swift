// Every push event of docs/PROTOCOL.md, written as the hub writes it (Sources/CairnProtocol/Encoding), decodes to its
// own typed case: a field the client names differently from the hub would turn the event into `.unknown`.
import Foundation
import XCTest

@testable import CairnKit

final class CairnEventTests: XCTestCase {
    private func event(_ line: String) -> CairnEvent {
        let data = Data(line.utf8)
        let name = (try? JSONDecoder().decode(JSONValue.self, from: data))?["ev"]?.stringValue ?? ""
        return CairnEvent(name: name, line: data)
    }

    private let bob = CairnUser(id: 2, username: "bob", name: "Bob")
    private let bobJSON = #"{"id":2,"username":"bob","name":"Bob"}"#

    func testPeopleEventsDecode() {
        XCTAssertEqual(
            event(#"{"ev":"pos","user":2,"lat":48.85,"lon":2.35,"stale":true,"approx":true,"ts":1700000000000}"#),
            .position(
                FriendPosition(
                    user: 2, latitude: 48.85, longitude: 2.35, timestamp: 1_700_000_000_000, stale: true,
                    approximate: true)))
        XCTAssertEqual(event(#"{"ev":"pos.hidden","user":2}"#), .positionHidden(user: 2))
        XCTAssertEqual(event(#"{"ev":"presence","user":2,"online":false}"#), .presence(user: 2, online: false))
        XCTAssertEqual(event(#"{"ev":"friend.request","user":\#(bobJSON)}"#), .friendRequest(bob))
        XCTAssertEqual(event(#"{"ev":"friend.accepted","user":\#(bobJSON)}"#), .friendAccepted(bob))
        XCTAssertEqual(event(#"{"ev":"friend.removed","user":\#(bobJSON)}"#), .friendRemoved(bob))
        XCTAssertEqual(
            event(#"{"ev":"chat.msg","message":{"id":7,"from":2,"to":1,"text":"hi","ts":1700000000000}}"#),
            .chatMessage(ChatMessage(id: 7, from: 2, to: 1, text: "hi", timestamp: 1_700_000_000_000)))
        XCTAssertEqual(
            event(#"{"ev":"chat.read","with":2,"upto":7,"unread":0}"#), .chatRead(with: 2, upto: 7, unread: 0))
        let failure = #"{"code":"bad_request","message":"field 'lat' must be a number"}"#
        XCTAssertEqual(
            event(#"{"ev":"error","op":"pos","error":\#(failure)}"#),
            .error(
                op: "pos",
                CairnError(
                    code: "bad_request", message: "field 'lat' must be a number", op: "pos",
                    details: ["code": "bad_request", "message": "field 'lat' must be a number"])))
    }

    func testPlaceAndThingEventsDecode() {
        let marker = #"{"id":5,"lat":46.0,"lon":7.7,"radius":50,"creator":1,"created":1700000000000,"locked":false}"#
        guard case .relicAppeared(let relic) = event(#"{"ev":"relic.appear","relic":\#(marker)}"#) else {
            return XCTFail("relic.appear")
        }
        XCTAssertEqual(relic.id, 5)
        XCTAssertEqual(relic.radius, 50)
        XCTAssertNil(relic.text)
        XCTAssertEqual(event(#"{"ev":"relic.vanish","id":5}"#), .relicVanished(id: 5, deleted: false))
        XCTAssertEqual(event(#"{"ev":"relic.expired","id":5}"#), .relicExpired(id: 5))
        XCTAssertEqual(event(#"{"ev":"bucket.changed","bucket":3}"#), .bucketChanged(3))
        XCTAssertEqual(event(#"{"ev":"bucket.removed","bucket":3}"#), .bucketRemoved(3))
        guard case .itemPosition(let item) = event(#"{"ev":"item.pos","item":12,"lat":48.8,"lon":2.3,"bat":70,"ts":9}"#)
        else { return XCTFail("item.pos") }
        XCTAssertEqual(item.item, 12)
        XCTAssertEqual(item.battery, 70)
        XCTAssertEqual(
            event(#"{"ev":"item.left_behind","item":12,"distance":212,"lat":48.8,"lon":2.3}"#),
            .itemLeftBehind(LeftBehind(item: 12, distance: 212, latitude: 48.8, longitude: 2.3)))
        XCTAssertEqual(event(#"{"ev":"item.reunited","item":12}"#), .itemReunited(12))
        let picture =
            #"{"id":4,"by":\#(bobJSON),"caption":"look","event":"party","private":true,"lat":1.5,"lon":2.5,"likes":3,"#
            + #""liked":false,"created":1700000000000,"url":"/v1/media/ab?exp=1&sig=x","#
            + #""download_url":"/v1/media/ab?exp=1&sig=x&download=1"}"#
        guard case .pictureNew(let posted) = event(#"{"ev":"picture.new","picture":\#(picture)}"#) else {
            return XCTFail("picture.new")
        }
        XCTAssertEqual(posted.by, bob)
        XCTAssertEqual(posted.isPrivate, true)
        XCTAssertEqual(posted.downloadURL, "/v1/media/ab?exp=1&sig=x&download=1")
        guard case .stats(let figures) = event(#"{"ev":"stats","ts":1,"uptime_s":3.5}"#) else {
            return XCTFail("stats")
        }
        XCTAssertEqual(figures["uptime_s"], 3.5)
    }
}
