// Arrays in a parsed message (`Message+Arrays`): the elements of an array of objects, each a message of its own, and
// an array of numbers — split correctly around strings holding commas, brackets and escaped quotes, and around nested
// arrays; any element of the wrong kind refuses the whole array with bad_request naming the field.

import CairnErrorCodes
import Testing

@testable import CairnWire

@Suite(.timeLimit(.minutes(5)))
struct MessageArrayTests {
    func message(_ text: String) throws -> Message {
        var m = Message()
        try m.parse(Array(text.utf8))
        return m
    }

    @Test func objectsAreSplitAroundStringsAndNestedArrays() throws {
        let m = try message(
            #"{"locations":[ {"a":"x,}]\"{","b":[1,[2,3]]} ,{"a":"y"},{} ],"n":[-1.5, 2e3 ,0],"e":[],"z":null}"#)
        let objects = try #require(try m.objects("locations"))
        #expect(objects.count == 3)
        #expect(try objects[0].string("a") == #"x,}]"{"#)
        #expect(try objects[1].string("a") == "y")
        #expect(objects[2].fieldCount == 0)
        #expect(try m.doubles("n") == [-1.5, 2000, 0])
        #expect(try m.objects("e")?.isEmpty == true)
        #expect(try m.doubles("e") == [])
        #expect(try m.objects("z") == nil && m.doubles("missing") == nil)
    }

    @Test func moreObjectsThanTheLimitAreRefusedBeforeAnyIsParsed() throws {
        let m = try message(#"{"three":[{},{"a":"x,y"},{"b":[{},{}]}],"none":[ ]}"#)
        #expect(try m.objects("three", limit: 3)?.count == 3)
        #expect(try m.objects("none", limit: 0)?.isEmpty == true)
        for limit in [0, 1, 2] {
            #expect(throws: WireError.self) { try m.objects("three", limit: limit) }
        }
        do {
            _ = try m.objects("three", limit: 2)
        } catch {
            #expect(error.code == .badRequest && error.message.contains("more than 2"))
        }
    }

    @Test func anElementOfTheWrongKindRefusesTheArray() throws {
        let m = try message(#"{"o":[{},1],"d":[1,"2"],"s":"[1]","nested":[[1]]}"#)
        for (key, call) in [
            ("o", { try m.objects("o") as Any }), ("d", { try m.doubles("d") as Any }),
            ("s", { try m.doubles("s") as Any }), ("nested", { try m.doubles("nested") as Any }),
            ("d", { try m.objects("d") as Any }),
        ] as [(String, () throws -> Any)] {
            do {
                _ = try call()
                Issue.record("accepted \(key)")
            } catch let error as WireError {
                #expect(error.code == .badRequest && error.message.contains("'\(key)'"), "\(error.message)")
            }
        }
    }
}
