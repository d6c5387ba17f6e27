import CairnGeo
import Testing

// The places catalog against brute force while it changes: random upserts (new places, moves, category changes),
// removals and rebuilds interleaved with nearest queries (with and without category and radius) and name
// searches; every answer must equal the brute-force one over the places as they are now. And name folding.
@testable import CairnPlaces

@Suite(.timeLimit(.minutes(5)))
struct PlaceCatalogTests {
    struct Generator: RandomNumberGenerator {
        var state: UInt64
        mutating func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
    }

    static let categories = ["ski_area", "peak", "city"]
    static let words = ["Alp", "Zer", "Mont", "Val", "Éco", "Öst", "alp"]

    func randomPlace(_ id: Int64, _ g: inout Generator) -> PlaceSummary {
        let lat = Double.random(in: -90...90, using: &g)
        let lon =
            Bool.random(using: &g) ? Double.random(in: -180...180, using: &g) : 180 - .random(in: 0...1, using: &g)
        let name = Self.words.randomElement(using: &g)! + " \(Int.random(in: 0..<50, using: &g))"
        return PlaceSummary(
            id: id, name: name, category: Self.categories.randomElement(using: &g)!, lat: lat, lon: lon)!
    }

    func brute(_ places: [Int64: PlaceSummary], _ k: Int, _ c: GeoPoint, _ category: String?, _ radius: Double?)
        -> [Int64]
    {
        var found: [(id: Int64, distance: Double)] = []
        for place in places.values where category == nil || place.category == category {
            let distance = c.distance(to: place.point)
            if distance <= (radius ?? .infinity) { found.append((place.id, distance)) }
        }
        found.sort { $0.distance < $1.distance || ($0.distance == $1.distance && $0.id < $1.id) }
        return found.prefix(k).map(\.id)
    }

    @Test func staysEqualToBruteForceThroughChanges() {
        var g = Generator(state: 42)
        var reference: [Int64: PlaceSummary] = [:]
        for id in 1...800 { reference[Int64(id)] = randomPlace(Int64(id), &g) }
        var catalog = PlaceCatalog(Array(reference.values))
        var nextID: Int64 = 801
        for step in 0..<600 {
            switch Int.random(in: 0..<10, using: &g) {
            case 0..<3:
                let id = Bool.random(using: &g) ? nextID : Int64.random(in: 1..<nextID, using: &g)
                if id == nextID { nextID += 1 }
                let place = randomPlace(id, &g)
                reference[id] = place
                catalog.upsert(place)
            case 3:
                let id = Int64.random(in: 1..<nextID, using: &g)
                let removed = catalog.remove(id)
                #expect(removed == (reference.removeValue(forKey: id) != nil))
            case 4 where step % 50 == 0:
                catalog = PlaceCatalog(catalog.allSummaries())
            default:
                let center = randomPlace(0, &g).point
                let k = Int.random(in: 1...30, using: &g)
                let category = Bool.random(using: &g) ? Self.categories.randomElement(using: &g) : nil
                let radius = Bool.random(using: &g) ? Double.random(in: 0...3_000_000, using: &g) : nil
                let found = catalog.nearest(k, to: center, category: category, radius: radius).map(\.place.id)
                #expect(found == brute(reference, k, center, category, radius), "step \(step)")
                let word = Self.words.randomElement(using: &g)!
                let folded = NameFold.fold(word)
                var matches: [(name: String, id: Int64)] = []
                for place in reference.values {
                    let name = NameFold.fold(place.name)
                    if name.hasPrefix(folded) { matches.append((name, place.id)) }
                }
                matches.sort { $0.name < $1.name || ($0.name == $1.name && $0.id < $1.id) }
                let expected = matches.prefix(10).map(\.id)
                #expect(catalog.search(word, limit: 10).map(\.id) == Array(expected), "search \(word) step \(step)")
            }
        }
        #expect(catalog.count == reference.count)
    }

    @Test func keepsEachPlaceWholeWithItsWireFormThroughChanges() {
        let render: PlaceWireForm = { Array("\($0.id)|\($0.name)|\($0.category)|\($0.lat)|\($0.lon)".utf8) }
        var g = Generator(state: 7)
        var reference: [Int64: PlaceSummary] = [:]
        for id in 1...300 { reference[Int64(id)] = randomPlace(Int64(id), &g) }
        let shadowed = randomPlace(5, &g)  // the same id given twice: the later one stays
        var catalog = PlaceCatalog([shadowed] + reference.values.shuffled(using: &g), wireForm: render)
        for _ in 0..<40 {
            let id = Int64.random(in: 1...320, using: &g)
            if Bool.random(using: &g) {
                reference[id] = randomPlace(id, &g)
                catalog.upsert(reference[id]!)
            } else {
                #expect(catalog.remove(id) == (reference.removeValue(forKey: id) != nil))
            }
        }
        let found = catalog.nearest(400, to: GeoPoint(lat: 10, lon: 10)!, category: nil, radius: nil)
        #expect(found.count == reference.count && catalog.count == reference.count)
        for i in found.indices {
            let place = found[i].place
            #expect(place == reference[place.id])
            var wire: [UInt8] = []
            #expect(found.withWire(at: i) { wire = Array($0) })
            #expect(wire == render(place))
        }
        #expect(catalog.categoryCounts == Dictionary(grouping: reference.values, by: \.category).mapValues(\.count))
        #expect(Set(catalog.allSummaries().map(\.id)) == Set(reference.keys))
        let plain = PlaceCatalog(Array(reference.values))
        let some = plain.nearest(3, to: GeoPoint(lat: 0, lon: 0)!, category: nil, radius: nil)
        #expect(!some.withWire(at: 0) { _ in })
        #expect(plain.nearest(3, to: GeoPoint(lat: 0, lon: 0)!, category: "none", radius: nil).isEmpty)
    }

    @Test func foldingDropsAccentsAndCase() {
        #expect(NameFold.fold("Val d'Isère") == "val d'isere")
        #expect(NameFold.fold("  ZÜRICH   Flughafen ") == "zurich flughafen")
        #expect(NameFold.fold("Łódź") == "lodz")
        #expect(NameFold.fold("Cafe\u{301}") == "cafe")  // decomposed
        #expect(NameFold.fold("Ærøskøbing") == "aeroskobing")
        #expect(NameFold.fold("Σίφνος") == "σιφνοσ")  // Greek accents and the final sigma
    }
}
