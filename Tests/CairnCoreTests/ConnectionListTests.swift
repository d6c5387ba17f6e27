import Testing

// A user's connections, one kept inline: adding and removing keep the order they were added in, a list never holds
// nothing (the last removal leaves no list), and removing an id that is not there changes nothing.
@testable import CairnLoop

@Suite(.timeLimit(.minutes(5)))
struct ConnectionListTests {
    @Test func addingAndRemovingKeepTheOrderAndTheLastRemovalLeavesNoList() {
        var list: ConnectionList? = nil
        list.add(7)
        #expect(list == .one(7))
        list.add(3)
        list.add(9)
        #expect(list.map(Array.init) == [7, 3, 9])
        list.remove(3)
        #expect(list.map(Array.init) == [7, 9])
        list.remove(7)
        #expect(list == .one(9))
        list.remove(9)
        #expect(list == nil)
    }

    @Test func removingAnIdThatIsNotThereChangesNothing() {
        var list: ConnectionList? = .one(1)
        list.remove(2)
        #expect(list == .one(1))
        list.add(5)
        list.remove(6)
        #expect(list.map(Array.init) == [1, 5])
        var none: ConnectionList? = nil
        none.remove(1)
        #expect(none == nil)
    }

    @Test func readsLikeAnArray() {
        let list = ConnectionList.one(4).adding(8).adding(15)
        #expect(list.count == 3)
        #expect(list[1] == 8)
        #expect(list.contains(15))
        #expect(ConnectionList.one(4).count == 1)
        #expect(ConnectionList.one(4).first == 4)
    }
}
