// Reading the id of a request that failed to parse: only a top-level `"id"` with a plain positive integer, never a
// nested one, one inside a string, a repeated one, or anything the envelope would refuse.
import CairnWire
import Testing

@Suite(.timeLimit(.minutes(5)))
struct IDSalvageTests {
    private func salvage(_ text: String) -> Int64? {
        Array(text.utf8).withUnsafeBytes { Message.salvageID(from: $0) }
    }

    @Test func readsATopLevelIdWhereverItStands() {
        #expect(salvage(#"{"id":7,"op":"pos","lat":1e400}"#) == 7)
        #expect(salvage(#"{"op":"pos","lat":1e400, "id" : 9 }"#) == 9)
        #expect(salvage(#"{"id":12,"op":"po"#) == 12)  // cut off after the id
        #expect(salvage("{\"id\":9007199254740992,\"x\":}") == 9_007_199_254_740_992)
    }

    @Test(arguments: [
        #"{"x":{"id":5},"lat":1e400}"#,  // nested
        #"{"s":"\"id\":4","lat":1e400}"#,  // inside a string
        #"{"id":1,"id":2}"#,  // repeated
        #"{"id":"7","lat":1e400}"#,  // a string
        #"{"id":0}"#, #"{"id":-3}"#, #"{"id":7.5}"#, #"{"id":1e3}"#, #"{"id":07}"#,  // not a positive integer
        #"{"id":9007199254740993}"#,  // above 2^53
        #"["id",7]"#, #"{"idx":7}"#, #"{"id":7"#,  // not a key, another key, no delimiter after the value
    ])
    func refusesAnythingAmbiguousOrInvalid(_ text: String) {
        #expect(salvage(text) == nil)
    }
}
