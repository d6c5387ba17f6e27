// Pages of their own for lws' HTTP header tables. lws gives each connection a header table while it handshakes (a
// struct of about 1 KiB and a 4 KiB buffer) and frees it once the upgrade is done. Taken from malloc, a burst of
// thousands of handshakes (clients reconnecting together) left the tables' memory as holes between the connections'
// long-lived allocations, resident for good: half the heap after 10,000 clients at once (docs/BENCHMARKS.md, "Memory
// per connection"). Capping lws' pool instead would let a few idle sockets keep everyone out (decision 0034).
//
// So every header-table allocation lws makes (by its reason, "ah struct" and "ah data") takes a page of a region
// reserved for them. Freed pages stay resident until the transport's once-a-second sweep hands those beyond a few
// back to the kernel (`MADV_DONTNEED`), contiguous runs in one call each: no system call per handshake, and a page is
// only ever released while no one holds it. Everything else lws allocates goes to malloc as before. lws calls its
// allocator from whichever thread uses it, so the free lists are behind a lock; a full region falls back to malloc.
// With pages larger than 4 KiB a slot would waste most of its page, so there the arena is not installed.
import CLws
import Glibc
import Synchronization

/// A region of page-sized slots for lws' header tables. One instance serves lws (`forLws`); tests make their own.
package final class HeaderTableArena: Sendable {
    /// Bytes per slot: one page.
    package let slotBytes: Int
    /// Slots in the region.
    package let capacity: Int
    /// Free slots kept resident for the next handshakes; `releaseExcess` gives the rest back to the kernel.
    package let keepResident: Int
    private let base: UInt
    private let limit: UInt

    private struct Slots {
        /// Never-used slots start here.
        var fresh = 0
        /// Freed slots still resident, and freed slots handed back to the kernel.
        var warm: [Int32] = []
        var cold: [Int32] = []
        var inUse = 0
        /// Slots ever handed out.
        var handedOut = 0
    }
    private let slots = Mutex(Slots())

    /// Reserves `capacity` pages of address space (no memory until touched); nil when the system refuses.
    package init?(capacity: Int, keepResident: Int) {
        let page = Int(getpagesize())
        guard page > 0, capacity > 0,
            let region = mmap(
                nil, page * capacity, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0),
            region != UnsafeMutableRawPointer(bitPattern: -1)
        else { return nil }
        self.slotBytes = page
        self.capacity = capacity
        self.keepResident = max(0, keepResident)
        self.base = UInt(bitPattern: region)
        self.limit = base + UInt(page * capacity)
    }

    deinit { munmap(UnsafeMutableRawPointer(bitPattern: base), slotBytes * capacity) }

    /// True when `pointer` is one of this region's slots.
    package func owns(_ pointer: UnsafeMutableRawPointer) -> Bool {
        let address = UInt(bitPattern: pointer)
        return address >= base && address < limit
    }

    /// A slot for `bytes` (at most `slotBytes`), or nil when the region is full.
    package func allocate(_ bytes: Int) -> UnsafeMutableRawPointer? {
        guard bytes <= slotBytes else { return nil }
        let index: Int32? = slots.withLock { s in
            let index: Int32
            if let warm = s.warm.popLast() {
                index = warm
            } else if let cold = s.cold.popLast() {
                index = cold
            } else if s.fresh < capacity {
                index = Int32(s.fresh)
                s.fresh += 1
            } else {
                return nil
            }
            s.inUse += 1
            s.handedOut += 1
            return index
        }
        guard let index else { return nil }
        return UnsafeMutableRawPointer(bitPattern: base + UInt(Int(index) * slotBytes))
    }

    /// Gives a slot back. Its page stays resident until `releaseExcess`.
    package func free(_ pointer: UnsafeMutableRawPointer) {
        let index = Int32((UInt(bitPattern: pointer) - base) / UInt(slotBytes))
        slots.withLock { s in
            s.inUse -= 1
            s.warm.append(index)
        }
    }

    /// Hands the pages of free slots beyond `keepResident` back to the kernel; returns how many. The slots are taken
    /// off the free list while they are released, so no one can be given one meanwhile.
    @discardableResult
    package func releaseExcess() -> Int {
        let excess: [Int32] = slots.withLock { s in
            guard s.warm.count > keepResident else { return [] }
            let excess = Array(s.warm[keepResident...])
            s.warm.removeLast(excess.count)
            return excess
        }
        guard !excess.isEmpty else { return 0 }
        let sorted = excess.sorted()
        var start = 0
        while start < sorted.count {
            var end = start + 1
            while end < sorted.count, sorted[end] == sorted[end - 1] + 1 { end += 1 }
            madvise(
                UnsafeMutableRawPointer(bitPattern: base + UInt(Int(sorted[start]) * slotBytes)),
                (end - start) * slotBytes, MADV_DONTNEED)
            start = end
        }
        slots.withLock { $0.cold.append(contentsOf: excess) }
        return excess.count
    }

    /// Slots handed out and not yet freed.
    package var inUse: Int { slots.withLock { $0.inUse } }
    /// Free slots whose pages are still resident.
    package var residentFree: Int { slots.withLock { $0.warm.count } }
    /// Slots ever handed out.
    package var handedOut: Int { slots.withLock { $0.handedOut } }

    /// lws' allocator contract (`lws_set_allocator`): `realloc` semantics, `size` 0 frees; `reason` says what for.
    package func reallocate(_ pointer: UnsafeMutableRawPointer?, _ size: Int, _ reason: UnsafePointer<CChar>?)
        -> UnsafeMutableRawPointer?
    {
        if let pointer, owns(pointer) {
            if size == 0 {
                free(pointer)
                return nil
            }
            if size <= slotBytes { return pointer }
            guard let moved = malloc(size) else { return nil }
            moved.copyMemory(from: pointer, byteCount: slotBytes)
            free(pointer)
            return moved
        }
        if size == 0 {
            Glibc.free(pointer)
            return nil
        }
        if pointer == nil, let reason, Self.isHeaderTable(reason), let slot = allocate(size) { return slot }
        return realloc(pointer, size)
    }

    /// The reasons lws gives for a header table's two allocations (lib/roles/http/parsers.c).
    static func isHeaderTable(_ reason: UnsafePointer<CChar>) -> Bool {
        strcmp(reason, "ah data") == 0 || strcmp(reason, "ah struct") == 0
    }

    /// The arena lws allocates header tables from, once installed (nil: pages are not 4 KiB, or the reservation
    /// failed).
    package static let forLws: HeaderTableArena? = {
        // 32,768 slots: 128 MiB of address space, room for 16,384 handshakes in flight before tables come from malloc.
        guard getpagesize() == 4096, let arena = HeaderTableArena(capacity: 32_768, keepResident: 16) else {
            return nil
        }
        lws_set_allocator { pointer, size, reason in
            // Only installed when the arena exists.
            HeaderTableArena.forLws!.reallocate(pointer, size, reason)
        }
        return arena
    }()
}
