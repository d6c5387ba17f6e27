import CairnHubTestSupport
import CairnLoop
import CairnWire
import Foundation
import Testing

// Reading OwnTracks HTTP-mode messages, with bodies as the OwnTracks booklet documents them: a `location` with
// Basic credentials becomes one fix in the contract's units (vel km/h to m/s, tst seconds to ms, -1 left out); every
// other `_type` and an empty body carry nothing; malformed bodies are refused with a reason, missing credentials
// with 401. And the answer: the other items of the bucket as OwnTracks `card` + `location` messages.
@testable import CairnCore
@testable import CairnProtocol
@testable import CairnTrackers

@Suite(.timeLimit(.minutes(5)))
struct OwnTracksParsingTests {
    static let basic = "Basic " + Data("phone-1:s3cret".utf8).base64EncodedString()
    static let limits = OwnTracksRequest.limits(maxBodyBytes: OwnTracksEndpoint.maxBodyBytes)

    func parse(_ body: String, auth: String? = basic) throws(IngestProblem) -> OwnTracksMessage {
        try OwnTracksRequest.parse(authorization: auth, body: Array(body.utf8), limits: Self.limits)
    }

    /// The booklet's HTTP example (booklet/features/traccar).
    static let minimal = #"{"lon":2.29513,"lat":48.85833,"_type":"location","tst":1497476456, "tid":"JJ"}"#
    /// A location with the optional elements the booklet's JSON page lists (tech/json).
    static let full = """
        {"_type":"location","acc":75,"alt":13,"batt":85,"bs":1,"cog":270,"lat":48.85833,"lon":2.29513,"t":"u",\
        "tid":"JJ","tst":1497476456,"vac":10,"vel":54,"conn":"w","topic":"owntracks/jane/phone",\
        "inregions":["Home"],"created_at":1497476460,"SSID":"home","BSSID":"aa:bb:cc:dd:ee:ff"}
        """

    @Test func locationsAsTheBookletDocumentsThem() throws {
        let minimal = try parse(Self.minimal)
        #expect(minimal.device == "phone-1" && minimal.key == "s3cret")
        #expect(minimal.fix == IngestFix(lat: 48.85833, lon: 2.29513, ts: 1_497_476_456_000))
        let full = try #require(try parse(Self.full).fix)
        #expect(full.acc == 75 && full.alt == 13 && full.bat == 85 && full.hdg == 270)
        #expect(abs((full.spd ?? 0) - 15) < 1e-9)  // 54 km/h
        #expect(full.ts == 1_497_476_456_000)
        // Unknown values (-1) are left out; 360 degrees is 0.
        let unknown = try #require(
            try parse(#"{"_type":"location","lat":1,"lon":2,"tst":3,"acc":-1,"vel":-1,"cog":360,"batt":-1}"#).fix)
        #expect(unknown == IngestFix(lat: 1, lon: 2, hdg: 0, ts: 3000))
    }

    @Test func otherMessagesAndEmptyBodiesCarryNothing() throws {
        for body in [
            "", "  \n", #"{"_type":"transition","wtst":1,"lat":1,"lon":2,"tst":3,"acc":5,"event":"enter"}"#,
            #"{"_type":"waypoint","desc":"Home","lat":1,"lon":2,"rad":50,"tst":3}"#, #"{"_type":"lwt","tst":3}"#,
            #"{"_type":"card","name":"Jane","face":"iVBORw0KGgo="}"#, #"{"_type":"status","android":{}}"#,
            #"{"_type":"encrypted","data":"abc"}"#,
        ] {
            let message = try parse(body)
            #expect(message.fix == nil, "\(body)")
            #expect(message.device == "phone-1")
        }
    }

    @Test func malformedBodiesAndMissingCredentialsAreRefused() {
        for bad in [
            "{", "[]", "null", #"{"lat":1,"lon":2,"tst":3}"#, #"{"_type":5}"#, #"{"_type":"location","lat":1,"tst":3}"#,
            #"{"_type":"location","lat":"1","lon":2,"tst":3}"#, #"{"_type":"location","lat":1,"lon":2}"#,
            #"{"_type":"location","lat":1,"lon":2,"tst":-5}"#, #"{"_type":"location","lat":1,"lon":2,"tst":1e300}"#,
        ] {
            do {
                _ = try parse(bad)
                Issue.record("accepted: \(bad)")
            } catch {
                guard case .malformed(let reason) = error else {
                    Issue.record("not malformed: \(bad)")
                    continue
                }
                #expect(!reason.isEmpty)
            }
        }
        for auth in [nil, "Bearer k", "Basic " + Data(":k".utf8).base64EncodedString(), "Basic !!"] {
            #expect(throws: IngestProblem.badCredentials) { try parse(Self.minimal, auth: auth) }
        }
    }

    @Test func theAnswerIsTheBucketsOtherItemsAsCardsAndLocations() throws {
        #expect(OwnTracksFriends.encode([]) == Array("[]".utf8))
        let keys = BucketMate(
            item: 71, name: "Keys \"home\"",
            fix: Fix(lat: 48.85, lon: 2.29, acc: 4.6, spd: 10, hdg: 90.4, bat: 55, ts: 1_497_476_456_789))
        let bike = BucketMate(item: 2, name: "Bike", fix: Fix(lat: -1.5, lon: 3, ts: 5000))
        let json = OwnTracksFriends.encode([bike, keys])
        let array = try #require(try JSONSerialization.jsonObject(with: Data(json)) as? [[String: Any]])
        #expect(array.count == 4)
        #expect(array.map { $0["_type"] as? String } == ["card", "location", "card", "location"])
        #expect(array[0]["name"] as? String == "Bike" && array[0]["tid"] as? String == "2")
        #expect(array[2]["name"] as? String == "Keys \"home\"" && array[2]["tid"] as? String == "1Z")
        for (card, location) in [(array[0], array[1]), (array[2], array[3])] {
            #expect(card["tid"] as? String == location["tid"] as? String)
            #expect(card["topic"] as? String == location["topic"] as? String)
        }
        #expect(array[3]["topic"] as? String == "owntracks/cairn/item71")
        #expect(array[3]["lat"] as? Double == 48.85 && array[3]["lon"] as? Double == 2.29)
        #expect(array[3]["tst"] as? Int == 1_497_476_456)
        #expect(array[3]["acc"] as? Int == 5 && array[3]["vel"] as? Int == 36 && array[3]["cog"] as? Int == 90)
        #expect(array[3]["batt"] as? Int == 55)
        #expect(array[1]["acc"] == nil && array[1]["vel"] == nil)
    }
}
