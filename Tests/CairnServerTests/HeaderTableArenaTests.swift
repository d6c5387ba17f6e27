import CairnTestSupport
import Foundation
import Glibc
import Synchronization
import Testing

// lws' header tables in pages of their own: the two header-table reasons get slots of the region, everything else
// goes to malloc, a freed slot's page goes back to the kernel once enough are kept at hand, a full region falls back
// to malloc, growing a slot past a page moves it out with its bytes, and a real server's handshakes take their tables
// from the arena lws was given.
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

    @Test func freedSlotsBeyondThoseKeptAtHandGoBackToTheKernelWhenReleased() throws {
        let arena = try arena(keepResident: 1)
        let kept = try #require(arena.reallocate(nil, 4096, "ah data"))
        let released = try #require(arena.reallocate(nil, 4096, "ah data"))
        memset(kept, 0x5A, 4096)
        memset(released, 0x5A, 4096)
        _ = arena.reallocate(kept, 0, "lws_free")
        _ = arena.reallocate(released, 0, "lws_free")
        // Freeing costs no system call: both pages are still resident until the excess is released.
        #expect(arena.residentFree == 2)
        #expect(arena.releaseExcess() == 1)
        #expect(arena.residentFree == 1)
        #expect(arena.releaseExcess() == 0)
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

    @Test func aSlotInUseIsNeverReleasedWhileThreadsAllocateFreeAndRelease() throws {
        let arena = try arena(capacity: 64, keepResident: 2)
        // Four threads of their own (not the cooperative pool, which has one per core): each takes a slot, fills it,
        // releases the excess of the free slots, checks that its slot still holds what it wrote, and frees it. Each
        // counts the pages it found changed while it held them.
        let damaged = Mutex(0)
        let done = DispatchGroup()
        for worker in 0..<4 {
            done.enter()
            Thread.detachNewThread {
                let mark = UInt8(0x10 + worker)
                var found = 0
                for _ in 0..<20_000 {
                    guard let slot = arena.reallocate(nil, 4096, "ah data") else { continue }
                    memset(slot, Int32(mark), 4096)
                    if worker == 0 { _ = arena.releaseExcess() }
                    if slot.load(fromByteOffset: 0, as: UInt8.self) != mark
                        || slot.load(fromByteOffset: 4095, as: UInt8.self) != mark
                    {
                        found += 1
                    }
                    _ = arena.reallocate(slot, 0, "lws_free")
                }
                damaged.withLock { $0 += found }
                done.leave()
            }
        }
        done.wait()
        #expect(damaged.withLock { $0 } == 0)
        #expect(arena.inUse == 0)
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

    @Test func aServersHandshakeTakesItsHeaderTableFromTheArena() throws {
        let loop = ServiceLoop()
        var configuration = ServerConfiguration()
        configuration.port = 0
        configuration.lwsLogVerbosity = 0
        let server = TransportServer(
            configuration: configuration, loop: loop, handler: EchoHandler(confinement: loop.confinement),
            observer: CountingObserver())
        let port = try server.start()
        defer {
            server.requestShutdown()
            server.waitUntilStopped()
        }
        let arena = try #require(HeaderTableArena.forLws)
        let before = arena.handedOut
        let client = try WebSocketClient(port: port, timeout: 10)
        try client.sendText("hello")
        #expect(try client.receive(timeout: 10) == .text("hello"))
        client.close()
        // The table's struct and its buffer.
        #expect(arena.handedOut - before >= 2)
    }
}
