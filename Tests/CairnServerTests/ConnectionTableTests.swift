import CairnLoop
import Testing

// The transport's table of connections by dense id: ids encode a slot and its generation, a freed slot is reused
// under a new generation, and an id kept past its connection's close never finds the connection that took the slot.
@testable import CairnServer

@Suite(.timeLimit(.minutes(5)))
struct ConnectionTableTests {
    /// Never dereferenced: the table does not reach lws.
    private static var wsi: OpaquePointer { OpaquePointer(bitPattern: 0x1000)! }

    private func open(_ table: inout ConnectionTable) -> ConnectionState {
        table.insert { ConnectionState(id: $0, wsi: Self.wsi) }
    }

    @Test func findsEachOpenConnectionByItsId() {
        var table = ConnectionTable()
        let states = (0..<5).map { _ in open(&table) }
        #expect(table.count == 5)
        #expect(Set(states.map(\.id)).count == 5)
        #expect(!states.contains { $0.id == 0 })
        for state in states { #expect(table[state.id] === state) }
        #expect(table[0] == nil)
        #expect(table[UInt64.max] == nil)
    }

    @Test func aStaleIdDoesNotReachTheConnectionThatReusedItsSlot() {
        var table = ConnectionTable()
        let first = open(&table)
        _ = open(&table)
        #expect(table.remove(first.id) === first)
        #expect(table[first.id] == nil)
        let reused = open(&table)
        // The freed slot is taken again (no new slot), under another id.
        #expect(table.slotCount == 2)
        #expect(ConnectionTable.index(of: reused.id) == ConnectionTable.index(of: first.id))
        #expect(reused.id != first.id)
        #expect(table[reused.id] === reused)
        #expect(table[first.id] == nil)
        // Removing by the stale id changes nothing.
        #expect(table.remove(first.id) == nil)
        #expect(table[reused.id] === reused)
        #expect(table.count == 2)
    }

    @Test func removesOnlyOnceAndCountsOpenConnections() {
        var table = ConnectionTable()
        let a = open(&table)
        let b = open(&table)
        #expect(table.remove(a.id) === a)
        #expect(table.remove(a.id) == nil)
        #expect(table.count == 1)
        #expect(table.map(\.id) == [b.id])
        #expect(table.remove(b.id) === b)
        #expect(table.isEmpty)
    }

    @Test func neverHandsOutAnIdTwice() {
        var table = ConnectionTable()
        var ids: Set<ConnectionID> = []
        var open: [ConnectionState] = []
        for round in 0..<200 {
            open.append(self.open(&table))
            #expect(ids.insert(open.last!.id).inserted)
            if round % 3 != 0, let gone = open.popLast() { #expect(table.remove(gone.id) === gone) }
            if round % 7 == 0, !open.isEmpty { #expect(table.remove(open.removeFirst().id) != nil) }
        }
        for state in open { #expect(table[state.id] === state) }
        #expect(table.count == open.count)
        // Walking the table gives exactly the open connections, in slot order.
        #expect(Set(table.map(\.id)) == Set(open.map(\.id)))
        let slots = table.map { ConnectionTable.index(of: $0.id) }
        #expect(slots == slots.sorted())
    }

    @Test func aSlotWhoseGenerationWouldWrapIsRetired() {
        var table = ConnectionTable(firstGeneration: UInt32.max)
        let last = open(&table)
        #expect(ConnectionTable.generation(of: last.id) == UInt32.max)
        #expect(table.remove(last.id) === last)
        // Generation 0 is never used: the slot is not reused, a new one is made.
        let next = open(&table)
        #expect(table.slotCount == 2)
        #expect(ConnectionTable.index(of: next.id) == 1)
        #expect(table[last.id] == nil)
        #expect(table[ConnectionTable.id(index: 0, generation: 0)] == nil)
    }
}
