// The place-file parsers: CSV with quoted fields (commas, doubled quotes, line breaks inside), CRLF and a byte
// order mark, every bad row named by the line it starts on; typed attributes; GeoJSON point features with ids,
// properties and bad features named by line; documents that are not what they should be.
import Testing

@testable import CairnApp

@Suite(.timeLimit(.minutes(5)))
struct PlaceFileParserTests {
    @Test func csvRowsAttributesAndBadLines() {
        let text =
            "\u{FEFF}Latitude,Longitude,Name,Category,ID,elevation,zip,note\r\n"
            + "46.02,7.75,Zermatt,ski_area,z,1620,03920,\"a \"\"quoted\"\", note\"\r\n"
            + "45.0,6.1,\"Les 2\nAlpes\",,l2,1650.5,,\r\n"
            + "bad,1,X,,,,,\r\n" + "1,200,Y,,,,,\r\n" + "1,2,,,,,,\r\n" + "1,2,Short\r\n" + "\r\n"
            + "\"open,1,2,Z,,,,\n"
        let parsed = PlaceCSV.parse(Array(text.utf8))
        #expect(parsed.places.count == 2)
        let z = parsed.places[0]
        #expect(z.line == 2 && z.name == "Zermatt" && z.category == "ski_area" && z.externalID == "z")
        #expect(z.attributes.map(\.name) == ["elevation", "zip", "note"])
        #expect(z.attributes[0].value == .number(1620) && z.attributes[1].value == .text("03920"))
        #expect(z.attributes[2].value == .text("a \"quoted\", note"))
        #expect(parsed.places[1].line == 3 && parsed.places[1].name == "Les 2\nAlpes")
        #expect(parsed.places[1].category == nil)
        #expect(
            parsed.problems.map(\.description) == [
                "line 5: lat 'bad' is not a number", "line 6: lon 200 is out of range [-180, 180]",
                "line 7: name is empty", "line 8: 3 columns where the header has 8",
                "line 10: a quoted field is not closed",
            ])
    }

    @Test func csvWithoutTheColumnsIsOneProblem() {
        let parsed = PlaceCSV.parse(Array("name,x,y\nA,1,2\n".utf8))
        #expect(parsed.places.isEmpty)
        #expect(parsed.problems.map(\.description) == ["line 1: the header must name the columns lat, lon and name"])
        #expect(PlaceCSV.parse([]).problems.count == 1)
    }

    @Test func geoJSONPointsAndBadFeatures() {
        let text = """
            {"type": "FeatureCollection", "features": [
              {"type": "Feature", "id": 17, "geometry": {"type": "Point", "coordinates": [7.75, 46.02, 1620]},
               "properties": {"name": "Zerm\\u00e4tt", "category": "ski_area", "lifts": 52, "open": true,
                              "nested": {"a": 1}, "none": null}},
              {"type": "Feature", "geometry": {"type": "Point", "coordinates": [7.0]}, "properties": {"name": "A"}},
              {"type": "Feature", "geometry": {"type": "Point", "coordinates": [7, 95]}, "properties": {"name": "B"}},
              {"type": "Feature", "geometry": {"type": "Point", "coordinates": [7, 45]}, "properties": {}}
            ]}
            """
        let parsed = PlaceGeoJSON.parse(Array(text.utf8))
        #expect(parsed.places.count == 1)
        let z = parsed.places[0]
        #expect(z.name == "Zermätt" && z.externalID == "17" && z.category == "ski_area" && z.line == 2)
        #expect(z.lat == 46.02 && z.lon == 7.75)
        #expect(z.attributes.map(\.name) == ["lifts", "open"])
        #expect(
            parsed.problems.map(\.description) == [
                "line 5: the point's coordinates are not [lon, lat]", "line 6: lat 95.0 is out of range [-90, 90]",
                "line 7: the feature has no 'name' property",
            ])
    }

    @Test func documentsThatAreNotGeoJSON() {
        #expect(
            PlaceGeoJSON.parse(Array("{\"type\": \"Feature\"".utf8)).problems.first?.reason.hasPrefix("not JSON")
                == true)
        #expect(PlaceGeoJSON.parse(Array("[1,2]".utf8)).problems.count == 1)
        let deep = String(repeating: "[", count: 10_000)
        #expect(PlaceGeoJSON.parse(Array(deep.utf8)).problems.first?.reason.contains("nested deeper") == true)
        #expect(PlaceGeoJSON.parse(Array("{\"a\": \"\\ud800\"}".utf8)).problems.count == 1)
    }
}
