import CairnSeed
import Testing

// Values per connection kept by the id's slot: the map answers like a dictionary whatever the ids (the transport's
// slot-and-generation ids, small literal ones, ids sharing a slot, ids with huge slots), and a stale id never reaches
// the value of the connection that took its slot.
@testable import CairnLoop

@Suite(.timeLimit(.minutes(5)))
struct ConnectionMapTests {
    private func id(slot: UInt64, generation: UInt64) -> ConnectionID { generation << 32 | slot }

    @Test func answersLikeADictionaryThroughARandomRunOfChanges() {
        var map = ConnectionMap<Int>()
        var model: [ConnectionID: Int] = [:]
        var random = SplitMix64(seed: 30)
        let ids: [ConnectionID] =
            (0..<40).map { id(slot: $0 % 20, generation: 1 + $0 / 20) }
            + [0, 7, UInt64.max, id(slot: 1 << 31, generation: 3), id(slot: 1 << 31, generation: 4)]
        for step in 0..<5_000 {
            let key = ids.randomElement(using: &random)!
            switch Int.random(in: 0..<4, using: &random) {
            case 0:
                map[key] = step
                model[key] = step
            case 1:
                #expect(map.removeValue(forKey: key) == model.removeValue(forKey: key))
            case 2:
                map[key]? += 1
                model[key]? += 1
            default:
                let updated = map.update(key) { value in
                    value += 2
                    return value
                }
                #expect(updated == model[key].map { $0 + 2 })
                model[key]? += 2
            }
            #expect(map.count == model.count)
            #expect(map[key] == model[key])
            #expect(map.read(key) { $0 } == model[key])
        }
        #expect(Dictionary(uniqueKeysWithValues: map.map { ($0.key, $0.value) }) == model)
        #expect(map.values.sorted() == model.values.sorted())
    }

    @Test func aStaleIdDoesNotReachTheValueOfTheConnectionThatTookItsSlot() {
        var map = ConnectionMap<String>()
        let old = id(slot: 5, generation: 1)
        let new = id(slot: 5, generation: 2)
        map[old] = "old"
        map[old] = nil
        map[new] = "new"
        #expect(map[old] == nil)
        #expect(map.read(old) { $0 } == nil)
        #expect(map.update(old) { $0 = "changed by a stale id" } == nil)
        #expect(map.removeValue(forKey: old) == nil)
        #expect(map[new] == "new")
        #expect(map.count == 1)
    }

    @Test func twoOpenIdsOnOneSlotAreBothKept() {
        var map = ConnectionMap<Int>()
        let a = id(slot: 3, generation: 1)
        let b = id(slot: 3, generation: 2)
        map[a] = 1
        map[b] = 2
        #expect(map[a] == 1)
        #expect(map[b] == 2)
        #expect(map.count == 2)
        map[a] = nil
        #expect(map[b] == 2)
        #expect(map.count == 1)
    }

    @Test func anIdWithAHugeSlotDoesNotGrowTheArray() {
        var map = ConnectionMap<Int>()
        map[id(slot: 0xFFFF_FFFF, generation: 1)] = 1
        map[2] = 2
        #expect(map.denseCapacity <= 16)
        #expect(map[id(slot: 0xFFFF_FFFF, generation: 1)] == 1)
        #expect(map.count == 2)
    }

    @Test func changesMadeWhileIteratingDoNotDisturbTheIteration() {
        var map = ConnectionMap<Int>()
        for slot in 1...10 { map[id(slot: UInt64(slot), generation: 1)] = slot }
        var seen: [Int] = []
        for (key, value) in map {
            seen.append(value)
            map[key] = nil
            map[id(slot: UInt64(value) + 100, generation: 1)] = value
        }
        #expect(seen == Array(1...10))
        #expect(map.count == 10)
        #expect(map.values.sorted() == Array(1...10))
    }
}
