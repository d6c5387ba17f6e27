// The writer's exact output: comma placement at every depth, escaping, number formats, raw splicing, and
// buffer reuse.

import Testing

@testable import CairnWire

@Suite(.timeLimit(.minutes(5))) struct JSONWriterTests {
    private func text(_ w: JSONWriter) -> String { String(decoding: w.bytes, as: UTF8.self) }

    @Test func commasArePlacedAtEveryDepth() {
        var w = JSONWriter()
        w.beginObject()
        w.field("a", 1)
        w.key("b")
        w.beginArray()
        w.int(1)
        w.beginObject()
        w.endObject()
        w.beginArray()
        w.endArray()
        w.beginObject()
        w.field("x", true)
        w.nullField("y")
        w.endObject()
        w.string("s")
        w.endArray()
        w.field("c", "d")
        w.key("e")
        w.beginObject()
        w.key("f")
        w.beginArray()
        w.endArray()
        w.endObject()
        w.endObject()
        #expect(text(w) == #"{"a":1,"b":[1,{},[],{"x":true,"y":null},"s"],"c":"d","e":{"f":[]}}"#)
    }

    @Test func anArrayFieldWritesEachElementWithCommas() {
        var w = JSONWriter()
        w.beginObject()
        w.field("a", 1)
        w.array("b", [1, 2, 3]) { n, w in w.int(n) }
        w.array("c", [Int]()) { n, w in w.int(n) }
        w.endObject()
        #expect(text(w) == #"{"a":1,"b":[1,2,3],"c":[]}"#)
    }

    @Test func topLevelValuesTakeNoComma() {
        var w = JSONWriter()
        w.beginObject()
        w.endObject()
        w.bytes.append(0x0A)
        w.beginObject()
        w.field("a", 1)
        w.endObject()
        #expect(text(w) == "{}\n{\"a\":1}")
    }

    @Test func stringsAreEscaped() {
        var w = JSONWriter()
        w.string("q\"b\\s/\n\r\t\u{8}\u{C}\u{0}\u{1F}\u{7F}é😀")
        #expect(text(w) == #""q\"b\\s/\n\r\t\b\f\u0000\u001f\#u{7F}é😀""#)
    }

    @Test func keysAreEscapedToo() {
        var w = JSONWriter()
        w.beginObject()
        w.key("a\"b\n")
        w.int(1)
        w.key("plain" as StaticString)
        w.int(2)
        w.endObject()
        #expect(text(w) == #"{"a\"b\n":1,"plain":2}"#)
    }

    @Test func integersIncludingTheExtremes() {
        var w = JSONWriter()
        w.beginArray()
        for value: Int64 in [0, 1, -1, 9, 10, -10, 1_763_740_000_000, .max, .min] { w.int(value) }
        w.int(Int(42))
        w.endArray()
        #expect(text(w) == "[0,1,-1,9,10,-10,1763740000000,9223372036854775807,-9223372036854775808,42]")
    }

    @Test func doublesUseTheShortestRoundTripForm() {
        var w = JSONWriter()
        w.beginArray()
        for value in [
            37.7749295, -122.4194155, 1e-7, 5e300, -0.0, 3.0, 0.1, 0.30000000000000004, 1e16, .greatestFiniteMagnitude,
        ] {
            w.double(value)
        }
        w.endArray()
        #expect(
            text(w)
                == "[37.7749295,-122.4194155,1e-07,5e+300,-0.0,3.0,0.1,0.30000000000000004,1e+16,"
                + "1.7976931348623157e+308]"
        )
    }

    @Test func computedDoublesAreWrittenAsDoublesAre() {
        let values: [Double] = [
            4456.123456789012, 37937.2, 0, -0.0, 3.0, 1e-7, 5e300, .nan, .infinity, 12_345_678.901234567, 0.1,
        ]
        var plain = JSONWriter()
        var computed = JSONWriter()
        plain.beginObject()
        computed.beginObject()
        for (i, value) in values.enumerated() {
            plain.key("d\(i)")
            plain.double(value)
            computed.key("d\(i)")
            computed.computedDouble(value)
        }
        plain.endObject()
        computed.endObject()
        #expect(text(computed) == text(plain))
        #expect(text(computed).hasPrefix(#"{"d0":4456.123456789012,"d1":37937.2,"d2":0.0,"d3":-0.0,"#))
    }

    @Test func membersAreSplicedIntoAnOpenObject() {
        let members = Array(#""place":1,"name":"Zermatt""#.utf8)
        var w = JSONWriter()
        w.beginArray()
        for _ in 0..<2 {
            w.beginObject()
            members.withUnsafeBytes { w.rawMembers($0) }
            w.field("distance", 4.5)
            w.endObject()
        }
        w.endArray()
        let one = #"{"place":1,"name":"Zermatt","distance":4.5}"#
        #expect(text(w) == "[\(one),\(one)]")
    }

    @Test func nonFiniteDoublesAreNull() {
        var w = JSONWriter()
        w.beginArray()
        w.double(.nan)
        w.double(.infinity)
        w.double(-.infinity)
        w.endArray()
        #expect(text(w) == "[null,null,null]")
    }

    @Test func rawValuesAreSplicedWithCommas() {
        let marker = Array(#"{"id":1,"locked":false}"#.utf8)
        var w = JSONWriter()
        w.beginObject()
        w.field("ev", "relic.appear")
        w.key("relic")
        marker.withUnsafeBytes { w.raw($0) }
        w.key("list")
        w.beginArray()
        w.raw(marker)
        w.raw(marker)
        w.endArray()
        w.endObject()
        #expect(
            text(w)
                == #"{"ev":"relic.appear","relic":{"id":1,"locked":false},"#
                + #""list":[{"id":1,"locked":false},{"id":1,"locked":false}]}"#
        )
    }

    @Test func optionalFieldsAreOmittedWhenNil() {
        var w = JSONWriter()
        w.beginObject()
        w.field("acc", nil as Double?)
        w.field("alt", 12.5 as Double?)
        w.field("name", nil as String?)
        w.field("ts", 5 as Int64?)
        w.field("on", nil as Bool?)
        w.endObject()
        #expect(text(w) == #"{"alt":12.5,"ts":5}"#)
    }

    @Test func resetKeepsCapacityAndForgetsState() {
        var w = JSONWriter(capacity: 16)
        w.beginObject()
        w.key("k")
        w.beginArray()
        for i in 0..<100 { w.int(i) }
        let capacity = w.bytes.capacity
        w.reset()
        #expect(w.bytes.isEmpty)
        #expect(w.bytes.capacity == capacity)
        w.beginObject()
        w.field("a", 1)
        w.endObject()
        #expect(text(w) == #"{"a":1}"#)
    }

    @Test func fiftyLevelsOfNesting() {
        var w = JSONWriter()
        for _ in 0..<50 {
            w.beginArray()
            w.int(1)
        }
        for _ in 0..<50 { w.endArray() }
        #expect(text(w) == String(repeating: "[1,", count: 49) + "[1" + String(repeating: "]", count: 50))
    }
}
