// The transport's side of the contract over a real socket: /healthz and other HTTP paths, the /ws endpoint and its
// subprotocol, batching several requests in one frame, malformed input answered without closing, binary frames,
// fragmented messages, the 1009 size cap and the 4508 authentication deadline.
import CairnApp
import CairnCore
import CairnServer
import CairnTestSupport
import Foundation
import Testing

extension ServerIntegration {
    @Suite struct TransportTests {
        @Test func healthzAnswersJSON() throws {
            let hub = try RunningHub()
            defer { hub.removeData() }
            let c = try hub.client()
            _ = try c.requestOK("guest")
            let response = try HTTPClient.get(port: hub.port, path: "/healthz")
            #expect(response.status == 200)
            #expect(response.headers["content-type"]?.hasPrefix("application/json") == true)
            let body = try response.jsonObject()
            #expect(body["status"] as? String == "ok")
            #expect(body["connections"] as? Int == 1)
            #expect(body["authenticated"] as? Int == 1)
        }

        @Test func unknownHTTPPathIs404AndPlainGetOnWsIs400() throws {
            let hub = try RunningHub()
            defer { hub.removeData() }
            #expect(try HTTPClient.get(port: hub.port, path: "/nope").status == 404)
            #expect(try HTTPClient.get(port: hub.port, path: "/ws").status == 400)
        }

        @Test func upgradeOnOtherPathsIsRefused() throws {
            let hub = try RunningHub()
            defer { hub.removeData() }
            #expect(throws: TestClientError.self) { _ = try hub.client(path: "/elsewhere") }
        }

        @Test func clientWithoutSubprotocolIsAccepted() throws {
            let hub = try RunningHub()
            defer { hub.removeData() }
            let c = try hub.client(subprotocol: nil)
            #expect(try c.request("guest")["ok"] as? Bool == true)
        }

        @Test func subprotocolIsEchoed() throws {
            let hub = try RunningHub()
            defer { hub.removeData() }
            let c = try hub.client(subprotocol: "cairn.v1")
            #expect(c.negotiatedSubprotocol == "cairn.v1")
        }

        @Test func twoRequestsInOneFrameGetTwoReplies() throws {
            let hub = try RunningHub()
            defer { hub.removeData() }
            let c = try hub.client()
            try c.sendLines([
                ["id": 1, "op": "register", "username": "ivan", "password": "password1"],
                ["id": 2, "op": "whoami"],
            ])
            let first = try c.nextReply(id: 1)
            let second = try c.nextReply(id: 2)
            #expect(first["ok"] as? Bool == true)
            // The second waited for the first: it sees the new session.
            #expect((second["user"] as? [String: Any])?["username"] as? String == "ivan")
        }

        @Test func malformedJSONIsAnsweredAndTheConnectionStaysOpen() throws {
            let hub = try RunningHub()
            defer { hub.removeData() }
            let c = try hub.client()
            for bad in [
                #"{"op":"guest""#, "[1,2,3]", #"{"op":"guest","id":NaN}"#, #"{"a":1,"a":2}"#, "nul",
                #"{"id":1e999,"op":"guest"}"#, String(repeating: "[", count: 100),
            ] {
                try c.sendText(bad)
                let event = try c.nextEvent("error")
                #expect(errorCode(event) == "bad_request", "for \(bad)")
                #expect(!errorMessage(event).isEmpty)
            }
            #expect(try c.request("guest")["ok"] as? Bool == true)
        }

