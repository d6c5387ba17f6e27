import Testing

// A connection's latest-wins slots: one pending object per key, a later one replacing it in place, in the order
// keys first appeared; dropping a key; many keys (past the linear scan, with the index) behave the same.
@testable import CairnServer

@Suite(.timeLimit(.minutes(5)))
struct LatestSlotsTests {
    private func drained(_ slots: inout LatestSlots) -> [(String, UInt64)] {
        var out: [(String, UInt64)] = []
        slots.drain { out.append((String(decoding: $0, as: UTF8.self), $1)) }
        return out
    }

    @Test func aLaterObjectReplacesThePendingOneInItsPlace() {
        var slots = LatestSlots()
        slots.set(7, Array("a1".utf8), receivedAt: 1)
        slots.set(3, Array("b1".utf8), receivedAt: 2)
        slots.set(7, Array("a2".utf8), receivedAt: 3)
        #expect(slots.count == 2)
        #expect(slots.keys == [7, 3])
        #expect(slots.pendingBytes == 6)
        let out = drained(&slots)
        #expect(out.map(\.0) == ["a2", "b1"])
        #expect(out.map(\.1) == [3, 2])
        #expect(slots.isEmpty)
        #expect(drained(&slots).isEmpty)
    }

    @Test func dropsOneKeyAndKeepsTheOthersInOrder() {
        var slots = LatestSlots()
        for key in Int64(1)...4 { slots.set(key, Array("\(key)".utf8), receivedAt: UInt64(key)) }
        slots.remove(2)
        slots.remove(9)  // nothing there: nothing changes
        #expect(slots[2] == nil)
        #expect(slots.keys == [1, 3, 4])
        slots.set(2, Array("2b".utf8), receivedAt: 5)
        #expect(drained(&slots).map(\.0) == ["1", "3", "4", "2b"])
    }

