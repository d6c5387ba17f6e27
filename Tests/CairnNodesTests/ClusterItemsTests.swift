import CairnHub
// Item moves across nodes, with the Redis glue replaced by the test: a move is one message,
// one section listing the viewers, the fix encoded once in its binary layout (every field, each optional one only
// when present, back as it was); bytes that are not exactly one fix (a length off by one, unknown flag bits, a
// coordinate out of range, a non-finite field) are refused; the node listens to an item from its first follower to
// its last; a message for an item it does not follow is ignored.
import CairnHubTestSupport
import CairnLoop
import Testing

@testable import CairnCore
@testable import CairnNodes
@testable import CairnTrackers

@MainActor
@Suite(.timeLimit(.minutes(5)))
struct ClusterItemsTests {
    static let full = Fix(
        lat: 48.5, lon: -2.25, acc: 4, alt: 31.5, spd: 1.25, hdg: 270, bat: 88, ts: 1_700_000, flagged: true)

    @Test func aFixRoundTripsWithExactlyTheFieldsItHas() throws {
        for fix in [Self.full, Fix(lat: -90, lon: 180, ts: -5), Fix(lat: 1, lon: 2, hdg: 0, ts: 3)] {
            let bytes = ClusterItems.encode(fix, tracker: 42)
            let decoded = try #require(ClusterItems.decode(bytes))
            #expect(decoded.tracker == 42)
            #expect(decoded.fix == fix)
        }
        #expect(ClusterItems.encode(Fix(lat: 1, lon: 2, ts: 3), tracker: 1).count == 33)
        #expect(ClusterItems.encode(Self.full, tracker: 1).count == 33 + 5 * 8)
    }

    @Test func bytesThatAreNotExactlyOneFixAreRefused() {
        let good = ClusterItems.encode(Self.full, tracker: 7)
        #expect(ClusterItems.decode(Array(good.dropLast())) == nil)
        #expect(ClusterItems.decode(good + [0]) == nil)
        #expect(ClusterItems.decode([]) == nil)
        var flags = good
        flags[32] |= 0x40  // an unknown field
        #expect(ClusterItems.decode(flags) == nil)
        let far = ClusterItems.encode(Fix(lat: 91, lon: 0, ts: 1), tracker: 7)
        #expect(ClusterItems.decode(far) == nil)
        let nan = ClusterItems.encode(Fix(lat: 1, lon: 1, acc: .nan, ts: 1), tracker: 7)
        #expect(ClusterItems.decode(nan) == nil)
    }

    @Test func aMoveIsOneMessageAndTheItemIsListenedToWhileFollowed() {
        let h = NodeHarness()
        let items = ClusterItems(hub: h.hub)
        var sent: [(ClusterItems.Kind, Int64, [ClusterItems.Section])] = []
        var listening: [String] = []
        items.send = { sent.append(($0, $1, $2)) }
        items.listen = { listening.append("\($1 ? "+" : "-")\($0)") }

        items.itemMoved(ItemPosition(item: 9, fix: Self.full), tracker: 3, to: [2, 5])
        #expect(sent.count == 1)
        #expect(sent.first?.0 == .moved)
        #expect(sent.first?.1 == 9)
        #expect(sent.first?.2.count == 1)
        #expect(sent.first?.2.first?.tag == 0)
        #expect(sent.first?.2.first?.viewers == [2, 5])
        #expect(sent.first?.2.first?.payload == ClusterItems.encode(Self.full, tracker: 3))

        items.follow(9)
        items.follow(9)
        items.follow(10)
        items.unfollow(9)
        #expect(listening == ["+9", "+10"])
        #expect(items.followedCount == 2)
        items.unfollow(9)
        items.unfollow(9)  // a stray one changes nothing
        items.unfollow(10)
        #expect(listening == ["+9", "+10", "-9", "-10"])
    }

    @Test func aMoveHeardForAnItemNotFollowedIsIgnored() {
        let h = NodeHarness()
        let items = ClusterItems(hub: h.hub)
        h.hub.trackers.remote = items
        let payload = ClusterItems.encode(Self.full, tracker: 3)
        items.received(.moved, item: 9, sections: [(0, [2], payload)])
        #expect(h.hub.trackers.position(of: 9) == nil)
        items.follow(9)
        items.received(.moved, item: 9, sections: [(1, [2], payload)])  // not a section this build makes
        items.received(.moved, item: 9, sections: [(0, [2], Array(payload.dropLast()))])
        #expect(h.hub.trackers.position(of: 9) == nil)
        items.received(.moved, item: 9, sections: [(0, [2], payload)])
        #expect(h.hub.trackers.position(of: 9) == Self.full)
    }
}
