// Who may see an item is read from the store off the loop, and those reads come back in any order: a read begun
// before an unshare, an owner's demotion, a privacy change, a friendship's end or an item being hidden can come back
// after that change was announced, and would then name someone who has lost access. So the loop marks, with a counter
// of its own, when each bucket's members or privacy, each owner's friendships and each item's hidden flag last
// changed; a read notes the counter when it starts and, when it comes back, is stale if anything it depends on was
// marked since. A stale read is never used: it is read again (a few times), then given up safely.
//
// Marks are only kept while reads are in flight: when none is, a read begun later notes a counter past every mark, so
// they are all forgotten. A friendship's end removes viewer shares in a store call of its own; until that commits, the
// shares it will remove are left out of who can view (`ending`), so reads in that window are right too.

/// When access last changed, per bucket, owner and item, on the loop. Loop thread only.
struct AccessEpochs {
    /// The counter: every change moves it on.
    private(set) var now: Int64 = 0
    private var buckets: [Int64: Int64] = [:]
    private var owners: [Int64: Int64] = [:]
    private var items: [Int64: Int64] = [:]
    /// Reads begun and not yet ended.
    private(set) var reads = 0
    /// By owner, the users whose viewer shares in the owner's buckets are being removed (a friendship ended, the
    /// removal not yet committed), counted (two ends may overlap).
    private(set) var ending: [Int64: [Int64: Int]] = [:]

    /// A read starts: its mark to compare with when it ends.
    mutating func begin() -> Int64 {
        reads += 1
        return now
    }

    /// A read ended (after `isStale` was asked).
    mutating func end() {
        reads -= 1
        if reads == 0 {
            buckets = [:]
            owners = [:]
            items = [:]
        }
    }

    /// A bucket's members or privacy changed, or it is gone.
    mutating func bucketChanged(_ bucket: Int64) {
        now += 1
        if reads > 0 { buckets[bucket] = now }
    }

    /// A friendship of `owner` is ending or ended: who may view their buckets changes.
    mutating func ownerChanged(_ owner: Int64) {
        now += 1
        if reads > 0 { owners[owner] = now }
    }

    /// An item's hidden flag (or anything else about it) changed.
    mutating func itemChanged(_ item: Int64) {
        now += 1
        if reads > 0 { items[item] = now }
    }

    /// True when something the read begun at `since` depends on changed since.
    func isStale(since: Int64, bucket: BucketRecord, item: Int64? = nil) -> Bool {
        guard now > since else { return false }
        if let at = buckets[bucket.id], at > since { return true }
        if let item, let at = items[item], at > since { return true }
        for owner in bucket.owners { if let at = owners[owner], at > since { return true } }
        return false
    }

    /// True when `item` changed after `since` (asked while a read is in flight).
    func itemChanged(_ item: Int64, since: Int64) -> Bool {
        guard now > since, let at = items[item] else { return false }
        return at > since
    }

    /// `a` and `b` stop being friends: each one's viewer shares in the other's buckets are on their way out.
    mutating func friendshipEnding(_ a: Int64, _ b: Int64) {
        ending[a, default: [:]][b, default: 0] += 1
        ending[b, default: [:]][a, default: 0] += 1
        ownerChanged(a)
        ownerChanged(b)
    }

    /// The removal of `a`'s and `b`'s shares in each other's buckets committed (or failed).
    mutating func friendshipEnded(_ a: Int64, _ b: Int64) {
        for (owner, other) in [(a, b), (b, a)] {
            let left = (ending[owner]?[other] ?? 1) - 1
            ending[owner]?[other] = left > 0 ? left : nil
            if ending[owner]?.isEmpty == true { ending[owner] = nil }
        }
        ownerChanged(a)
        ownerChanged(b)
    }

    /// `bucket` as it is once the viewer shares being removed are gone.
    func pending(_ bucket: BucketRecord) -> BucketRecord {
        guard !ending.isEmpty else { return bucket }
        var after = bucket
        for owner in bucket.owners {
            guard let others = ending[owner] else { continue }
            for other in others.keys where after.members[other] == .viewer { after.members[other] = nil }
        }
        return after
    }
}
