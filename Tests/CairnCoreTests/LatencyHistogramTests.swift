import CairnHubTestSupport
import CairnLoop
import Testing

// The log-bucket histogram behind the stats channel's p50/p99: quantiles never fall below the truth and stay
// within one bucket (12.5%) above it, the window resets, and odd input (zero, negative, huge) is safe.
@testable import CairnCore

@Suite(.timeLimit(.minutes(5)))
struct LatencyHistogramTests {
    @Test func emptyHasNoQuantile() {
        #expect(LatencyHistogram().quantile(0.5) == nil)
    }

    @Test func quantilesAreWithinOneBucketAboveTheTruth() {
        var h = LatencyHistogram()
        for v in 1...1000 { h.record(nanoseconds: Int64(v) * 1000) }  // 1 µs … 1 ms
        let p50 = Double(h.quantile(0.5)!)
        let p99 = Double(h.quantile(0.99)!)
        #expect(p50 >= 500_000 && p50 <= 500_000 * 1.125)
        #expect(p99 >= 990_000 && p99 <= 990_000 * 1.125)
        #expect(h.quantile(1) == 1_000_000)
        #expect(h.count == 1000)
        #expect(h.sum == 500_500_000)
    }

    @Test func everyValueLandsInABucketWhoseBoundCoversIt() {
        var value: UInt64 = 1
        while value < UInt64.max / 3 {
            for v in [value, value + 1, value * 3 / 2] {
                let i = LatencyHistogram.index(v)
                #expect(i < LatencyHistogram.bucketCount)
                #expect(LatencyHistogram.upperBound(i) >= v)
                if i > 0 { #expect(LatencyHistogram.upperBound(i - 1) < v) }
            }
            value *= 3
        }
    }

    @Test func resetForgetsAndNegativeCountsAsZero() {
        var h = LatencyHistogram()
        h.record(nanoseconds: -5)
        #expect(h.quantile(0.99) == 0)
        h.record(nanoseconds: Int64.max)
        #expect(h.max == UInt64(Int64.max))
        h.reset()
        #expect(h.count == 0 && h.quantile(0.5) == nil && h.max == 0)
    }
}
