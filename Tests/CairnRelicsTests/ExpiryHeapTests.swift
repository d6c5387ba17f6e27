import CairnHubTestSupport
import CairnLoop
import Testing

// The expiry heap pops in time order, only what is due, and copes with duplicates.
@testable import CairnRelics

@Suite(.timeLimit(.minutes(5)))
struct ExpiryHeapTests {
    @Test func popsDueEntriesInTimeOrder() {
        var heap = ExpiryHeap()
        var generator = SystemRandomNumberGenerator()
        var times: [Int64] = []
        for id in 0..<500 {
            let time = Int64.random(in: 0...1_000, using: &generator)
            times.append(time)
            heap.push(time, Int64(id))
        }
        #expect(heap.popDue(-1) == nil)
        var popped: [Int64] = []
        while let entry = heap.popDue(600) { popped.append(entry.time) }
        #expect(popped == times.filter { $0 <= 600 }.sorted())
        #expect(heap.count == times.filter { $0 > 600 }.count)
        #expect((heap.first?.time ?? 0) > 600)
    }
}
