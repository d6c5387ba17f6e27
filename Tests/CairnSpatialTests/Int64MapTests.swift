// Int64Map against Dictionary under random inserts, updates and removals, with keys chosen to collide (keys that
// differ only in their top bits share a few home buckets, so probe runs grow long and wrap past the end of the
// table): backward-shift deletion must keep every key reachable.

import Testing

@testable import CairnSpatial

@Suite(.timeLimit(.minutes(5)))
struct Int64MapTests {
    @Test func emptyMapFindsNothing() {
        var map = Int64Map()
        #expect(map[0] == nil && map[Int64.min] == nil)
        #expect(map.removeValue(forKey: 5) == nil)
        #expect(map.count == 0 && map.bucketCount == 0)
    }

    @Test func setUpdatesInPlace() {
        var map = Int64Map()
        map.set(Int64.min, 1)
        map.set(Int64.max, 2)
        map.set(Int64.min, 3)
        #expect(map.count == 2)
        #expect(map[Int64.min] == 3 && map[Int64.max] == 2)
    }

    @Test(arguments: [(UInt64(1), Int64(40)), (2, 400), (3, 5_000), (4, 1 << 40)])
    func randomOperationsMatchDictionary(seed: UInt64, keySpread: Int64) {
        var rng = SeededGenerator(seed: seed)
        var map = Int64Map()
        var reference: [Int64: UInt64] = [:]
        for step in 0..<20_000 {
            // Keys from a small range, multiples of 2^32 like cell keys, or differing only in the top 7 bits.
            let key: Int64
            switch Int.random(in: 0..<3, using: &rng) {
            case 0: key = Int64.random(in: -keySpread...keySpread, using: &rng)
            case 1: key = Int64.random(in: 0...keySpread, using: &rng) << 32
            default: key = Int64.random(in: -64..<64, using: &rng) << 56
            }
            if Int.random(in: 0..<5, using: &rng) < 3 {
                let value = UInt64.random(in: 0..<UInt64.max, using: &rng)
                map.set(key, value)
                reference[key] = value
            } else {
                let removed = map.removeValue(forKey: key)
                #expect(removed == reference.removeValue(forKey: key), "step \(step) key \(key)")
            }
            #expect(map.count == reference.count)
            if step % 100 == 0 {
                for (key, value) in reference { #expect(map[key] == value, "step \(step) key \(key)") }
            }
        }
        for (key, value) in reference { #expect(map[key] == value) }
        #expect(map.bucketCount * 3 >= map.count * 4)
    }

    @Test func reserveCapacityAvoidsGrowth() {
        var map = Int64Map()
        map.reserveCapacity(1_000)
        let buckets = map.bucketCount
        for key in Int64(0)..<1_000 { map.set(key, UInt64(key)) }
        #expect(map.bucketCount == buckets)
        for key in Int64(0)..<1_000 { #expect(map[key] == UInt64(key)) }
    }
}
