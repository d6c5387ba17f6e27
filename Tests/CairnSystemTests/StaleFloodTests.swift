// A stale-fix flood against a real server (issue 11, item 1): one client sends 64 KiB frames of fixes older than its
// latest for a few seconds while another measures the round trip of a cheap request. The bound is relative to the
// same run's idle baseline, with a generous absolute floor, so a slow machine does not make it flaky; before late
// fixes were bounded per user, each stale line shifted a 100,000-entry array on the loop and a round trip took
// seconds. Afterwards the position history holds at most the per-user bound per snapshot.
import CairnApp
import CairnCore
import CairnTestSupport
import Foundation
import Synchronization
import Testing

@testable import CairnStore

extension ServerIntegration {
    @Suite struct StaleFloodTests {
        static func roundTrip(_ client: WebSocketClient) throws -> Double {
            let started = ContinuousClock.now
            _ = try client.requestOK("whoami")
            let spent = started.duration(to: .now)
            return Double(spent.components.seconds) + Double(spent.components.attoseconds) / 1e18
        }

        static func median(_ values: [Double]) -> Double { values.sorted()[values.count / 2] }

        /// One frame of stale fixes just under 64 KiB, counting down from `ts`; returns the frame and its lines.
        static func staleFrame(from ts: inout Int64) -> (String, Int) {
            var frame = ""
            var lines = 0
            while true {
                let line = #"{"op":"pos","lat":48.85,"lon":2.35,"ts":\#(ts)}"# + "\n"
                if frame.utf8.count + line.utf8.count > 65_000 { return (frame, lines) }
                frame += line
                lines += 1
                ts -= 1
            }
        }

        @Test func aStaleFloodDoesNotHoldOthersUpAndTheHistoryStaysBounded() throws {
            let started = Date()
            // The per-connection message rate would close this client first (4429); it is off here so that the
            // late-fix path itself is measured, as several connections of one user within their rates would reach it.
            let hub = try RunningHub { $0.hub.messagesPerSecond = 0 }
            defer { hub.removeData() }
            let perUser = hub.app.configuration.hub.lateFixesPerUser
            let flooder = try hub.member("flooder")
            let other = try hub.member("other")
            _ = try flooder.0.requestOK("pos", ["lat": 48.85, "lon": 2.35])  // the latest: everything after is older

            var idle: [Double] = []
            for _ in 0..<30 { idle.append(try Self.roundTrip(other.0)) }
            let baseline = Self.median(idle)

            let stop = Atomic<Bool>(false)
            let sent = Atomic<Int>(0)
            let flooding = DispatchGroup()
            nonisolated(unsafe) let client = flooder.0
            DispatchQueue.global().async(group: flooding) {
                // One frame, sent again and again: every line stays older than the latest, and the client spends
                // its time sending rather than formatting.
                var ts = Int64(Date().timeIntervalSince1970 * 1000) - 60_000
                let (frame, lines) = Self.staleFrame(from: &ts)
                while !stop.load(ordering: .relaxed) {
                    guard (try? client.sendText(frame)) != nil else { return }
                    sent.add(lines, ordering: .relaxed)
                }
            }
            var during: [Double] = []
            let floodStart = Date()
            while Date().timeIntervalSince(floodStart) < 4 {
                during.append(try Self.roundTrip(other.0))
                Thread.sleep(forTimeInterval: 0.02)
            }
            stop.store(true, ordering: .relaxed)
            flooding.wait()
            let loaded = Self.median(during)
            let bound = max(10 * baseline, 0.25)
            #expect(sent.load(ordering: .relaxed) > 20_000, "the flood was too thin to show anything")
            #expect(
                loaded <= bound,
                "median round trip \(loaded) s under the flood, idle \(baseline) s, bound \(bound) s")

            try hub.stop()  // writes the last snapshot
            let interval = Int(hub.app.configuration.hub.snapshotIntervalMs)
            let snapshots = Int(Date().timeIntervalSince(started) * 1000) / interval + 2
            let rows = try SQLiteStore(directory: hub.dataDirectory).positionHistoryCount()
            #expect(
                rows >= 1 && rows <= perUser * snapshots,
                "\(rows) history rows for \(sent.load(ordering: .relaxed)) stale fixes and \(snapshots) snapshots")
        }
    }
}
