// Reading valid requests: the envelope fields, every accessor, key matching (including escaped keys), nested
// objects, and reuse of one Message across parses.

import CairnErrorCodes
import Testing

@testable import CairnWire

@Suite(.timeLimit(.minutes(5))) struct MessageTests {
    let pos =
        #"{"op":"pos","lat":37.7749295,"lon":-122.4194155,"acc":5.0,"spd":1.4,"hdg":270.0,"bat":81,"ts":1763740000000}"#

    @Test func readsAPositionMessage() throws {
        let m = try parsed(pos)
        #expect(m.op == "pos")
        #expect(m.id == nil)
        #expect(m.fieldCount == 8)
        #expect(try m.double("lat") == 37.7749295)
        #expect(try m.double("lon") == -122.4194155)
        #expect(try m.double("acc") == 5.0)
        #expect(try m.double("spd") == 1.4)
        #expect(try m.double("hdg") == 270.0)
        #expect(try m.int("bat") == 81)
        #expect(try m.double("bat") == 81)
        #expect(try m.int("ts") == 1_763_740_000_000)
        #expect(try m.double("alt") == nil)
    }

    @Test func idIsReadWhenPresent() throws {
        #expect(try parsed(#"{"id":7,"op":"auth"}"#).id == 7)
        #expect(try parsed(#"{"id":1e3}"#).id == 1000)
        #expect(try parsed(#"{"id":9007199254740992}"#).id == 9_007_199_254_740_992)
        #expect(try parsed(#"{"op":"auth"}"#).id == nil)
    }

    @Test(arguments: ["0", "-1", "1.5", "\"7\"", "true", "null", "{}", "9007199254740993", "1e16"])
    func idMustBeAPositiveInteger(_ value: String) {
        expectRefused(
            #"{"id":\#(value),"op":"x"}"#, "field 'id' must be an integer from 1 to 2^53 (9007199254740992)")
    }

    @Test(arguments: ["5", "null", "true", "[]", "{\"a\":1}"])
    func opMustBeAString(_ value: String) {
        expectRefused(#"{"op":\#(value)}"#, "field 'op' must be a string")
    }

    @Test func opIsOptionalAndMayBeEscaped() throws {
        #expect(try parsed(#"{"id":3}"#).op == nil)
        let m = try parsed(#"{"op":"p\u006fs"}"#)
        #expect(m.op == "pos")
        #expect(m.isOp("pos"))
        #expect(!m.isOp("po"))
        #expect(try parsed(#"{"op":"friend.request"}"#).isOp("friend.request"))
        #expect(!(try parsed(#"{"id":1}"#).isOp("")))
    }

    @Test func anIllTypedIdLeavesTheOpReadable() {
        var m = Message()
        #expect(thrownError { () throws(WireError) in try m.parse(Array(#"{"id":"x","op":"pos"}"#.utf8)) } != nil)
        #expect(m.op == "pos")
        #expect(m.id == nil)
    }

    @Test func stringsAreDecoded() throws {
        let m = try parsed(#"{"s":"q\"b\\s\/b\bf\fn\nr\rt\tu\u00e9\u4e2d\ud83d\ude00\u0001end","raw":"café 😀"}"#)
        #expect(try m.string("s") == "q\"b\\s/b\u{8}f\u{C}n\nr\rt\tué中😀\u{1}end")
        #expect(try m.string("raw") == "café 😀")
        #expect(try m.requireString("raw") == "café 😀")
    }

    @Test func integersAcceptIntegralNumbers() throws {
        let m = try parsed(
            #"{"a":1e3,"b":1.0,"c":12.340e2,"d":0.5e1,"e":-0,"f":-9007199254740992,"g":100e-2,"h":0e99}"#)
        #expect(try m.int("a") == 1000)
        #expect(try m.int("b") == 1)
        #expect(try m.int("c") == 1234)
        #expect(try m.int("d") == 5)
        #expect(try m.int("e") == 0)
        #expect(try m.int("f") == -9_007_199_254_740_992)
        #expect(try m.int("g") == 1)
        #expect(try m.int("h") == 0)
    }

    @Test(arguments: ["1.5", "0.1", "1e-1", "1e-400", "9007199254740992.5"])
    func fractionsAreNotIntegers(_ value: String) throws {
        let m = try parsed(#"{"n":\#(value)}"#)
        let error = thrownError { () throws(WireError) in try m.int("n") }
        #expect(error == .badRequest("field 'n' must be an integer"))
    }

    @Test(arguments: ["9007199254740993", "-9007199254740993", "1e16", "123456789012345678901234567890"])
    func integersBeyondTwoToThe53AreOutOfRange(_ value: String) throws {
        let m = try parsed(#"{"n":\#(value)}"#)
        let error = thrownError { () throws(WireError) in try m.int("n") }
        #expect(error?.code == .badRequest)
        #expect(error?.message.contains("field 'n'") == true)
        #expect(error?.message.contains("2^53") == true)
    }

    @Test func doublesAreExact() throws {
        let cases = [
            "37.7749295", "-122.4194155", "1e-7", "5e300", "0.1", "1e23", "2.2250738585072014e-308", "4.9e-324",
            "1.7976931348623157e308", "123456789012345678901234567890", "0.30000000000000004",
            "9007199254740993", "1.00000000000000011102230246251565404236316680908203125", "8.98846567431158e307",
            "1e-400", "-2.5E-308", "6.02214076e23",
        ]
        for text in cases {
            let m = try parsed(#"{"x":\#(text)}"#)
            #expect(try m.double("x") == Double(text)!, "for \(text)")
        }
        let negativeZero = try #require(try parsed(#"{"x":-0.0}"#).double("x"))
        #expect(negativeZero == 0 && negativeZero.sign == .minus)
    }

    @Test func randomDecimalTextsConvertLikeTheStandardLibrary() throws {
        var rng = SeededGenerator(seed: 0xCA1A)
        var m = Message()
        for _ in 0..<5000 {
            let digits = (0..<Int.random(in: 1...25, using: &rng)).map { _ in String(Int.random(in: 0...9, using: &rng))
            }
            var intPart = digits.prefix(Int.random(in: 1...digits.count, using: &rng)).joined()
            while intPart.count > 1 && intPart.hasPrefix("0") { intPart.removeFirst() }
            let frac =
                digits.count > 1 && Bool.random(using: &rng) ? "." + digits.suffix(digits.count - 1).joined() : ""
            let exp = Bool.random(using: &rng) ? "e\(Int.random(in: -330...310, using: &rng))" : ""
            let text = (Bool.random(using: &rng) ? "-" : "") + intPart + frac + exp
            guard let expected = Double(text), expected.isFinite else { continue }
            try m.parse(Array(#"{"x":\#(text)}"#.utf8))
            #expect(try m.double("x")?.bitPattern == expected.bitPattern, "for \(text)")
        }
    }

    @Test func booleans() throws {
        let m = try parsed(#"{"t":true,"f":false,"n":null}"#)
        #expect(try m.bool("t") == true)
        #expect(try m.bool("f") == false)
        #expect(try m.bool("n") == nil)
        #expect(try m.bool("absent") == nil)
        #expect(try m.requireBool("t"))
    }

    @Test func absentAndNullAreNilButOnlyNullIsContained() throws {
        let m = try parsed(#"{"n":null}"#)
        #expect(m.contains("n"))
        #expect(m.isNull("n"))
        #expect(!m.contains("x"))
        #expect(try m.string("n") == nil)
        #expect(try m.int("n") == nil)
        #expect(try m.double("n") == nil)
        #expect(try m.object("n") == nil)
        #expect(try m.string("x") == nil)
    }

    @Test func wrongTypesNameTheFieldAndTheExpectedType() throws {
        let m = try parsed(#"{"lat":"north","s":5,"b":"yes","o":[],"i":"1"}"#)
        #expect(
            thrownError { () throws(WireError) in try m.double("lat") } == .badRequest("field 'lat' must be a number"))
        #expect(thrownError { () throws(WireError) in try m.string("s") } == .badRequest("field 's' must be a string"))
        #expect(thrownError { () throws(WireError) in try m.bool("b") } == .badRequest("field 'b' must be a boolean"))
        #expect(thrownError { () throws(WireError) in try m.object("o") } == .badRequest("field 'o' must be an object"))
        #expect(thrownError { () throws(WireError) in try m.int("i") } == .badRequest("field 'i' must be an integer"))
        #expect(
            thrownError { () throws(WireError) in try m.requireDouble("lat") }
                == .badRequest("field 'lat' must be a number"))
    }

    @Test func requiredAccessorsNameTheMissingField() throws {
        let m = try parsed(#"{"lon":null}"#)
        #expect(
            thrownError { () throws(WireError) in try m.requireDouble("lat") } == .badRequest("missing field 'lat'"))
        #expect(
            thrownError { () throws(WireError) in try m.requireDouble("lon") } == .badRequest("missing field 'lon'"))
        #expect(thrownError { () throws(WireError) in try m.requireInt("ts") } == .badRequest("missing field 'ts'"))
        #expect(
            thrownError { () throws(WireError) in try m.requireString("text") } == .badRequest("missing field 'text'"))
    }

    @Test func escapedKeysMatchPlainKeys() throws {
        let m = try parsed(#"{"\u0069d":5,"caf\u00e9":1,"\ud83d\ude00":2,"a\"b":3}"#)
        #expect(m.id == 5)
        #expect(m.contains("id"))
        #expect(try m.int("café") == 1)
        #expect(try m.int("😀") == 2)
        #expect(try m.int("a\"b") == 3)
        #expect(!m.contains("i"))
        #expect(m.keyNames == ["id", "café", "😀", "a\"b"])
    }

    @Test func keysAreComparedExactly() throws {
        let m = try parsed(#"{"lat":1,"latitude":2,"":3}"#)
        #expect(try m.int("lat") == 1)
        #expect(try m.int("latitude") == 2)
        #expect(try m.int("") == 3)
        #expect(!m.contains("la"))
        #expect(!m.contains("Lat"))
    }

    @Test func nestedObjectsAreMessagesWithoutEnvelopeRules() throws {
        let m = try parsed(
            #"{"op":"x","relic":{"id":"not-a-number","op":5,"lat":1.5,"inner":{"k":"v"},"list":[1,{"a":2}]}}"#)
        let relic = try #require(try m.object("relic"))
        #expect(try relic.string("id") == "not-a-number")
        #expect(try relic.double("lat") == 1.5)
        #expect(relic.id == nil)
        #expect(relic.op == nil)
        #expect(try relic.object("inner")?.string("k") == "v")
        #expect(relic.contains("list"))
    }

    @Test func aNestedObjectMayHaveMoreFieldsThanTheTopLevelLimit() throws {
        var limits = WireLimits()
        limits.maxFields = 2
        let m = try parsed(#"{"o":{"a":1,"b":2,"c":3}}"#, limits: limits)
        #expect(try m.object("o")?.int("c") == 3)
    }

    @Test func aStringValueIsBoundedBeforeAnyFeatureReadsIt() throws {
        var limits = WireLimits()
        limits.maxFieldStringBytes = 8
        // Eight bytes decoded is the most, escapes or not; a ninth is refused naming the field and the bound.
        let m = try parsed(
            #"{"a":"12345678","b":"123456789","c":"\u00e9\u00e9\u00e9\u00e9","d":"ééééé"}"#, limits: limits)
        #expect(try m.string("a") == "12345678")
        #expect(try m.string("c") == "éééé")
        for key in ["b", "d"] {
            #expect(throws: WireError.badRequest("field '\(key)' must be at most 8 bytes")) { try m.string(key) }
        }
        // The default: 4 KiB, a chat message's 4,000 bytes fit.
        let long = try parsed(
            #"{"q":"\#(String(repeating: "x", count: 4097))","t":"\#(String(repeating: "x", count: 4000))"}"#)
        #expect(throws: WireError.self) { try long.requireString("q") }
        #expect(try long.string("t")?.utf8.count == 4000)
    }

    @Test func reuseForgetsTheLongerPreviousMessage() throws {
        var m = Message()
        try m.parse(Array(pos.utf8))
        try m.parse(Array(#"{"id":2,"op":"auth","token":"t"}"#.utf8))
        #expect(m.id == 2)
        #expect(m.op == "auth")
        #expect(try m.string("token") == "t")
        #expect(!m.contains("lat"))
        #expect(!m.contains("ts"))
        #expect(m.fieldCount == 3)
        try m.parse(Array(#"{"lat":-1}"#.utf8))
        #expect(m.id == nil)
        #expect(m.op == nil)
        #expect(try m.double("lat") == -1)
    }

    @Test func reuseAfterAFailedParseHoldsNothing() throws {
        var m = Message()
        try m.parse(Array(pos.utf8))
        #expect(parseError(Array(#"{"op":"pos","lat":}"#.utf8)) != nil)
        #expect(thrownError { () throws(WireError) in try m.parse(Array(#"{"op":"pos","lat":}"#.utf8)) } != nil)
        #expect(!m.contains("op"))
        #expect(m.op == nil)
        #expect(m.fieldCount == 0)
        try m.parse(Array(#"{"op":"pos"}"#.utf8))
        #expect(m.op == "pos")
    }

    @Test func escapedKeysDoNotLeakIntoTheNextParse() throws {
        var m = Message()
        try m.parse(Array(#"{"\u0061bc":1,"\u0064":2}"#.utf8))
        try m.parse(Array(#"{"d":3,"\u0065":4}"#.utf8))
        #expect(try m.int("d") == 3)
        #expect(try m.int("e") == 4)
        #expect(!m.contains("abc"))
    }

    @Test func parsesFromARawBufferThatIsAPartOfALargerOne() throws {
        let frame = Array(#"xx{"a":1}yy"#.utf8)
        var m = Message()
        try frame.withUnsafeBytes { raw in
            try m.parse(UnsafeRawBufferPointer(rebasing: raw[2..<9]))
        }
        #expect(try m.int("a") == 1)
    }
}