    @Test(arguments: [2, LatestSlots.linearLimit + 4])
    func sharesTheBytesItIsGivenWithoutChangingThem(keys: Int) {
        var slots = LatestSlots()
        let encoded = Array(#"{"ev":"pos"}"#.utf8)
        let base = address(of: encoded)
        for key in 1...Int64(keys) { slots.set(key, encoded, receivedAt: 0) }
        // The very buffer it was given, not a copy: while pending, and when handed out.
        for key in 1...Int64(keys) {
            #expect(slots[key].map(address(of:)) == base)
            #expect(slots[key] == encoded)
        }
        var handed: [UInt] = []
        slots.drain { bytes, _ in handed.append(address(of: bytes)) }
        #expect(handed == Array(repeating: base, count: keys))
        #expect(encoded == Array(#"{"ev":"pos"}"#.utf8))
    }

    private func address(of bytes: [UInt8]) -> UInt {
        bytes.withUnsafeBufferPointer { UInt(bitPattern: $0.baseAddress) }
    }

    @Test(arguments: [LatestSlots.linearLimit, LatestSlots.linearLimit + 1, 500])
    func manyKeysKeepOneObjectEachInOrder(keys: Int) {
        var slots = LatestSlots()
        // Keys arrive out of numeric order, each twice; the second object wins and the first order stays.
        let order = (0..<keys).map { Int64(($0 * 7919) % keys) - Int64(keys / 2) }
        for key in order { slots.set(key, Array("\(key)a".utf8), receivedAt: 1) }
        for key in order.reversed() { slots.set(key, Array("\(key)b".utf8), receivedAt: 2) }
        #expect(slots.count == keys)
        #expect(slots.isIndexed == (keys > LatestSlots.linearLimit))
        // Drop every third key, then look each one up.
        for (i, key) in order.enumerated() where i % 3 == 0 { slots.remove(key) }
        for (i, key) in order.enumerated() {
            #expect(slots[key] == (i % 3 == 0 ? nil : Array("\(key)b".utf8)))
        }
        let kept = order.enumerated().filter { $0.offset % 3 != 0 }.map(\.element)
        #expect(slots.keys == kept)
        // A dropped key comes back at the end; a kept one is replaced in place.
        slots.set(order[0], Array("back".utf8), receivedAt: 3)
        if let first = kept.first { slots.set(first, Array("again".utf8), receivedAt: 4) }
        let out = drained(&slots)
        #expect(out.count == kept.count + 1)
        #expect(out.last?.0 == "back")
        if !kept.isEmpty { #expect(out.first?.0 == "again") }
        #expect(out.map(\.1).filter { $0 == 2 }.count == max(0, kept.count - 1))
        #expect(slots.isEmpty)
        // Used again after the drain, look-ups still find what is set.
        slots.set(order[1], Array("x".utf8), receivedAt: 5)
        slots.set(order[1], Array("y".utf8), receivedAt: 6)
        #expect(slots.count == 1 && slots[order[1]] == Array("y".utf8))
    }

    // Dropping keys one by one (a bucket unwatched, access lost, a session ending) costs work in proportion to the
    // keys dropped, whatever the order: no shifting every later slot, no rewriting the index behind each one.
    @Test(arguments: [2_000, 20_000])
    func droppingManyKeysCostsWorkInProportion(keys: Int) {
        let orders: [[Int64]] = [
            (0..<Int64(keys)).map { $0 },  // first to last: every drop was in front of all the others
            (0..<Int64(keys)).reversed(),
            (0..<Int64(keys)).map { ($0 * 7919) % Int64(keys) },
        ]
        for order in orders {
            var slots = LatestSlots()
            for key in 0..<Int64(keys) { slots.set(key, Array("\(key)".utf8), receivedAt: 0) }
            let before = slots.dropWork
            for (i, key) in order.enumerated() {
                slots.remove(key)
                if i == keys / 2 {
                    // Half-way, what is left is intact and in order.
                    let left = Set(order[(i + 1)...])
                    #expect(slots.keys == (0..<Int64(keys)).filter { left.contains($0) })
                    #expect(slots.count == left.count)
                }
            }
            #expect(slots.isEmpty && slots.keys.isEmpty && slots.pendingBytes == 0)
            let work = slots.dropWork - before
            #expect(work <= 4 * keys, "dropping \(keys) keys cost \(work) moves and index writes")
        }
    }

    // Sets, drops, sets again of the same keys and drains, in any mix, give what a plain ordered list gives: one
    // object per key, in the order keys first appeared since the last drain (a key dropped and set again counts
    // from its new appearance). Key pools below and well above the linear limit, so both ways of finding a key and
    // the compaction of dropped slots are exercised.
    @Test(arguments: [8, 40, 600])
    func anyMixOfSetDropAndDrainMatchesAnOrderedList(pool: Int) {
        var random = SplitMix(seed: UInt64(pool))
        var slots = LatestSlots()
        var model: [(key: Int64, value: String, at: UInt64)] = []
        for step in 0..<30_000 {
            let key = Int64(random.next() % UInt64(pool))
            let roll = random.next() % 100
            if roll < 55 {
                let value = "\(key)@\(step)"
                slots.set(key, Array(value.utf8), receivedAt: UInt64(step))
                if let i = model.firstIndex(where: { $0.key == key }) {
                    model[i].value = value
                    model[i].at = UInt64(step)
                } else {
                    model.append((key, value, UInt64(step)))
                }
            } else if roll < 99 {
                slots.remove(key)
                model.removeAll { $0.key == key }
            } else {
                let out = drained(&slots)
                #expect(out.map(\.0) == model.map(\.value))
                #expect(out.map(\.1) == model.map(\.at))
                model.removeAll()
            }
            #expect(slots.count == model.count)
            #expect(slots.isEmpty == model.isEmpty)
            #expect(slots[key].map { String(decoding: $0, as: UTF8.self) } == model.first { $0.key == key }?.value)
            if step % 97 == 0 {
                #expect(slots.keys == model.map(\.key))
                #expect(slots.pendingBytes == model.reduce(0) { $0 + $1.value.utf8.count + 1 })
            }
        }
        #expect(drained(&slots).map(\.0) == model.map(\.value))
    }

    // A burst of keys, all dropped again: the room they took is given back then, since no drain may follow.
    @Test func givesBackTheRoomOfABurstWhenEverythingIsDropped() {
        var slots = LatestSlots()
        for key in Int64(0)..<10_000 { slots.set(key, [0x31], receivedAt: 0) }
        for key in (Int64(0)..<10_000).reversed() { slots.remove(key) }
        #expect(slots.isEmpty)
        #expect(slots.capacity <= LatestSlots.retainedCapacity)
        #expect(!slots.isIndexed)
    }

    // A burst mostly dropped before the drain: the drain gives back the room, by what the array holds, not by how
    // many keys happened to be left; a drain of few keys goes back to the linear scan.
    @Test func aDrainAfterABurstKeepsNoLargeRoomNorTheIndex() {
        var slots = LatestSlots()
        for key in Int64(0)..<10_000 { slots.set(key, [0x31], receivedAt: 0) }
        for key in (Int64(5)..<10_000).reversed() { slots.remove(key) }
        #expect(drained(&slots).count == 5)
        #expect(slots.capacity <= LatestSlots.retainedCapacity)
        #expect(!slots.isIndexed)

        // Just past the limit the index stays across a drain (the viewer is likely to come back with as many)...
        for key in Int64(0)...Int64(LatestSlots.linearLimit) { slots.set(key, [0x31], receivedAt: 0) }
        #expect(slots.isIndexed)
        #expect(drained(&slots).count == LatestSlots.linearLimit + 1)
        #expect(slots.isIndexed)
        // ...and a drain of a few keys drops it.
        for key in Int64(0)..<3 { slots.set(key, [0x31], receivedAt: 0) }
        #expect(drained(&slots).count == 3)
        #expect(!slots.isIndexed)
        slots.set(9, [0x32], receivedAt: 0)
        #expect(slots[9] == [0x32] && slots.keys == [9])
    }
}

/// A small deterministic generator (SplitMix64), so a failing mix can be replayed.
private struct SplitMix {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
