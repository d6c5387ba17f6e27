// Fast shortest round-trip formatting for the doubles a location hub mostly writes: coordinates, accuracies,
// speeds and headings with a handful of decimals. For a finite value with magnitude in [0.001, 2^40) it looks
// for the fewest fractional digits k ≤ 9 such that n / 10^k == |value| for n = round(|value| × 10^k); n < 2^40 and
// 10^k are exact doubles, so that division is exactly what any correct parser computes for "n e-k", and at
// this magnitude the rounding interval of |value| scaled by 10^k is far narrower than 1, so the first k that
// works gives the unique shortest digit string. The output is then the same as the standard library's
// `description` (checked by DoubleFormatTests over many values). Anything else returns nil and the caller
// uses the standard library's general algorithm (several times the instructions for these values).

/// Shortest round-trip decimal formatting of common doubles without the general algorithm.
enum DoubleFormat {
    /// The longest output of `shortFixed`: sign, 13 integer digits, point, 9 fractional digits.
    static let maxBytes = 24

    private static let limit = 1_099_511_627_776.0  // 2^40

    /// Writes `value` as plain decimal (`37.7749295`, `270.0`, `-0.001`) into `out` and returns the byte count,
    /// or returns nil if the value is outside the fast path's range.
    static func shortFixed(_ value: Double, into out: UnsafeMutablePointer<UInt8>) -> Int? {
        let magnitude = value.magnitude
        guard magnitude >= 0.001 && magnitude < limit else { return nil }
        // The test "n / 10^k == |value|" is monotone in k (if k digits suffice, so do k + 1: the same digits
        // and a zero), so binary search finds the smallest k in about four probes.
        var high = 9
        while magnitude * JSONNumber.exactPower(high) >= limit { high -= 1 }
        guard high >= 0, let top = roundTrips(magnitude, high) else { return nil }
        var found = (n: top, k: high)
        var low = 0
        while low < found.k {
            let mid = (low + found.k) / 2
            if let n = roundTrips(magnitude, mid) {
                found = (n, mid)
            } else {
                low = mid + 1
            }
        }
        return write(found.n, fractionDigits: found.k, negative: value < 0, into: out)
    }

    /// The integer n nearest to `magnitude × 10^k` if n / 10^k gives back `magnitude` exactly.
    @inline(__always) private static func roundTrips(_ magnitude: Double, _ k: Int) -> UInt64? {
        let scale = JSONNumber.exactPower(k)
        // Nearest integer (exact ties cannot matter, see above); Int64 because x86 converts it natively.
        let n = Int64(magnitude * scale + 0.5)
        return Double(n) / scale == magnitude ? UInt64(n) : nil
    }

    /// Writes `n × 10^-k` in plain decimal, with at least one digit on each side of the point, back to front.
    @inline(__always)
    private static func write(
        _ n: UInt64, fractionDigits k: Int, negative: Bool, into out: UnsafeMutablePointer<UInt8>
    ) -> Int {
        var digits = 1
        var bound: UInt64 = 10
        while n >= bound {
            digits += 1
            bound &*= 10
        }
        let sign = negative ? 1 : 0
        let total = sign + max(1, digits - k) + 1 + max(k, 1)
        var o = total
        var rest = n
        if k == 0 {
            o -= 1
            out[o] = UInt8(ascii: "0")
        } else {
            for _ in 0..<k {
                o -= 1
                out[o] = UInt8(ascii: "0") + UInt8(rest % 10)
                rest /= 10
            }
        }
        o -= 1
        out[o] = UInt8(ascii: ".")
        while o > sign {
            o -= 1
            out[o] = UInt8(ascii: "0") + UInt8(rest % 10)
            rest /= 10
        }
        if negative { out[0] = UInt8(ascii: "-") }
        return total
    }
}
