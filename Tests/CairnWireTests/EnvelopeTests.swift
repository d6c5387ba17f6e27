// The envelope shapes of the contract, byte for byte.

import CairnErrorCodes
import Testing

@testable import CairnWire

@Suite(.timeLimit(.minutes(5))) struct EnvelopeTests {
    private func text(_ w: JSONWriter) -> String { String(decoding: w.bytes, as: UTF8.self) }

    @Test func okReply() {
        var w = JSONWriter()
        Envelope.ok(id: 7, into: &w) { w in
            w.key("user")
            w.beginObject()
            w.field("id", 42)
            w.field("username", "alice")
            w.endObject()
            w.field("token", "t0k")
        }
        #expect(text(w) == #"{"id":7,"ok":true,"user":{"id":42,"username":"alice"},"token":"t0k"}"#)
    }

    @Test func okReplyWithoutFields() {
        var w = JSONWriter()
        Envelope.ok(id: 1, into: &w) { _ in }
        #expect(text(w) == #"{"id":1,"ok":true}"#)
    }

    @Test func failureWithAnId() {
        var w = JSONWriter()
        Envelope.failure(id: 7, op: "relic.delete", error: WireError(.notOwner, "You do not own this relic"), into: &w)
        #expect(text(w) == #"{"id":7,"ok":false,"error":{"code":"not_owner","message":"You do not own this relic"}}"#)
    }

    @Test func failureWithoutAnIdIsAnErrorEvent() {
        var w = JSONWriter()
        Envelope.failure(id: nil, op: "pos", error: .badRequest("field 'lat' must be a number"), into: &w)
        #expect(
            text(w)
                == #"{"ev":"error","op":"pos","error":{"code":"bad_request","message":"field 'lat' must be a number"}}"#
        )
    }

    @Test func failureWithoutIdOrOp() {
        var w = JSONWriter()
        Envelope.failure(id: nil, op: nil, error: .badRequest("a \"quoted\"\nmessage"), into: &w)
        #expect(text(w) == #"{"ev":"error","error":{"code":"bad_request","message":"a \"quoted\"\nmessage"}}"#)
    }

    @Test func event() {
        var w = JSONWriter()
        Envelope.event("pos", into: &w) { w in
            w.field("user", 42)
            w.field("lat", 37.7749295)
            w.field("lon", -122.4194155)
            w.field("ts", Int64(1_763_740_000_000))
        }
        #expect(text(w) == #"{"ev":"pos","user":42,"lat":37.7749295,"lon":-122.4194155,"ts":1763740000000}"#)
    }

    @Test func eventsBatchIntoOneFrame() throws {
        var w = JSONWriter()
        Envelope.event("presence", into: &w) { w in
            w.field("user", 1)
            w.field("online", true)
        }
        w.bytes.append(0x0A)
        Envelope.event("presence", into: &w) { w in
            w.field("user", 2)
            w.field("online", false)
        }
        var users: [Int64] = []
        var m = Message()
        try w.bytes.withUnsafeBytes { raw in
            try FrameLines.forEach(in: raw) { line in
                try m.parse(line)
                users.append(try m.requireInt("user"))
            }
        }
        #expect(users == [1, 2])
    }

    @Test func aRefusedRequestProducesAReplyThatParses() throws {
        var m = Message()
        let error = try #require(
            thrownError { () throws(WireError) in try m.parse(Array(#"{"id":3,"lat":NaN}"#.utf8)) })
        var w = JSONWriter()
        Envelope.failure(id: nil, op: nil, error: error, into: &w)
        let reply = try parsed(String(decoding: w.bytes, as: UTF8.self))
        #expect(try reply.object("error")?.string("code") == "bad_request")
        #expect(try reply.object("error")?.string("message") == error.message)
    }
}
