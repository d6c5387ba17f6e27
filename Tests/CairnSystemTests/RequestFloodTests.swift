// A client that keeps sending requests after being told `rate_limited` is closed with 4429 over a real socket. The
// hub stops reading it, writes the close frame and ends its side of the stream, and closes the socket only after a
// grace: a client that goes on flooding finds its sends held back (not reset), and then reads the close frame with
// its code, not a dropped connection (1006). The hub keeps serving everyone else.
import CairnApp
import CairnCore
import CairnTestSupport
import Foundation
import Testing

extension ServerIntegration {
    @Suite struct RequestFloodTests {
        @Test func aFloodingClientIsNotReadAnyMoreAndReceivesTheCloseFrame4429() throws {
            let hub = try RunningHub {
                $0.hub.messagesPerSecond = 1
                $0.hub.messageBurst = 5
            }
            defer { hub.removeData() }
            // A fixed 8 KiB send buffer: the kernel would otherwise grow it to megabytes, and a client slowed by a
            // busy machine could still be filling it when the hub closes the socket after its grace.
            let flooder = try hub.client(sendBufferSize: 8192)
            flooder.defaultTimeout = 1
            // One request per frame, as a misbehaving app sends them, and on well past the close: 5 are answered,
            // 5 refused, the 11th closes the connection. From then on the hub reads nothing, so the sends stall once
            // the socket buffers are full (a timeout); a hub that went on reading and then dropped the socket would
            // instead reset the connection under the client (a lost connection).
            let line = #"{"op":"whoami","pad":""# + String(repeating: "x", count: 1000) + #""}"#
            var stalled = false
            for _ in 0..<(256 * 1024) {
                do { try flooder.sendText(line) } catch let error as TestClientError {
                    #expect(error.isTimeout, "the flood must stall, not be reset: \(error)")
                    stalled = error.isTimeout
                    break
                }
            }
            #expect(stalled)
            let close = try flooder.expectClose(timeout: 10)
            #expect(close.code == 4429)
            #expect(close.reason.contains("too many requests"))
            #expect(try hub.client().request("guest")["ok"] as? Bool == true)
        }
    }
}
