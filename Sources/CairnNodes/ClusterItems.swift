// The cross-node side of item positions (the domain's `RemoteItems`), next to `ClusterDelivery` for users'. The
// moving node has already decided who may hear a move (its audience members online elsewhere); each move becomes one
// message whatever the number of viewers: the fix, encoded once in a compact binary form, with the listed viewers.
// The viewers' node hands what it hears to the trackers (`Trackers.remoteMoved`), which update their memory of the
// item and push `item.pos`, encoded there once for all its watchers, to the listed viewers who watch items there and
// may still see the item — so no bytes from another node ever go to a socket as they are. Only items this node follows
// (a watching connection here may view them) are listened to. The node (`ClusterNode`) turns the calls into
// `FanOutMessage`s on the items' channels and back; this file knows no Redis.
//
// The fix's layout (integers and doubles little-endian): i64 tracker | i64 ts | f64 lat | f64 lon | u8 flags
// (bit 0 acc, 1 alt, 2 spd, 3 hdg, 4 bat present, bit 5 flagged) | f64 per present field, in that order; nothing
// after. Anything else (a length that does not match, a coordinate out of range, unknown flag bits) is refused.
import CairnCore
import CairnHub
import CairnLoop
import CairnTrackers

/// Item moves to and from other nodes. Loop thread only.
final class ClusterItems: RemoteItems {
    /// What a cross-node item message says (`FanOutMessage.kind`; apart from `ClusterDelivery.Kind`'s values).
    enum Kind: UInt8, Sendable {
        /// An item moved: one section, tag 0, the listed viewers and the fix.
        case moved = 4
    }

    /// One section of a message: its tag, who may have it, the bytes.
    typealias Section = (tag: UInt8, viewers: [Int64], payload: [UInt8])

    private unowned let hub: Hub
    /// Watching connections here following each item.
    private var followers: [Int64: Int] = [:]

    /// Sends a message about `item` to the other nodes (set by the glue).
    var send: ((_ kind: Kind, _ item: Int64, _ sections: [Section]) -> Void)?
    /// This node starts (true) or stops (false) listening to `item`: its first follower came, its last went.
    var listen: ((_ item: Int64, _ on: Bool) -> Void)?

    /// Item moves for `hub`'s watchers; the glue sets `send` and `listen`, then the trackers' `remote`.
    init(hub: Hub) { self.hub = hub }

    /// Items this node listens to.
    var followedCount: Int { followers.count }

    // MARK: RemoteItems

    func follow(_ item: Int64) {
        let count = (followers[item] ?? 0) + 1
        followers[item] = count
        if count == 1 { listen?(item, true) }
    }

    func unfollow(_ item: Int64) {
        guard let count = followers[item] else { return }
        if count > 1 {
            followers[item] = count - 1
            return
        }
        followers[item] = nil
        listen?(item, false)
    }

    func itemMoved(_ position: ItemPosition, tracker: Int64, to viewers: [Int64]) {
        guard let send, !viewers.isEmpty else { return }
        send(.moved, position.item, [(0, viewers, Self.encode(position.fix, tracker: tracker))])
    }

    /// A message from another node about `item` (decoded by the glue); ignored unless this node follows the item.
    func received(_ kind: Kind, item: Int64, sections: [Section]) {
        guard followers[item] != nil, sections.count == 1, sections[0].tag == 0,
            let (tracker, fix) = Self.decode(sections[0].payload)
        else { return }
        hub.trackers.remoteMoved(ItemPosition(item: item, fix: fix), tracker: tracker, viewers: sections[0].viewers)
    }

    // MARK: The fix's bytes

    /// The optional fields, in the layout's order.
    private static func optionalFields(of fix: Fix) -> [Double?] { [fix.acc, fix.alt, fix.spd, fix.hdg, fix.bat] }
    private static let optionalCount = 5
    private static let flaggedBit: UInt8 = 1 << 5

    /// The fix and its tracker in the layout above.
    static func encode(_ fix: Fix, tracker: Int64) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(33 + 8 * optionalCount)
        append(UInt64(bitPattern: tracker), to: &out)
        append(UInt64(bitPattern: fix.ts), to: &out)
        append(fix.lat.bitPattern, to: &out)
        append(fix.lon.bitPattern, to: &out)
        var flags: UInt8 = fix.flagged ? flaggedBit : 0
        let fields = optionalFields(of: fix)
        for (bit, field) in fields.enumerated() where field != nil { flags |= 1 << UInt8(bit) }
        out.append(flags)
        for case .some(let value) in fields { append(value.bitPattern, to: &out) }
        return out
    }

    /// The tracker and fix in `bytes`, or nil when they are not exactly one well-formed fix.
    static func decode(_ bytes: [UInt8]) -> (tracker: Int64, fix: Fix)? {
        guard bytes.count >= 33 else { return nil }
        func word(_ at: Int) -> UInt64 {
            var value: UInt64 = 0
            for i in 0..<8 { value |= UInt64(bytes[at + i]) << UInt64(i * 8) }
            return value
        }
        let flags = bytes[32]
        guard flags & ~(flaggedBit | 0x1F) == 0 else { return nil }
        let present = (0..<optionalCount).filter { flags & (1 << UInt8($0)) != 0 }
        guard bytes.count == 33 + 8 * present.count else { return nil }
        let lat = Double(bitPattern: word(16))
        let lon = Double(bitPattern: word(24))
        guard (-90.0...90.0).contains(lat), (-180.0...180.0).contains(lon) else { return nil }
        var fix = Fix(lat: lat, lon: lon, ts: Int64(bitPattern: word(8)), flagged: flags & flaggedBit != 0)
        var at = 33
        for bit in present {
            let value = Double(bitPattern: word(at))
            guard value.isFinite else { return nil }
            switch bit {
            case 0: fix.acc = value
            case 1: fix.alt = value
            case 2: fix.spd = value
            case 3: fix.hdg = value
            default: fix.bat = value
            }
            at += 8
        }
        return (Int64(bitPattern: word(0)), fix)
    }

    private static func append(_ value: UInt64, to out: inout [UInt8]) {
        for shift in 0..<8 { out.append(UInt8(truncatingIfNeeded: value >> UInt64(shift * 8))) }
    }
}
