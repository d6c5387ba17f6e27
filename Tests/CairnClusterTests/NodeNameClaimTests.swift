// The rule two processes holding one node name apply to decide which one stops: the one that started later (ties:
// the greater instance), the same answer on both sides; and the stored value's form.
import Testing

@testable import CairnCluster

@Suite(.timeLimit(.minutes(5)))
struct NodeNameClaimTests {
    @Test func theProcessThatStartedLaterYieldsAndOnlyThatOne() {
        let older = NodeNameClaim.Holder(instance: "zzz", startedAtMs: 1_000)
        let newer = NodeNameClaim.Holder(instance: "aaa", startedAtMs: 2_000)
        #expect(NodeNameClaim.yields(newer, to: older))
        #expect(!NodeNameClaim.yields(older, to: newer))
    }

    @Test func aTieIsBrokenByTheInstanceTheSameWayOnBothSides() {
        let first = NodeNameClaim.Holder(instance: "a1", startedAtMs: 5)
        let second = NodeNameClaim.Holder(instance: "b2", startedAtMs: 5)
        #expect(NodeNameClaim.yields(second, to: first) != NodeNameClaim.yields(first, to: second))
        #expect(NodeNameClaim.yields(second, to: first))
    }

    @Test func theStoredValueReadsBackAndAForeignOneIsIgnored() {
        let holder = NodeNameClaim.Holder(instance: "Qx-_9", startedAtMs: 1_764_300_000_000)
        #expect(NodeNameClaim.Holder.parse(holder.text) == holder)
        #expect(NodeNameClaim.Holder.parse("1764300000000") == nil)
        #expect(NodeNameClaim.Holder.parse("abc def") == nil)
    }
}
