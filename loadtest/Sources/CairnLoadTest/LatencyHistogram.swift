// Latencies in an HDR histogram (hdrhistogram-swift): constant memory and three significant digits from 1 µs to an
// hour, so a run of millions of deliveries keeps exact-enough percentiles without storing samples.
import Histogram

/// Percentiles of one latency distribution, in milliseconds.
public struct LatencySummary: Codable, Sendable, Equatable {
    /// Number of samples.
    public var count: UInt64
    /// Mean.
    public var mean: Double
    /// Median.
    public var p50: Double
    /// 90th percentile.
    public var p90: Double
    /// 99th percentile.
    public var p99: Double
    /// 99.9th percentile.
    public var p999: Double
    /// Largest sample.
    public var max: Double
}

/// A latency recorder with microsecond resolution.
public struct LatencyHistogram: Sendable {
    private var histogram = Histogram<UInt64>(
        lowestDiscernibleValue: 1, highestTrackableValue: 3_600_000_000,
        numberOfSignificantValueDigits: .three)

    /// An empty recorder.
    public init() {}

    /// Records one latency given in nanoseconds (clamped to [1 µs, 1 h]).
    public mutating func record(nanoseconds: UInt64) {
        let micros = Swift.min(Swift.max((nanoseconds + 500) / 1000, 1), 3_600_000_000)
        _ = histogram.record(micros)
    }

    /// Adds every sample of `other`.
    public mutating func add(_ other: LatencyHistogram) { histogram.add(other.histogram) }

    /// Forgets every sample.
    public mutating func reset() { histogram.reset() }

    /// Number of samples.
    public var count: UInt64 { histogram.totalCount }

    /// The value at `percentile` (0–100) in milliseconds; 0 when empty.
    public func milliseconds(atPercentile percentile: Double) -> Double {
        count == 0 ? 0 : Double(histogram.valueAtPercentile(percentile)) / 1000
    }

    /// The summary in milliseconds (all zero when empty).
    public var summary: LatencySummary {
        guard count > 0 else { return LatencySummary(count: 0, mean: 0, p50: 0, p90: 0, p99: 0, p999: 0, max: 0) }
        return LatencySummary(
            count: count, mean: histogram.mean / 1000,
            p50: milliseconds(atPercentile: 50), p90: milliseconds(atPercentile: 90),
            p99: milliseconds(atPercentile: 99), p999: milliseconds(atPercentile: 99.9),
            max: Double(histogram.max) / 1000)
    }
}
