// A fixed-size log-bucket histogram of durations in nanoseconds, for the live stats (fan-out latency, event-loop
// lag). Recording is a few integer operations on a preallocated array: no allocation, no lock (its owner is the
// loop), so it can sit on the hot path. Each power of two is split into 8 buckets, so a quantile is reported as
// its bucket's upper bound: never lower than the truth and at most 12.5% above it, plenty for p50/p99 on a
// dashboard. Exact bucketed counts for Prometheus come from the metrics exporter, not from here.

/// Durations in nanoseconds counted in logarithmic buckets.
public struct LatencyHistogram: Sendable {
    /// Sub-buckets per power of two (log2 of).
    static let subBits = 3
    static let bucketCount = 64 << subBits

    private var buckets: [UInt64]
    /// Samples recorded since the last reset.
    public private(set) var count: UInt64 = 0
    /// Sum of the samples recorded since the last reset, in nanoseconds.
    public private(set) var sum: UInt64 = 0
    /// Largest sample since the last reset, in nanoseconds.
    public private(set) var max: UInt64 = 0

    /// An empty histogram (allocates its buckets once).
    public init() { buckets = [UInt64](repeating: 0, count: Self.bucketCount) }

    static func index(_ value: UInt64) -> Int {
        if value < (1 << subBits) { return Int(value) }
        let msb = 63 - value.leadingZeroBitCount
        let sub = Int((value >> UInt64(msb - subBits)) & ((1 << subBits) - 1))
        return (msb << subBits) | sub
    }

    /// The largest value that falls in bucket `index`.
    static func upperBound(_ index: Int) -> UInt64 {
        if index < (1 << subBits) { return UInt64(index) }
        let msb = index >> subBits
        let sub = UInt64(index & ((1 << subBits) - 1))
        let width = UInt64(1) << UInt64(msb - subBits)
        let lower = (UInt64(1) << UInt64(msb)) + sub * width
        return lower &+ (width - 1)
    }

    /// Counts one duration; negative durations (a clock read out of order) count as zero.
    public mutating func record(nanoseconds: Int64) {
        let value = UInt64(Swift.max(0, nanoseconds))
        buckets[Self.index(value)] &+= 1
        count &+= 1
        sum &+= value
        if value > max { max = value }
    }

    /// The value below which a fraction `q` (0...1) of the samples fall, in nanoseconds; nil when empty.
    public func quantile(_ q: Double) -> UInt64? {
        guard count > 0 else { return nil }
        let rank = Swift.max(1, UInt64((Double(count) * Swift.min(Swift.max(q, 0), 1)).rounded(.up)))
        var seen: UInt64 = 0
        for i in 0..<buckets.count where buckets[i] > 0 {
            seen += buckets[i]
            if seen >= rank { return Swift.min(Self.upperBound(i), max) }
        }
        return max
    }

    /// Forgets every sample, keeping the buckets' storage.
    public mutating func reset() {
        guard count > 0 else { return }
        for i in buckets.indices { buckets[i] = 0 }
        count = 0
        sum = 0
        max = 0
    }
}
