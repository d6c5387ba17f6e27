// The transport's write path over a real socket: what one loop turn queues for a connection goes out as one frame,
// written at the end of the turn; a client that reads slowly makes lws keep part of a frame, and then the next frame
// waits for the writable callback. These tests check what a client sees of that: every frame parses (no frame is
// written into the middle of another), replies keep their order, positions of one friend never go backwards, and
// the gathering of one turn's replies into one frame.
import CairnApp
import CairnCore
import CairnServer
import CairnTestSupport
import Foundation
import Testing

extension ServerIntegration {
    @Suite struct WritePathTests {
        @Test func repliesOfOneFrameOfRequestsComeInOneFrame() throws {
            let hub = try RunningHub { $0.hub.messagesPerSecond = 0 }
            defer { hub.removeData() }
            let c = try hub.member("gatherer").0
            let count = 50
            let batch: [[String: Any]] = (1...count).map { ["id": 1000 + $0, "op": "whoami"] }
            try c.sendLines(batch)
            // One turn handles the whole frame; its replies are gathered into one frame, in request order.
            guard case .text(let text) = try c.receive(timeout: 10) else {
                Issue.record("expected a text frame")
                return
            }
            let lines = text.split(separator: "\n").map(String.init)
            #expect(lines.count == count, "the \(count) replies came in frames of \(lines.count) and more")
            let ids = try lines.map { line -> Int in
                let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
                return try #require(object?["id"] as? Int)
            }
            #expect(ids == Array(1001...(1000 + count)))
        }

        @Test func burstToSlowReaderKeepsFramesWholeAndInOrder() throws {
            // About 5 MiB for one client that does not read: more than the kernel buffers hold on loopback (the
            // send buffer grows to a few MiB), so lws keeps the unsent part of a frame while later replies queue
            // behind it. The outbound cap is raised so the burst is held rather than refused (the cap is the next
            // test's).
            let hub = try RunningHub {
                $0.hub.messagesPerSecond = 0
                $0.server.maxOutboundBytes = 64 << 20
            }
            defer { hub.removeData() }
            let alice = try hub.member("alice")
            let slow = try hub.member("slow", receiveBufferSize: 2048)
            try hub.befriend(alice, slow)
            _ = try slow.0.requestOK("friends.watch")

            // The slow client asks for many replies without reading them, while alice moves: replies and position
            // events are written to one connection in many frames, turn after turn.
            let requests = 60_000
            let positions = 2_000
            var nextID = 1
            var nextPosition = 1
            while nextID <= requests {
                var batch: [[String: Any]] = []
                for _ in 0..<200 where nextID <= requests {
                    batch.append(["id": 100_000 + nextID, "op": "whoami"])
                    nextID += 1
                }
                try slow.0.sendLines(batch)
                var moves: [[String: Any]] = []
                for _ in 0..<20 where nextPosition <= positions {
                    moves.append(["op": "pos", "lat": 10 + Double(nextPosition) * 1e-6, "lon": 20])
                    nextPosition += 1
                }
                if !moves.isEmpty { try alice.0.sendLines(moves) }
            }
            _ = try alice.0.requestOK("whoami")  // every position has been handled

            // The server holds bytes for the client (lws could not send everything, so later frames wait for it).
            var held = 0
            let deadline = Date().addingTimeInterval(10)
            while held == 0 && Date() < deadline {
                held = try #require(try hub.health()["pending_bytes"] as? Int)
                if held == 0 { usleep(50_000) }
            }
            #expect(held > 0, "the burst never backed up, so the deferred path was not exercised")

            // Now read, slowly at first: every frame must parse (the client fails the connection on a malformed
            // frame, bad UTF-8 or a line that is not JSON), replies in request order, positions never going back.
            var expectedID = 100_001
            var lastLatitude = 0.0
            var objects = 0
            let last = 10 + Double(positions) * 1e-6
            while expectedID <= 100_000 + requests || lastLatitude != last {
                let object = try slow.0.nextObject(timeout: 20)
                objects += 1
                if objects < 2_000 && objects % 100 == 0 { usleep(2_000) }
                if let id = object["id"] as? Int {
                    #expect(id == expectedID, "reply \(id) arrived where \(expectedID) was due")
                    #expect(object["ok"] as? Bool == true)
                    if id != expectedID { return }
                    expectedID += 1
                } else if object["ev"] as? String == "pos" {
                    let latitude = try #require(object["lat"] as? Double)
                    #expect(latitude > lastLatitude, "position \(latitude) after \(lastLatitude)")
                    lastLatitude = latitude
                }
            }
            #expect(slow.0.isOpen)
            // Still usable afterwards: a request is answered.
            _ = try slow.0.requestOK("whoami")
        }

        @Test func clientThatStopsReadingIsClosedWhenItsQueueOverflows() throws {
            // The close waits for the client to read up to it. The client only reads once it has sent everything,
            // which on a loaded machine can take longer than the default close timeout; then the server would drop
            // the connection first, the client's next send failing with a reset and the close frame never seen.
            let hub = try RunningHub {
                $0.hub.messagesPerSecond = 0
                $0.server.maxOutboundBytes = 64 * 1024
                $0.server.closeTimeoutSeconds = 120
            }
            defer { hub.removeData() }
            let slow = try hub.member("stalled", receiveBufferSize: 2048).0
            // About 5 MiB of replies: more than the kernel buffers (a few MiB on loopback) and the cap hold together.
            for round in 0..<300 {
                let batch: [[String: Any]] = (0..<200).map { ["id": 10_000 + round * 200 + $0, "op": "whoami"] }
                try slow.sendLines(batch)
            }
            // Reading now drains what was sent before the cap was reached, then the close arrives.
            var closed = false
            var code: UInt16?
            let deadline = Date().addingTimeInterval(20)
            while !closed && Date() < deadline {
                do {
                    _ = try slow.nextObject(timeout: 10)
                } catch TestClientError.closed(let closeCode, _) {
                    closed = true
                    code = closeCode
                }
            }
            #expect(closed, "the connection was not closed")
            #expect(code == 4001, "closed with \(code.map { "\($0)" } ?? "no close frame"), not 4001 (too slow)")
        }
    }
}
