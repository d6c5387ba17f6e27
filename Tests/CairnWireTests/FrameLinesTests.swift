// Splitting a frame into its newline-separated JSON texts.

import Testing

@testable import CairnWire

@Suite(.timeLimit(.minutes(5))) struct FrameLinesTests {
    private func lines(_ frame: String) -> [String] {
        var result: [String] = []
        Array(frame.utf8).withUnsafeBytes { raw in
            FrameLines.forEach(in: raw) { result.append(String(decoding: $0, as: UTF8.self)) }
        }
        return result
    }

    @Test func oneTextWithoutNewline() {
        #expect(lines(#"{"a":1}"#) == [#"{"a":1}"#])
    }

    @Test func severalTexts() {
        #expect(lines("{\"a\":1}\n{\"b\":2}\n{\"c\":3}") == [#"{"a":1}"#, #"{"b":2}"#, #"{"c":3}"#])
    }

    @Test func blankAndWhitespaceLinesAreSkipped() {
        #expect(lines("\n\n{\"a\":1}\n   \n\t\r\n\n{\"b\":2}\n\n") == [#"{"a":1}"#, #"{"b":2}"#])
        #expect(lines("").isEmpty)
        #expect(lines("\n").isEmpty)
        #expect(lines(" \t\r\n \n").isEmpty)
    }

    @Test func surroundingWhitespaceStaysWithTheLine() {
        #expect(lines(" {\"a\":1} \r\n{}") == [" {\"a\":1} \r", "{}"])
    }

    @Test func crlfLinesParse() throws {
        var m = Message()
        var ops: [String?] = []
        try Array("{\"op\":\"a\"}\r\n{\"op\":\"b\"}\r\n".utf8).withUnsafeBytes { raw in
            try FrameLines.forEach(in: raw) { line in
                try m.parse(line)
                ops.append(m.op)
            }
        }
        #expect(ops == ["a", "b"])
    }

    @Test func anEmptyBufferCallsNothing() {
        var calls = 0
        FrameLines.forEach(in: UnsafeRawBufferPointer(start: nil, count: 0)) { _ in calls += 1 }
        #expect(calls == 0)
    }

    @Test func aThrowStopsTheIteration() {
        struct Stop: Error {}
        var seen = 0
        #expect(throws: Stop.self) {
            try Array("{}\n{}\n{}".utf8).withUnsafeBytes { raw in
                try FrameLines.forEach(in: raw) { _ in
                    seen += 1
                    if seen == 2 { throw Stop() }
                }
            }
        }
        #expect(seen == 2)
    }

    @Test func newlinesInsideStringsAreAlwaysEscapedSoSplittingIsSafe() throws {
        var w = JSONWriter()
        w.beginObject()
        w.field("text", "two\nlines")
        w.endObject()
        w.bytes.append(0x0A)
        w.beginObject()
        w.field("text", "x")
        w.endObject()
        let frame = String(decoding: w.bytes, as: UTF8.self)
        #expect(lines(frame).count == 2)
        #expect(try parsed(lines(frame)[0]).string("text") == "two\nlines")
    }
}
