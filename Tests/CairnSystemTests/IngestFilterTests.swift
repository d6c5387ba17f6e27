// The ingest's filters over real HTTP: a well-formed fix a filter drops is answered 200 like a stored one (the apps
// resend anything else forever) and leaves the stored position as it was, and /metrics counts it by reason beside
// the fixes stored and the reports refused.
import CairnApp
import CairnCore
import CairnTestSupport
import CairnTrackers
import Foundation
import Testing

extension ServerIntegration {
    @Suite struct IngestFilterTests {
        @Test func aDroppedFixIsAnswered200NotStoredAndCounted() async throws {
            let hub = try RunningHub()
            defer { hub.removeData() }
            let alice = try hub.member("alice")
            let bike = try hub.item(alice.0, bucket: try hub.bucket(alice.0, "Gear"), "Bike")
            let (id, key) = try hub.activeTracker(alice.0, item: bike, device: "123456")
            func send(_ query: String) throws -> Int {
                try HTTPClient.get(port: hub.port, path: "/v1/ingest/osmand?id=123456&key=\(key)&" + query).status
            }
            func stored() async throws -> Fix? { try await hub.app.store.trackerFix(tracker: Int64(id)) }
            let t = Int(Date().timeIntervalSince1970) - 600

            #expect(try send("lat=48.8566&lon=2.3522&timestamp=\(t)") == 200)
            #expect(try await stored()?.lat == 48.8566)
            // (0, 0), Tokyo a minute later, the same time again, an hour ahead: all answered 200, none stored.
            #expect(try send("lat=0&lon=0&timestamp=\(t + 30)") == 200)
            #expect(try send("lat=35.6762&lon=139.6503&timestamp=\(t + 60)") == 200)
            #expect(try send("lat=48.86&lon=2.36&timestamp=\(t)") == 200)
            #expect(try send("lat=48.86&lon=2.36&timestamp=\(t + 4200)") == 200)
            let kept = try #require(try await stored())
            #expect(kept.lat == 48.8566 && kept.ts == Int64(t) * 1000)
            // A malformed report is still a 400, and counted apart.
            #expect(try send("lat=91&lon=2&timestamp=\(t + 90)") == 400)
            #expect(try send("lat=48.857&lon=2.3522&timestamp=\(t + 120)") == 200)
            #expect(try await stored()?.lat == 48.857)

            let response = try HTTPClient.get(port: hub.port, path: "/metrics")
            #expect(response.status == 200)
            let metrics = try PrometheusText(response.text)
            #expect(metrics.types["cairn_ingest_filtered_total"] == "counter")
            for (reason, count) in [("zero", 1.0), ("speed", 1), ("duplicate", 1), ("future", 1), ("accuracy", 0)] {
                #expect(metrics.value("cairn_ingest_filtered_total", ["reason": reason]) == count, "\(reason)")
            }
            #expect(metrics.value("cairn_ingest_fixes_total", ["result": "stored"]) == 2)
            #expect(metrics.value("cairn_ingest_refused_total", ["reason": "malformed"]) == 1)
            #expect(metrics.value("cairn_ingest_speed_reanchors_total", ["cause": "count"]) == 0)
        }

        @Test func theFiltersThatAreOptionsDropWhenSetAndOsmAndValidFalseIsInvalid() async throws {
            let hub = try RunningHub {
                $0.hub.ingestFilters.maxAccuracy = 100
                $0.hub.ingestFilters.minPeriodMs = 60_000
            }
            defer { hub.removeData() }
            let alice = try hub.member("alice")
            let bike = try hub.item(alice.0, bucket: try hub.bucket(alice.0, "Gear"), "Bike")
            let (id, key) = try hub.activeTracker(alice.0, item: bike, device: "654321")
            func send(_ query: String) throws -> Int {
                try HTTPClient.get(port: hub.port, path: "/v1/ingest/osmand?id=654321&key=\(key)&" + query).status
            }
            func stored() async throws -> Fix? { try await hub.app.store.trackerFix(tracker: Int64(id)) }
            let t = Int(Date().timeIntervalSince1970) - 600

            #expect(try send("lat=48.8566&lon=2.3522&accuracy=10&timestamp=\(t)") == 200)
            // Vaguer than 100 m, 30 s after the last (under the 60 s period), marked invalid: 200, none stored.
            #expect(try send("lat=48.857&lon=2.3522&accuracy=500&timestamp=\(t + 90)") == 200)
            #expect(try send("lat=48.857&lon=2.3522&accuracy=10&timestamp=\(t + 30)") == 200)
            #expect(try send("lat=48.857&lon=2.3522&accuracy=10&valid=false&timestamp=\(t + 120)") == 200)
            #expect(try await stored()?.ts == Int64(t) * 1000)
            #expect(try send("lat=48.858&lon=2.3522&accuracy=10&valid=true&timestamp=\(t + 180)") == 200)
            #expect(try await stored()?.lat == 48.858)

            let metrics = try PrometheusText(try HTTPClient.get(port: hub.port, path: "/metrics").text)
            for (reason, count) in [("accuracy", 1.0), ("period", 1), ("invalid", 1), ("speed", 0)] {
                #expect(metrics.value("cairn_ingest_filtered_total", ["reason": reason]) == count, "\(reason)")
            }
            #expect(metrics.value("cairn_ingest_fixes_total", ["result": "stored"]) == 2)
        }
    }
}
