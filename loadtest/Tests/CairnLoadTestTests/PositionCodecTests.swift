// What the tester writes is a valid `pos` request, and what it reads is classified by key.
import CairnLoadTest
import Foundation
import Testing

@Suite(.timeLimit(.minutes(5)))
struct PositionCodecTests {
    @Test(arguments: [
        (48.8566, 2.3522, Int64(1_763_740_000_123)), (-33.8688197, -151.2092955, Int64(1)),
        (0.00000004, -0.5, Int64(42)),
    ])
    func reportsAreValidJSONWithSevenDecimals(lat: Double, lon: Double, ts: Int64) throws {
        let buffer = UnsafeMutablePointer<UInt8>.allocate(capacity: 128)
        defer { buffer.deallocate() }
        let n = PositionWriter.write(lat: lat, lon: lon, ts: ts, to: buffer)
        let object = try #require(
            try JSONSerialization.jsonObject(with: Data(bytes: buffer, count: n)) as? [String: Any])
        #expect(object["op"] as? String == "pos")
        #expect(abs((object["lat"] as? Double ?? .nan) - lat) <= 0.5e-7)
        #expect(abs((object["lon"] as? Double ?? .nan) - lon) <= 0.5e-7)
        #expect((object["ts"] as? NSNumber)?.int64Value == ts)
        #expect(object["user"] == nil)
    }

    @Test func aReportForAPubSubPeerNamesItsSender() throws {
        let buffer = UnsafeMutablePointer<UInt8>.allocate(capacity: 128)
        defer { buffer.deallocate() }
        let n = PositionWriter.write(
            lat: -90, lon: -180, ts: Int64.max, owner: -999_999_999_999_999_999, to: buffer)
        #expect(n <= 128)
        let object = try #require(
            try JSONSerialization.jsonObject(with: Data(bytes: buffer, count: n)) as? [String: Any])
        #expect((object["user"] as? NSNumber)?.int64Value == -999_999_999_999_999_999)
        #expect((object["ts"] as? NSNumber)?.int64Value == Int64.max)
        let read = UnsafeRawBufferPointer(start: buffer, count: n)
        #expect(ServerLineScanner.integer(after: "\"user\":", in: read) == -999_999_999_999_999_999)
    }

    static func classify(_ text: String) -> ServerLine {
        Array(text.utf8).withUnsafeBytes { ServerLineScanner.classify($0) }
    }

    @Test func serverLinesAreClassifiedByKey() {
        #expect(
            Self.classify(#"{"ev":"pos","user":17,"lat":1.5,"lon":2.5,"ts":1763740000123}"#)
                == .position(user: 17, ts: 1_763_740_000_123))
        #expect(Self.classify(#"{"ts":5,"lat":1,"user":3,"ev":"pos"}"#) == .position(user: 3, ts: 5))
        #expect(
            Self.classify(#"{"id":1,"ok":true,"positions":[{"user":2,"lat":1,"lon":1,"ts":9}]}"#)
                == .reply(id: 1, ok: true))
        #expect(
            Self.classify(#"{"id":1,"ok":false,"error":{"code":"unauthorized","message":"x"}}"#)
                == .reply(id: 1, ok: false))
        #expect(Self.classify(#"{"ev":"error","op":"pos","error":{"code":"bad_request","message":"x"}}"#) == .error)
        #expect(Self.classify(#"{"ev":"presence","user":4,"online":true}"#) == .other)
    }

    @Test func messagesAreSplitIntoLines() {
        var lines: [String] = []
        Array("{\"a\":1}\n\n{\"b\":2}\n".utf8).withUnsafeBytes { message in
            ServerLineScanner.forEachLine(message) { lines.append(String(decoding: $0, as: UTF8.self)) }
        }
        #expect(lines == ["{\"a\":1}", "{\"b\":2}"])
    }

    @Test func aDeliveryIsMatchedToItsSendWhileItIsRemembered() {
        var log = SendLog(users: 2, depth: 4)
        for k in 1...6 { log.record(user: 1, ts: Int64(k), instant: UInt64(k * 100)) }
        #expect(log.instant(user: 1, ts: 6) == 600)
        #expect(log.instant(user: 1, ts: 3) == 300)
        #expect(log.instant(user: 1, ts: 2) == nil)  // pushed out of the ring of 4
        #expect(log.instant(user: 0, ts: 6) == nil)
    }
}
