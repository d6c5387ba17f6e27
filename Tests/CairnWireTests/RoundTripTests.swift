// Writer output read back by Message gives the same values: hand-picked hard cases, then random objects from
// a seeded generator (deterministic, so a failure reproduces).

import Testing

@testable import CairnWire

@Suite(.timeLimit(.minutes(5))) struct RoundTripTests {
    /// Writes `{"v": …}` and parses it back.
    private func roundTrip(_ write: (inout JSONWriter) -> Void) throws -> Message {
        var w = JSONWriter()
        w.beginObject()
        w.key("v")
        write(&w)
        w.endObject()
        var limits = WireLimits()
        limits.maxFieldStringBytes = limits.maxStringBytes  // the codec, not the bound requests meet
        return try parsed(String(decoding: w.bytes, as: UTF8.self), limits: limits)
    }

    @Test(arguments: [
        "", "plain", "quote \" and backslash \\ and slash /", "\n\r\t\u{8}\u{C}", "\u{1}\u{1F}\u{7F}",
        "emoji 😀👩‍👩‍👧 flags 🇳🇿", "中文 é ü ß", "\u{10FFFF}\u{FFFD}\u{E000}", "\\u0069d", "\"\"\"", "\\",
        String(repeating: "long ", count: 2000),
    ])
    func strings(_ value: String) throws {
        #expect(try roundTrip { $0.string(value) }.string("v") == value)
    }

    /// Every control character but U+0000, which the writer escapes and the parser refuses (MessageStrictnessTests).
    @Test func everyControlCharacter() throws {
        let value = String(decoding: (1..<0x20).map { UInt8($0) } + [0x22, 0x5C], as: UTF8.self)
        #expect(try roundTrip { $0.string(value) }.string("v") == value)
    }

    @Test(arguments: [
        37.7749295, -122.4194155, 1e-7, 5e300, -0.0, 0.0, 0.1, 1.4, 270.0, 1e23, 123456.789e-300,
        .greatestFiniteMagnitude, -.greatestFiniteMagnitude, .leastNonzeroMagnitude, .leastNormalMagnitude,
        0.30000000000000004, 9_007_199_254_740_994, 1e16, 1e22, 4.35, 2.5e-5,
    ])
    func doubles(_ value: Double) throws {
        let back = try #require(try roundTrip { $0.double(value) }.double("v"))
        #expect(back.bitPattern == value.bitPattern)
    }

    @Test func randomDoubleBitPatterns() throws {
        var rng = SeededGenerator(seed: 42)
        var m = Message()
        var w = JSONWriter()
        for _ in 0..<20_000 {
            let value = Double(bitPattern: rng.next())
            guard value.isFinite else { continue }
            w.reset()
            w.beginObject()
            w.field("v", value)
            w.endObject()
            try m.parse(w.bytes)
            #expect(try m.double("v")?.bitPattern == value.bitPattern, "for \(value)")
        }
    }

    @Test(arguments: [0, 1, -1, 81, 1_763_740_000_000, 9_007_199_254_740_992, -9_007_199_254_740_992] as [Int64])
    func integers(_ value: Int64) throws {
        #expect(try roundTrip { $0.int(value) }.int("v") == value)
    }

    @Test func int64ExtremesAreWrittenExactlyButAreOutOfTheReadersRange() throws {
        for value in [Int64.max, .min] {
            let m = try roundTrip { $0.int(value) }
            #expect(try m.double("v") == Double(value))
            #expect(thrownError { () throws(WireError) in try m.int("v") }?.message.contains("2^53") == true)
        }
    }

    @Test func booleansAndNull() throws {
        #expect(try roundTrip { $0.bool(true) }.bool("v") == true)
        #expect(try roundTrip { $0.bool(false) }.bool("v") == false)
        #expect(try roundTrip { $0.null() }.isNull("v"))
    }

    // MARK: Random objects

    /// A JSON value of the test model.
    private indirect enum Value {
        case string(String)
        case int(Int64)
        case double(Double)
        case bool(Bool)
        case null
        case object([(String, Value)])
        case array([Value])
    }

    private func randomString(_ rng: inout SeededGenerator) -> String {
        let pool: [Unicode.Scalar] = [
            "a", "z", "0", " ", "\"", "\\", "/", "\n", "\t", "\u{1}", "\u{1F}", "é", "中",
            "😀", "\u{10FFFF}", "\u{7F}", "\u{2028}", "\u{FEFF}",
        ]
        var s = String.UnicodeScalarView()
        for _ in 0..<Int.random(in: 0...12, using: &rng) { s.append(pool.randomElement(using: &rng)!) }
        return String(s)
    }

    private func randomValue(_ rng: inout SeededGenerator, depth: Int) -> Value {
        switch Int.random(in: 0..<(depth < 4 ? 7 : 5), using: &rng) {
        case 0: return .string(randomString(&rng))
        case 1: return .int(Int64.random(in: -(1 << 53)...(1 << 53), using: &rng))
        case 2:
            let value = Double(bitPattern: rng.next())
            return .double(value.isFinite ? value : Double.random(in: -180...180, using: &rng))
        case 3: return .bool(Bool.random(using: &rng))
        case 4: return .null
        case 5: return .object(randomFields(&rng, depth: depth + 1))
        default:
            return .array((0..<Int.random(in: 0...4, using: &rng)).map { _ in randomValue(&rng, depth: depth + 1) })
        }
    }

    private func randomFields(_ rng: inout SeededGenerator, depth: Int) -> [(String, Value)] {
        var fields: [(String, Value)] = []
        var seen = Set<String>()
        for _ in 0..<Int.random(in: 0...8, using: &rng) {
            let key = randomString(&rng)
            if seen.insert(key).inserted { fields.append((key, randomValue(&rng, depth: depth))) }
        }
        return fields
    }

    private func write(_ value: Value, _ w: inout JSONWriter) {
        switch value {
        case .string(let s): w.string(s)
        case .int(let i): w.int(i)
        case .double(let d): w.double(d)
        case .bool(let b): w.bool(b)
        case .null: w.null()
        case .object(let fields):
            w.beginObject()
            for (key, value) in fields {
                w.key(key)
                write(value, &w)
            }
            w.endObject()
        case .array(let values):
            w.beginArray()
            for value in values { write(value, &w) }
            w.endArray()
        }
    }

    /// Checks every field of `message` against the model, descending into nested objects.
    private func check(_ message: Message, _ fields: [(String, Value)]) throws {
        #expect(message.keyNames == fields.map(\.0))
        for (key, value) in fields {
            switch value {
            case .string(let s): #expect(try message.string(key) == s)
            case .int(let i): #expect(try message.int(key) == i)
            case .double(let d): #expect(try message.double(key)?.bitPattern == d.bitPattern, "\(d)")
            case .bool(let b): #expect(try message.bool(key) == b)
            case .null: #expect(message.isNull(key))
            case .object(let nested): try check(try #require(try message.object(key)), nested)
            case .array: #expect(message.contains(key))
            }
        }
    }

    @Test func randomObjectsSurviveWriteThenParse() throws {
        var rng = SeededGenerator(seed: 0x5EED)
        var message = Message(
            limits: {
                var l = WireLimits()
                l.maxFields = 1000
                return l
            }())
        var w = JSONWriter()
        for _ in 0..<2000 {
            let fields = randomFields(&rng, depth: 0)
            w.reset()
            write(.object(fields), &w)
            try message.parse(w.bytes)
            try check(message, fields)
        }
    }
}
