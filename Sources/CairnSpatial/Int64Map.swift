// The two hash tables of a GridIndex (id → packed slot, cell key → cell) sit on the path of every upsert and of
// every cell a query reads, and at a million points the id table is far larger than any cache. Swift's
// Dictionary keeps keys, values and the occupancy bitmap in three separate arrays and hashes with SipHash, so a
// lookup there costs up to three cache misses plus the hash. This map keeps each key beside its value in one
// 16-byte bucket (one miss), hashes by a Fibonacci multiply (ids and cell keys are assigned by Cairn, not chosen
// by clients, so flooding resistance buys nothing here), and uses linear probing with backward-shift deletion, so
// removals leave no tombstones and heavy churn never lengthens probes. Load stays at most 3/4, the same bytes per
// entry as Dictionary<Int64, UInt64>.

/// An open-addressing hash map from `Int64` to `UInt64`; the value `UInt64.max` is reserved (it marks a free
/// bucket).
struct Int64Map {
    private struct Bucket {
        var key: Int64
        var value: UInt64
    }

    private static let free = UInt64.max
    private static let freeBucket = Bucket(key: 0, value: free)

    private var buckets: [Bucket] = []
    /// Buckets - 1 (buckets is a power of two), or -1 while nothing is allocated.
    private var mask = -1
    /// 64 - log2(buckets): the product's top bits pick the home bucket.
    private var shift: UInt64 = 64
    /// Number of entries.
    private(set) var count = 0

    init() {}

    /// Number of buckets allocated (each 16 bytes).
    var bucketCount: Int { buckets.count }

    /// The bucket where `key`'s probe starts, in a table of 2^(64 - `shift`) buckets.
    @inline(__always)
    private static func home(_ key: Int64, _ shift: UInt64) -> Int {
        Int(truncatingIfNeeded: (UInt64(bitPattern: key) &* 0x9E37_79B9_7F4A_7C15) >> shift)
    }

    /// The value for `key`, or nil.
    @inline(__always)
    subscript(key: Int64) -> UInt64? {
        if count == 0 { return nil }
        let mask = mask
        let shift = shift
        return buckets.withUnsafeBufferPointer { buckets in
            var i = Self.home(key, shift)
            while true {
                let bucket = buckets[i]
                if bucket.value == Self.free { return nil }
                if bucket.key == key { return bucket.value }
                i = (i + 1) & mask
            }
        }
    }

    /// Sets the value for `key`, inserting it if absent.
    @inline(__always)
    mutating func set(_ key: Int64, _ value: UInt64) {
        assert(value != Self.free, "reserved value")
        if (count + 1) * 4 > buckets.count * 3 { grow() }
        let mask = mask
        let shift = shift
        let inserted = buckets.withUnsafeMutableBufferPointer { buckets in
            var i = Self.home(key, shift)
            while true {
                if buckets[i].value == Self.free {
                    buckets[i] = Bucket(key: key, value: value)
                    return true
                }
                if buckets[i].key == key {
                    buckets[i].value = value
                    return false
                }
                i = (i + 1) & mask
            }
        }
        if inserted { count += 1 }
    }

    /// Removes `key`, returning its value, or nil when absent. Later entries of the probe run shift back into the
    /// hole so every remaining key stays reachable from its home bucket.
    @discardableResult
    mutating func removeValue(forKey key: Int64) -> UInt64? {
        if count == 0 { return nil }
        let mask = mask
        let shift = shift
        let removed: UInt64? = buckets.withUnsafeMutableBufferPointer { buckets in
            var hole = Self.home(key, shift)
            while true {
                if buckets[hole].value == Self.free { return nil }
                if buckets[hole].key == key { break }
                hole = (hole + 1) & mask
            }
            let value = buckets[hole].value
            var next = hole
            while true {
                next = (next + 1) & mask
                if buckets[next].value == Self.free { break }
                let wanted = Self.home(buckets[next].key, shift)
                // The entry may move back into the hole only if its home is not cyclically inside (hole, next].
                let staysPut = hole <= next ? (hole < wanted && wanted <= next) : (hole < wanted || wanted <= next)
                if staysPut { continue }
                buckets[hole] = buckets[next]
                hole = next
            }
            buckets[hole] = Self.freeBucket
            return value
        }
        if removed != nil { count -= 1 }
        return removed
    }

    /// Makes room for `capacity` entries without growing.
    mutating func reserveCapacity(_ capacity: Int) {
        var size = max(8, buckets.count)
        while capacity * 4 > size * 3 { size *= 2 }
        if size > buckets.count { rehash(into: size) }
    }

    private mutating func grow() {
        rehash(into: max(8, buckets.count * 2))
    }

    private mutating func rehash(into size: Int) {
        let old = buckets
        buckets = Array(repeating: Self.freeBucket, count: size)
        mask = size - 1
        shift = UInt64(64 - size.trailingZeroBitCount)
        let mask = mask
        let shift = shift
        buckets.withUnsafeMutableBufferPointer { buckets in
            for bucket in old where bucket.value != Self.free {
                var i = Self.home(bucket.key, shift)
                while buckets[i].value != Self.free { i = (i + 1) & mask }
                buckets[i] = bucket
            }
        }
    }
}
