// Every class of malformed input the reader must refuse: each is a bad_request whose message names the problem
// (and the field, where there is one), never a crash. Inputs that are merely unusual but valid JSON are checked
// to be accepted, so the reader is not stricter than RFC 8259.

import CairnErrorCodes
import Testing

@testable import CairnWire

@Suite(.timeLimit(.minutes(5))) struct MessageStrictnessTests {
    @Test(arguments: ["", " ", "\n\t\r "])
    func emptyInput(_ text: String) {
        expectRefused(text, "empty request")
    }

    @Test func emptyRawBuffer() {
        var m = Message()
        let error = thrownError { () throws(WireError) in try m.parse(UnsafeRawBufferPointer(start: nil, count: 0)) }
        #expect(error == .badRequest("empty request"))
    }

    @Test func truncatedText() {
        expectRefused(#"{"id":7,"op":"login""#, "unexpected end of input")
        expectRefused(#"{"#, "unexpected end of input")
        expectRefused(#"{"a":"#, "unexpected end of input", "field 'a'")
        expectRefused(#"{"a":[1,2"#, "unexpected end of input", "field 'a'")
        expectRefused(#"{"a":{"b":1"#, "unexpected end of input", "field 'a'")
        expectRefused(#"{"a":"abc"#, "unterminated string", "field 'a'")
        expectRefused(#"{"ab"#, "unterminated key")
        expectRefused(#"{"a":1"#, "unexpected end of input")
        expectRefused(#"{"a":"x\"#, "unterminated escape", "field 'a'")
        expectRefused(#"{"a":"\u00"#, "\\u escape", "field 'a'")
    }

    @Test func trailingGarbage() {
        expectRefused(#"{"a":1} x"#, "unexpected data after the object")
        expectRefused(#"{"a":1}{"b":2}"#, "unexpected data after the object at offset 7")
        expectRefused(#"{"a":1}}"#, "unexpected data after the object")
    }

    @Test(arguments: ["[1]", "\"x\"", "42", "null", "true", "tru", "]"])
    func topLevelMustBeAnObject(_ text: String) {
        expectRefused(text, "a request must be a JSON object")
    }

    @Test(arguments: ["tru", "nul", "fals", "truex", "nulll", "true1"])
    func wrongLiterals(_ literal: String) {
        expectRefused(#"{"ok":\#(literal)}"#, "invalid literal '\(literal)'", "field 'ok'")
    }

    @Test(arguments: ["NaN", "Infinity", "True", "undefined"])
    func valuesThatAreNotJSON(_ value: String) {
        expectRefused(#"{"lat":\#(value)}"#, "invalid value '\(value)'", "field 'lat'")
    }

    @Test func invalidNumbersNameTheReason() {
        expectRefused(#"{"lat":-Infinity}"#, "invalid number '-Infinity'", "field 'lat'")
        expectRefused(#"{"lat":0x1F}"#, "invalid number '0x1F'", "field 'lat'")
        expectRefused(#"{"lat":01}"#, "invalid number '01'", "leading zeros", "field 'lat'")
        expectRefused(#"{"lat":-01.5}"#, "leading zeros", "field 'lat'")
        expectRefused(#"{"lat":+1}"#, "invalid number '+1'", "leading '+'", "field 'lat'")
        expectRefused(#"{"lat":.5}"#, "invalid number '.5'", "a digit must precede '.'", "field 'lat'")
        expectRefused(#"{"lat":-.5}"#, "a digit must precede '.'")
        expectRefused(#"{"lat":5.}"#, "invalid number '5.'", "a digit must follow '.'", "field 'lat'")
        expectRefused(#"{"lat":5.e3}"#, "a digit must follow '.'")
        expectRefused(#"{"lat":1e}"#, "the exponent has no digits", "field 'lat'")
        expectRefused(#"{"lat":1e+}"#, "the exponent has no digits")
        expectRefused(#"{"lat":-}"#, "invalid number '-'")
        expectRefused(#"{"lat":1.2.3}"#, "invalid number '1.2.3'")
        expectRefused(#"{"lat":1-2}"#, "invalid number '1-2'")
        expectRefused(#"{"lat":[1,2e5x]}"#, "invalid number '2e5x'", "field 'lat'")
    }

    @Test(arguments: ["1e400", "-1e400", "1.8e308", "1" + String(repeating: "0", count: 309), "0.000001e315"])
    func numbersBeyondDoubleAreOutOfRange(_ value: String) {
        if value.count > 64 {
            expectRefused(#"{"x":\#(value)}"#, "number too long", "field 'x'")
        } else {
            expectRefused(#"{"x":\#(value)}"#, "number out of range", "field 'x'")
        }
    }

    @Test func numbersAtTheEdgeOfDoubleAreAccepted() throws {
        let m = try parsed(#"{"max":1.7976931348623157e308,"tiny":4.9e-324,"under":1e-400,"zero":0e999999999999}"#)
        #expect(try m.double("max") == .greatestFiniteMagnitude)
        #expect(try m.double("tiny") == .leastNonzeroMagnitude)
        #expect(try m.double("under") == 0)
        #expect(try m.double("zero") == 0)
        expectRefused(#"{"x":1.7976931348623159e308}"#, "number out of range")
    }

    @Test func lexemesLongerThan64CharactersAreRefused() throws {
        let long = String(repeating: "1", count: 65)
        expectRefused(#"{"n":\#(long)}"#, "number too long", "field 'n'")
        let fine = "0." + String(repeating: "1", count: 62)
        #expect(try parsed(#"{"n":\#(fine)}"#).double("n") != nil)
    }

    @Test func nestingDeeperThanTheLimit() throws {
        let ok = #"{"a":"# + String(repeating: "[", count: 31) + String(repeating: "]", count: 31) + "}"
        #expect(try parsed(ok).contains("a"))
        let deep = #"{"a":"# + String(repeating: "[", count: 32) + String(repeating: "]", count: 32) + "}"
        expectRefused(deep, "nesting deeper than 32 levels", "field 'a'")
        let objects = String(repeating: #"{"a":"#, count: 40) + "1" + String(repeating: "}", count: 40)
        expectRefused(objects, "nesting deeper than 32 levels")
        var limits = WireLimits()
        limits.maxDepth = 2
        expectRefused(#"{"a":{"b":[]}}"#, "nesting deeper than 2 levels", limits: limits)
        #expect(try parsed(#"{"a":{"b":1},"c":[2]}"#, limits: limits).contains("c"))
    }

    @Test func unlimitedNestingDoesNotOverflowTheStack() throws {
        var limits = WireLimits()
        limits.maxDepth = .max
        let arrays = String(repeating: "[", count: 200_000) + String(repeating: "]", count: 200_000)
        #expect(try parsed(#"{"a":\#(arrays)}"#, limits: limits).contains("a"))
        let objects = String(repeating: #"{"a":"#, count: 100_000) + "1" + String(repeating: "}", count: 100_000)
        #expect(try parsed(objects, limits: limits).contains("a"))
        expectRefused(String(repeating: "[", count: 100_000), "a request must be a JSON object", limits: limits)
        expectRefused("{\"a\":" + String(repeating: "[", count: 100_000), "unexpected end of input", limits: limits)
    }

    @Test func moreThanMaxFieldsTopLevelFields() throws {
        let fields64 = (0..<64).map { #""f\#($0)":\#($0)"# }.joined(separator: ",")
        #expect(try parsed("{\(fields64)}").fieldCount == 64)
        expectRefused("{\(fields64),\"f64\":1}", "too many fields (more than 64)")
        var limits = WireLimits()
        limits.maxFields = 2
        expectRefused(#"{"a":1,"b":2,"c":3}"#, "too many fields (more than 2)", limits: limits)
    }

    @Test(
        arguments: [
            [0xC0, 0x80], [0xC1, 0xBF], [0xE0, 0x80, 0x80], [0xE0, 0x9F, 0xBF], [0xF0, 0x80, 0x80, 0x80],
            [0xED, 0xA0, 0x80], [0xED, 0xBF, 0xBF], [0xE4, 0xB8], [0xF0, 0x9F, 0x98], [0xC3],
            [0xF5, 0x80, 0x80, 0x80], [0xF4, 0x90, 0x80, 0x80], [0xFF], [0xFE], [0x80], [0xBF, 0x41], [0xC3, 0x41],
        ] as [[UInt8]])
    func invalidUTF8InStrings(_ sequence: [UInt8]) {
        let value = Array(#"{"name":"a"#.utf8) + sequence + Array(#"b"}"#.utf8)
        expectRefused(value, ["invalid UTF-8 in string", "field 'name'"])
        let key = Array(#"{"a"#.utf8) + sequence + Array(#"":1}"#.utf8)
        expectRefused(key, ["invalid UTF-8 in key"])
        let nested = Array(#"{"o":{"k":["#.utf8) + [0x22] + sequence + Array(#""]}}"#.utf8)
        expectRefused(nested, ["invalid UTF-8 in string", "field 'o'"])
    }

    @Test func invalidUTF8TruncatedAtTheEndOfInput() {
        expectRefused(Array(#"{"name":""#.utf8) + [0xE4, 0xB8], ["invalid UTF-8", "field 'name'"])
    }

    @Test func nonASCIIOutsideStrings() {
        expectRefused(Array(#"{"a":1,"#.utf8) + [0xC3, 0xA9] + Array(#""b":2}"#.utf8), ["non-ASCII byte 0xC3"])
        expectRefused(Array(#"{"a":"#.utf8) + [0xFF] + Array("}".utf8), ["non-ASCII byte 0xFF", "field 'a'"])
        expectRefused([0xEF, 0xBB, 0xBF] + Array(#"{"a":1}"#.utf8), ["a request must be a JSON object"])
    }

    @Test func validUTF8IsAccepted() throws {
        let m = try parsed(#"{"s":"é中😀\#u{10FFFF}\#u{E000}\#u{7F}"}"#)
        #expect(try m.string("s") == "é中😀\u{10FFFF}\u{E000}\u{7F}")
    }

    @Test(arguments: [0x00, 0x01, 0x0A, 0x0D, 0x09, 0x1F] as [UInt8])
    func rawControlCharactersInStrings(_ byte: UInt8) {
        expectRefused(
            Array(#"{"text":"a"#.utf8) + [byte] + Array(#"b"}"#.utf8), ["raw control character", "field 'text'"])
        expectRefused(Array(#"{"a"#.utf8) + [byte] + Array(#"":1}"#.utf8), ["raw control character", "in key"])
    }

    @Test func badEscapes() {
        expectRefused(#"{"s":"\x"}"#, "invalid escape '\\x'", "field 's'")
        expectRefused(#"{"s":"\'"}"#, "invalid escape '\\''", "field 's'")
        expectRefused(#"{"s":"\U0041"}"#, "invalid escape '\\U'", "field 's'")
        expectRefused(#"{"s":"\u12"}"#, "invalid \\u escape", "field 's'")
        expectRefused(#"{"s":"\u12G4"}"#, "invalid \\u escape", "field 's'")
        expectRefused(#"{"s":"\ud800"}"#, "lone surrogate", "field 's'")
        expectRefused(#"{"s":"\udc00"}"#, "lone surrogate", "field 's'")
        expectRefused(#"{"s":"\ude00\ud83d"}"#, "lone surrogate", "field 's'")
        expectRefused(#"{"s":"\ud800\u0041"}"#, "lone surrogate", "field 's'")
        expectRefused(#"{"s":"\ud800x"}"#, "lone surrogate", "field 's'")
        expectRefused(#"{"s":"\ud800\ud800"}"#, "lone surrogate", "field 's'")
        expectRefused(#"{"s":"\ud800\uzzzz"}"#, "invalid \\u escape", "field 's'")
        // U+0000 cannot be stored as text on every engine: refused wherever it appears, as `\u0000` only can.
        expectRefused(#"{"s":"a\u0000b"}"#, "\\u0000", "field 's'")
        expectRefused(#"{"o":{"p":["x","\u0000"]}}"#, "\\u0000", "field 'o'")
        expectRefused(#"{"a\u0000":1}"#, "\\u0000 in key")
        expectRefused(#"{"\x":1}"#, "invalid escape '\\x' in key")
        expectRefused(
            Array(#"{"s":"\"#.utf8) + [0x0A] + Array(#""}"#.utf8), ["invalid escape '\\' + 0x0A", "field 's'"])
    }

    @Test func duplicateKeysAtTheTopLevel() {
        expectRefused(#"{"lat":1,"lat":2}"#, "duplicate key 'lat'")
        expectRefused(#"{"lat":1,"lon":2,"lat":null}"#, "duplicate key 'lat'")
        expectRefused(#"{"id":1,"\u0069d":2}"#, "duplicate key 'id'")
        expectRefused(#"{"":1,"":2}"#, "duplicate key ''")
    }

    @Test func duplicateKeysAtAnyDepth() {
        expectRefused(#"{"o":{"a":1,"a":2}}"#, "duplicate key 'a'", "field 'o'")
        expectRefused(#"{"o":[{"a":1},{"b":1,"b":2}]}"#, "duplicate key 'b'", "field 'o'")
        expectRefused(#"{"o":{"p":{"q":{"x":1,"y":2,"\u0078":3}}}}"#, "duplicate key 'x'", "field 'o'")
    }

    @Test func equalKeysInDifferentObjectsAreFine() throws {
        let m = try parsed(#"{"a":{"a":{"a":1}},"b":[{"a":1},{"a":2}],"c":{"b":1}}"#)
        #expect(m.fieldCount == 3)
    }

    @Test func manyKeysInOneNestedObject() throws {
        let keys = (0..<5000).map { #""k\#($0)":\#($0)"# }.joined(separator: ",")
        #expect(try parsed(#"{"o":{\#(keys)},"p":{\#(keys)}}"#).fieldCount == 2)
        expectRefused(#"{"o":{\#(keys),"k4999":0}}"#, "duplicate key 'k4999'", "field 'o'")
    }

    @Test func stringsLongerThanTheLimit() throws {
        var limits = WireLimits()
        limits.maxStringBytes = 8
        #expect(try parsed(#"{"s":"12345678"}"#, limits: limits).string("s") == "12345678")
        expectRefused(#"{"s":"123456789"}"#, "string longer than 8 bytes", "field 's'", limits: limits)
        expectRefused(#"{"s":["123456789"]}"#, "string longer than 8 bytes", "field 's'", limits: limits)
        expectRefused(#"{"123456789":1}"#, "key longer than 8 bytes", limits: limits)
        let big = String(repeating: "x", count: 65537)
        expectRefused(#"{"s":"\#(big)"}"#, "string longer than 65536 bytes", "field 's'")
    }

    @Test func jsonWhitespaceIsAllowedAroundTokens() throws {
        let m = try parsed(" \t\r\n{ \"a\" :\t1 ,\n\"b\" : [ 1 , { \"c\" : null } ] ,\r\n\"d\":\"x\" }\n ")
        #expect(try m.int("a") == 1)
        #expect(try m.string("d") == "x")
    }

    @Test(arguments: ["\u{0B}", "\u{0C}", "\u{A0}", "\u{2028}"])
    func otherWhitespaceIsNot(_ space: String) {
        #expect(parseError(Array("{\(space)\"a\":1}".utf8))?.code == .badRequest)
    }

    @Test func structuralMistakes() {
        expectRefused(#"{"a":1,}"#, "expected a key in quotes")
        expectRefused(#"{,"a":1}"#, "expected a key in quotes")
        expectRefused(#"{'a':1}"#, "expected a key in quotes", "character '''")
        expectRefused(#"{a:1}"#, "expected a key in quotes")
        expectRefused(#"{"a" 1}"#, "expected ':' after key 'a'")
        expectRefused(#"{"a":1 "b":2}"#, "expected ',' or '}'")
        expectRefused(#"{"a":[1 2]}"#, "expected ',' or ']'", "field 'a'")
        expectRefused(#"{"a":[1,]}"#, "unexpected character ']'", "field 'a'")
        expectRefused(#"{"a":[,1]}"#, "unexpected character ','", "field 'a'")
        expectRefused(#"{"a":}"#, "unexpected character '}'", "field 'a'")
        expectRefused(#"{"a":1/*c*/}"#, "expected ',' or '}'")
        expectRefused(#"{"a":'x'}"#, "unexpected character '''", "field 'a'")
        expectRefused(#"{"a":[}"#, "unexpected character '}'", "field 'a'")
        expectRefused(#"{"a":{]}"#, "expected a key in quotes", "field 'a'")
        expectRefused(
            Array(#"{"a":1,"#.utf8) + [0] + Array(#""b":2}"#.utf8), ["expected a key in quotes", "byte 0x00"])
    }

    @Test func everyPrefixOfAValidRequestIsRefusedCleanly() throws {
        let text = Array(
            #"{"id":12,"op":"relic.create","text":"h\u00e9\n😀","radius":1.5e2,"o":{"a":[true,false,null]}}"#.utf8)
        #expect(parseError(text) == nil)
        for length in 0..<text.count {
            let error = parseError(Array(text[0..<length]))
            #expect(error?.code == .badRequest, "prefix \(length)")
        }
    }
}