        @Test func invalidUTF8IsBadRequestAndTheConnectionStaysOpen() throws {
            let hub = try RunningHub()
            defer { hub.removeData() }
            let c = try hub.client()
            var frame = WebSocketFrame(
                opcode: .text,
                payload: Array(#"{"op":"login","username":""#.utf8) + [0xC3, 0x28]
                    + Array(#"","password":"x"}"#.utf8))
            try c.sendRaw(frame.encoded())
            let event = try c.nextEvent("error")
            #expect(errorCode(event) == "bad_request")
            frame = WebSocketFrame(opcode: .text, payload: Array(#"{"id":3,"op":"guest"}"#.utf8))
            try c.sendRaw(frame.encoded())
            #expect(try c.nextReply(id: 3)["ok"] as? Bool == true)
        }

        @Test func unknownOpIsBadRequestNamingIt() throws {
            let hub = try RunningHub()
            defer { hub.removeData() }
            let c = try hub.client()
            _ = try c.requestOK("guest")
            let reply = try c.request("fly.away")
            #expect(errorCode(reply) == "bad_request")
            #expect(errorMessage(reply).contains("fly.away"))
        }

        @Test func binaryFramesAreRefusedWithoutClosing() throws {
            let hub = try RunningHub()
            defer { hub.removeData() }
            let c = try hub.client()
            try c.sendBinary([1, 2, 3])
            #expect(errorCode(try c.nextEvent("error")) == "bad_request")
            #expect(try c.request("guest")["ok"] as? Bool == true)
        }

        @Test func fragmentedMessageIsReassembled() throws {
            let hub = try RunningHub()
            defer { hub.removeData() }
            let c = try hub.client()
            try c.sendFragmented(
                #"{"id":7,"op":"register","username":"julia","password":"password1","name":"Julia"}"#,
                fragmentSize: 5)
            let reply = try c.nextReply(id: 7)
            #expect((reply["user"] as? [String: Any])?["name"] as? String == "Julia")
        }

        @Test func oversizedMessageClosesWith1009() throws {
            let hub = try RunningHub()
            defer { hub.removeData() }
            let c = try hub.client()
            let padding = String(repeating: "x", count: 70 * 1024)
            try c.sendText(#"{"op":"guest","pad":"\#(padding)"}"#)
            #expect(try c.expectClose(timeout: 10).code == 1009)
            // The server is still serving others.
            #expect(try hub.client().request("guest")["ok"] as? Bool == true)
        }

        @Test func oversizedFragmentedMessageClosesWith1009() throws {
            let hub = try RunningHub { $0.server.maxMessageBytes = 4096 }
            defer { hub.removeData() }
            let c = try hub.client()
            try? c.sendFragmented(String(repeating: "y", count: 8192), fragmentSize: 1000)
            #expect(try c.expectClose(timeout: 10).code == 1009)
        }

        @Test func messageJustUnderTheCapIsAccepted() throws {
            let hub = try RunningHub { $0.server.maxMessageBytes = 4096 }
            defer { hub.removeData() }
            let c = try hub.client()
            let head = #"{"id":1,"op":"guest","pad":""#
            let tail = #""}"#
            let padding = String(repeating: "z", count: 4096 - head.utf8.count - tail.utf8.count)
            try c.sendText(head + padding + tail)
            #expect(try c.nextReply(id: 1)["ok"] as? Bool == true)
        }

        @Test func messageOfManyReceiveChunksUnderTheDefaultCapIsAccepted() throws {
            // lws hands a frame over in pieces of the per-connection receive buffer (512 bytes): a 60 KiB message
            // arrives in over a hundred of them and must still be one message.
            let hub = try RunningHub()
            defer { hub.removeData() }
            let c = try hub.client()
            let padding = String(repeating: "w", count: 60 * 1024)
            try c.sendText(#"{"id":2,"op":"guest","pad":"\#(padding)"}"#)
            #expect(try c.nextReply(id: 2)["ok"] as? Bool == true)
            #expect(try c.request("whoami")["ok"] as? Bool == true)
        }

        @Test func idleUnauthenticatedConnectionClosesWith4508() throws {
            let hub = try RunningHub { $0.hub.authTimeoutMs = 1000 }
            defer { hub.removeData() }
            let idle = try hub.client()
            let authed = try hub.client()
            _ = try authed.requestOK("guest")
            let close = try idle.expectClose(timeout: 10)
            #expect(close.code == 4508)
            #expect(close.reason.contains("authentication"))
            #expect(try authed.request("whoami")["ok"] as? Bool == true)
        }
    }
}
