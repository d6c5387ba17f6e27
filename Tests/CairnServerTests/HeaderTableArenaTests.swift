import Glibc
import Testing

// lws' header tables in pages of their own: the two header-table reasons get slots of the region, everything else
// goes to malloc, a freed slot's page goes back to the kernel once enough are kept at hand, a full region falls back
// to malloc, and growing a slot past a page moves it out with its bytes.
@testable import CairnServer

@Suite(.timeLimit(.minutes(5)))
struct HeaderTableArenaTests {
    private func arena(capacity: Int = 8, keepResident: Int = 0) throws -> HeaderTableArena {
        try #require(HeaderTableArena(capacity: capacity, keepResident: keepResident))
    }

    @Test func headerTablesTakeSlotsAndEverythingElseGoesToMalloc() throws {
        let arena = try arena()
        let data = try #require(arena.reallocate(nil, 4096, "ah data"))
        let table = try #require(arena.reallocate(nil, 900, "ah struct"))
        let other = try #require(arena.reallocate(nil, 900, "new server wsi"))
        #expect(arena.owns(data))
        #expect(arena.owns(table))
        #expect(!arena.owns(other))
        #expect(arena.inUse == 2)
        #expect(arena.reallocate(data, 0, "lws_free") == nil)
        #expect(arena.reallocate(table, 0, "lws_free") == nil)
        #expect(arena.reallocate(other, 0, "lws_free") == nil)
        #expect(arena.inUse == 0)
    }

    @Test func aFreedSlotPastThoseKeptAtHandGoesBackToTheKernel() throws {
        let arena = try arena(keepResident: 1)
        let kept = try #require(arena.reallocate(nil, 4096, "ah data"))
        let released = try #require(arena.reallocate(nil, 4096, "ah data"))
        memset(kept, 0x5A, 4096)
        memset(released, 0x5A, 4096)
        _ = arena.reallocate(kept, 0, "lws_free")
        _ = arena.reallocate(released, 0, "lws_free")
        #expect(arena.residentFree == 1)
        // The page kept at hand still holds what was written; the one given back reads as a fresh zero page.
        let again = try #require(arena.reallocate(nil, 4096, "ah data"))
        #expect(again == kept)
        #expect(again.load(fromByteOffset: 100, as: UInt8.self) == 0x5A)
        let fresh = try #require(arena.reallocate(nil, 4096, "ah data"))
        #expect(fresh == released)
        #expect((0..<4096).allSatisfy { fresh.load(fromByteOffset: $0, as: UInt8.self) == 0 })
        _ = arena.reallocate(again, 0, "lws_free")
        _ = arena.reallocate(fresh, 0, "lws_free")
    }

    @Test func aFullRegionFallsBackToMalloc() throws {
        let arena = try arena(capacity: 2)
        let first = try #require(arena.reallocate(nil, 4096, "ah data"))
        let second = try #require(arena.reallocate(nil, 4096, "ah data"))
        let third = try #require(arena.reallocate(nil, 4096, "ah data"))
        #expect(arena.owns(first) && arena.owns(second))
        #expect(!arena.owns(third))
        #expect(arena.inUse == 2)
        for pointer in [first, second, third] { _ = arena.reallocate(pointer, 0, "lws_free") }
        #expect(arena.inUse == 0)
    }

    @Test func aTableLargerThanAPageIsNotPutInASlot() throws {
        let arena = try arena()
        let big = try #require(arena.reallocate(nil, arena.slotBytes + 1, "ah data"))
        #expect(!arena.owns(big))
        _ = arena.reallocate(big, 0, "lws_free")
    }

    @Test func growingASlotPastAPageMovesItToMallocWithItsBytes() throws {
        let arena = try arena()
        let slot = try #require(arena.reallocate(nil, 64, "ah struct"))
        memset(slot, 0x33, 64)
        #expect(arena.reallocate(slot, 128, "ah struct") == slot)
        let moved = try #require(arena.reallocate(slot, arena.slotBytes * 2, "ah struct"))
        #expect(!arena.owns(moved))
        #expect((0..<64).allSatisfy { moved.load(fromByteOffset: $0, as: UInt8.self) == 0x33 })
        #expect(arena.inUse == 0)
        _ = arena.reallocate(moved, 0, "lws_free")
    }
}
