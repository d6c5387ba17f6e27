import Testing

// A connection's latest-wins slots: one pending object per key, a later one replacing it in place, in the order
// keys first appeared; dropping a key; many keys (past the linear scan, with the index) behave the same.
@testable import CairnServer

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

    @Test func sharesTheBytesItIsGivenWithoutChangingThem() {
        var slots = LatestSlots()
        let encoded = Array(#"{"ev":"pos"}"#.utf8)
        slots.set(1, encoded, receivedAt: 0)
        slots.set(2, encoded, receivedAt: 0)
        #expect(slots[1] == encoded && slots[2] == encoded)
        #expect(drained(&slots).map(\.0) == [#"{"ev":"pos"}"#, #"{"ev":"pos"}"#])
        #expect(encoded == Array(#"{"ev":"pos"}"#.utf8))
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
}
