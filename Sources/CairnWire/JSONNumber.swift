// JSON numbers: grammar validation, range check and exact conversion, all over the lexeme's bytes.
// The reader reads every number once, in one pass that checks the RFC 8259 grammar and collects the first 19
// significant digits and the decimal exponent (`DecimalNumber`); the range check and every later conversion
// work from that. Conversion is exact: integers are built from the digits (so 2^53 + 1 is refused rather than
// silently rounded), and doubles use Clinger's fast path (a significand up to 2^53 and a power of ten up to
// 10^22 are both exact, so one IEEE multiply or divide is correctly rounded) with strtod in the C locale on a
// small stack copy of the lexeme for everything else. No String is created on any path. When a lexeme is
// refused, the slower `shape` check over the maximal run of number-like bytes says exactly why.

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Why a number lexeme was refused.
enum NumberProblem: Error, Equatable {
    /// It starts with '+'.
    case leadingPlus
    /// The integer part has a leading zero (`01`).
    case leadingZero
    /// '.' with no digit before it (`.5`, `-.5`).
    case noDigitBeforePoint
    /// '.' with no digit after it (`5.`).
    case noDigitAfterPoint
    /// An exponent marker with no digits (`1e`, `1e+`).
    case noExponentDigits
    /// Not a number at all (`-`, `-Infinity`, `0x1F`, `1.2.3`).
    case notANumber
    /// Longer than `JSONNumber.maxLexemeBytes`.
    case tooLong
    /// The magnitude does not fit in a Double (`1e400`).
    case outOfRange
}

/// The integer reading of a number lexeme.
enum IntegerValue: Equatable {
    /// The number is an integer within ±2^53.
    case exact(Int64)
    /// The number has a fractional part.
    case fractional
    /// The number is an integer beyond ±2^53.
    case outOfRange
}

/// The C numeric locale, so strtod reads '.' whatever the process locale is (created once, never freed).
#if canImport(Glibc)
nonisolated(unsafe) private let cNumericLocale = newlocale(Int32(1) << LC_NUMERIC, "C", nil)
#endif

/// A number as read in one pass: its value is `significand × 10^exponent` (exactly, when `exact`).
struct DecimalNumber: Sendable, Equatable {
    /// The first (up to) 19 significant digits.
    var significand: UInt64 = 0
    /// The power of ten that scales `significand`.
    var exponent: Int32 = 0
    /// Whether there was a minus sign (so `-0` is negative zero).
    var negative = false
    /// False when a non-zero digit after the 19th was dropped.
    var exact = true

    /// The value, if Clinger's fast path can compute it exactly; nil when strtod is needed.
    @inline(__always) var fastDouble: Double? {
        if significand == 0 { return negative ? -0.0 : 0.0 }
        guard exact && significand <= JSONNumber.maxExactInteger && exponent >= -22 && exponent <= 22 else {
            return nil
        }
        let digits = Double(significand)
        let value =
            exponent < 0
            ? digits / JSONNumber.exactPower(Int(-exponent))
            : digits * JSONNumber.exactPower(Int(exponent))
        return negative ? -value : value
    }

    /// The integer reading, if it can be decided from the kept digits; nil when a dropped digit matters.
    var integer: IntegerValue? {
        if significand == 0 { return .exact(0) }
        guard exact else { return nil }
        var value = significand
        var e = Int(exponent)
        while value % 10 == 0 {
            value /= 10
            e += 1
        }
        if e < 0 { return .fractional }
        for _ in 0..<e {
            guard value <= JSONNumber.maxExactInteger / 10 else { return .outOfRange }
            value *= 10
        }
        if value > JSONNumber.maxExactInteger { return .outOfRange }
        return .exact(negative ? -Int64(value) : Int64(value))
    }
}

/// Validation and conversion of JSON number lexemes.
enum JSONNumber {
    /// The longest number lexeme the reader accepts; longer ones are refused (RFC 8259 §9 allows limits).
    static let maxLexemeBytes = 64
    /// The largest magnitude of an integer the codec accepts: 2^53, the limit of exact doubles.
    static let maxExactInteger: UInt64 = 1 << 53

    /// Whether `c` belongs to a number-like run: digits, letters, '.', '+', '-'. The reader takes the maximal
    /// run as the lexeme, so `0x1F`, `1.2.3` and `-Infinity` are refused as one token with a clear reason.
    @inline(__always) static func isLexemeByte(_ c: UInt8) -> Bool {
        switch c {
        case 0x30...0x39, 0x41...0x5A, 0x61...0x7A, 0x2E, 0x2B, 0x2D: return true
        default: return false
        }
    }

    /// Reads the number starting at `start` in one pass, checking grammar, length and range, and returns it
    /// with the index just after it.
    static func read(
        _ p: UnsafePointer<UInt8>, at start: Int, end: Int
    ) throws(NumberProblem) -> (number: DecimalNumber, end: Int) {
        var n = DecimalNumber()
        var i = start
        // Digits are accumulated with wrapping arithmetic; if there are more than 19 of them (where the
        // significand could overflow), they are collected again carefully by `collectDigits`.
        var significand: UInt64 = 0
        if i < end && p[i] == UInt8(ascii: "-") {
            n.negative = true
            i += 1
        }
        guard i < end else { throw refusal(p, start, end) }
        let integerStart = i
        if p[i] == UInt8(ascii: "0") {
            i += 1
        } else if p[i] &- 0x31 < 9 {
            repeat {
                significand = significand &* 10 &+ UInt64(p[i] &- 0x30)
                i += 1
            } while i < end && p[i] &- 0x30 < 10
        } else {
            throw refusal(p, start, end)
        }
        let integerEnd = i
        var fractionStart = i
        var fractionEnd = i
        if i < end && p[i] == UInt8(ascii: ".") {
            i += 1
            fractionStart = i
            while i < end && p[i] &- 0x30 < 10 {
                significand = significand &* 10 &+ UInt64(p[i] &- 0x30)
                i += 1
            }
            guard i > fractionStart else { throw refusal(p, start, end) }
            fractionEnd = i
        }
        var e = 0
        if i < end && (p[i] | 0x20) == UInt8(ascii: "e") {
            i += 1
            var negativeExponent = false
            if i < end && (p[i] == UInt8(ascii: "+") || p[i] == UInt8(ascii: "-")) {
                negativeExponent = p[i] == UInt8(ascii: "-")
                i += 1
            }
            let first = i
            while i < end && p[i] &- 0x30 < 10 {
                e = min(e &* 10 &+ Int(p[i] &- 0x30), 1_000_000)
                i += 1
            }
            guard i > first else { throw refusal(p, start, end) }
            if negativeExponent { e = -e }
        }
        guard i == end || !isLexemeByte(p[i]) else { throw refusal(p, start, end) }
        guard i - start <= maxLexemeBytes else { throw .tooLong }

        let fractionDigits = fractionEnd - fractionStart
        var dropped = 0
        if (integerEnd - integerStart) + fractionDigits > 19 {
            (significand, dropped, n.exact) = collectDigits(
                p, integer: integerStart..<integerEnd, fraction: fractionStart..<fractionEnd)
        }
        n.significand = significand
        n.exponent = Int32(e - fractionDigits + dropped)
        if significand != 0 && n.exponent > 308 - 20 {
            // The value lies in [10^(m-1), 10^m); Double's largest finite value is about 1.8e308.
            var digits = 1
            var bound: UInt64 = 10
            while digits < 20 && significand >= bound {
                digits += 1
                bound = bound &* 10
            }
            let m = digits + Int(n.exponent)
            if m >= 310 { throw .outOfRange }
            if m == 309 && !strtodCopy(p + start, count: i - start).isFinite { throw .outOfRange }
        }
        return (n, i)
    }

    /// The first 19 significant digits of a long number, how many digits after them were dropped, and
    /// whether all the dropped ones were zero.
    private static func collectDigits(
        _ p: UnsafePointer<UInt8>, integer: Range<Int>, fraction: Range<Int>
    ) -> (significand: UInt64, dropped: Int, exact: Bool) {
        var significand: UInt64 = 0
        var kept = 0
        var dropped = 0
        var exact = true
        for k in integer.lowerBound..<fraction.upperBound where integer.contains(k) || fraction.contains(k) {
            let d = UInt64(p[k] &- 0x30)
            if significand == 0 && d == 0 { continue }  // a leading zero is not significant
            if kept < 19 {
                significand = significand * 10 + d
                kept += 1
            } else {
                dropped += 1
                if d != 0 { exact = false }
            }
        }
        return (significand, dropped, exact)
    }

    /// Why the number-like run at `start` is not a valid number (the slow path for error messages).
    private static func refusal(_ p: UnsafePointer<UInt8>, _ start: Int, _ end: Int) -> NumberProblem {
        var i = start
        while i < end && isLexemeByte(p[i]) { i += 1 }
        if i - start > maxLexemeBytes { return .tooLong }
        do {
            _ = try shape(p + start, count: i - start)
            return .notANumber
        } catch {
            return error
        }
    }

    /// The Double nearest to a number that `read` accepted (`p`/`count`: its lexeme, for the slow path).
    static func double(_ number: DecimalNumber, _ p: UnsafePointer<UInt8>, count: Int) -> Double {
        number.fastDouble ?? strtodCopy(p, count: count)
    }

    /// The integer value of a number that `read` accepted, exactly, if it is an integer within ±2^53.
    static func integer(_ number: DecimalNumber, _ p: UnsafePointer<UInt8>, count: Int) -> IntegerValue {
        number.integer ?? integer(p, count: count)
    }

    /// Where the parts of a grammatical number lexeme are.
    struct Shape {
        var negative = false
        var intStart = 0
        var intEnd = 0
        var fracStart = 0
        var fracEnd = 0
        /// The explicit exponent, saturated to ±1,000,000.
        var exponent = 0
    }

    /// Checks the RFC 8259 grammar and returns the lexeme's parts.
    static func shape(_ p: UnsafePointer<UInt8>, count: Int) throws(NumberProblem) -> Shape {
        @inline(__always) func isDigit(_ k: Int) -> Bool { k < count && p[k] &- 0x30 < 10 }
        var s = Shape()
        var i = 0
        guard count > 0 else { throw .notANumber }
        if p[0] == 0x2B { throw .leadingPlus }
        if p[0] == 0x2D {
            s.negative = true
            i = 1
        }
        guard i < count else { throw .notANumber }
        s.intStart = i
        if p[i] == 0x30 {
            i += 1
            if isDigit(i) { throw .leadingZero }
        } else if isDigit(i) {
            while isDigit(i) { i += 1 }
        } else if p[i] == 0x2E {
            throw .noDigitBeforePoint
        } else {
            throw .notANumber
        }
        s.intEnd = i
        s.fracStart = i
        s.fracEnd = i
        if i < count && p[i] == 0x2E {
            i += 1
            guard isDigit(i) else { throw .noDigitAfterPoint }
            s.fracStart = i
            while isDigit(i) { i += 1 }
            s.fracEnd = i
        }
        if i < count && (p[i] == 0x65 || p[i] == 0x45) {
            i += 1
            var negativeExponent = false
            if i < count && (p[i] == 0x2B || p[i] == 0x2D) {
                negativeExponent = p[i] == 0x2D
                i += 1
            }
            guard isDigit(i) else { throw .noExponentDigits }
            var e = 0
            while isDigit(i) {
                e = min(e * 10 + Int(p[i] - 0x30), 1_000_000)
                i += 1
            }
            s.exponent = negativeExponent ? -e : e
        }
        guard i == count else { throw .notANumber }
        return s
    }

    /// The positions (power of ten, before the exponent is applied) of the most and least significant non-zero
    /// digits, or nil when every digit is zero.
    private static func extent(_ p: UnsafePointer<UInt8>, _ s: Shape) -> (highest: Int, lowest: Int)? {
        var highest: Int?
        var lowest = 0
        for k in s.intStart..<s.intEnd where p[k] != 0x30 {
            let position = s.intEnd - 1 - k
            if highest == nil { highest = position }
            lowest = position
        }
        for k in s.fracStart..<s.fracEnd where p[k] != 0x30 {
            let position = s.fracStart - 1 - k
            if highest == nil { highest = position }
            lowest = position
        }
        guard let highest else { return nil }
        return (highest, lowest)
    }

    /// The integer value of a valid lexeme, exactly, if it is an integer within ±2^53 (the slow path, for
    /// numbers with more than 19 significant digits).
    static func integer(_ p: UnsafePointer<UInt8>, count: Int) -> IntegerValue {
        guard let s = try? shape(p, count: count) else { return .fractional }
        guard let (highest, lowest) = extent(p, s) else { return .exact(0) }
        if lowest + s.exponent < 0 { return .fractional }
        if highest + s.exponent >= 16 { return .outOfRange }  // ≥ 10^16 > 2^53
        var value: UInt64 = 0
        func add(_ digit: UInt8, _ position: Int) {
            var term = UInt64(digit - 0x30)
            for _ in 0..<(position + s.exponent) { term *= 10 }
            value += term
        }
        for k in s.intStart..<s.intEnd where p[k] != 0x30 { add(p[k], s.intEnd - 1 - k) }
        for k in s.fracStart..<s.fracEnd where p[k] != 0x30 { add(p[k], s.fracStart - 1 - k) }
        if value > maxExactInteger { return .outOfRange }
        return .exact(s.negative ? -Int64(value) : Int64(value))
    }

    /// 10^k for k in 0...22: the powers of ten a Double holds exactly (a switch compiles to a constant table,
    /// without the lazy initialisation check and bounds checks of a global array).
    @inline(__always) static func exactPower(_ k: Int) -> Double {
        switch k {
        case 0: return 1e0
        case 1: return 1e1
        case 2: return 1e2
        case 3: return 1e3
        case 4: return 1e4
        case 5: return 1e5
        case 6: return 1e6
        case 7: return 1e7
        case 8: return 1e8
        case 9: return 1e9
        case 10: return 1e10
        case 11: return 1e11
        case 12: return 1e12
        case 13: return 1e13
        case 14: return 1e14
        case 15: return 1e15
        case 16: return 1e16
        case 17: return 1e17
        case 18: return 1e18
        case 19: return 1e19
        case 20: return 1e20
        case 21: return 1e21
        default: return 1e22
        }
    }

    /// strtod in the C locale over a NUL-terminated stack copy (lexemes are at most 64 bytes).
    static func strtodCopy(_ p: UnsafePointer<UInt8>, count: Int) -> Double {
        withUnsafeTemporaryAllocation(of: CChar.self, capacity: count + 1) { buffer in
            guard let base = buffer.baseAddress else { return .nan }
            UnsafeMutableRawPointer(base).copyMemory(from: p, byteCount: count)
            base[count] = 0
            #if canImport(Glibc)
            let previous = cNumericLocale.map { uselocale($0) }
            defer { if let previous { uselocale(previous) } }
            return strtod(base, nil)
            #else
            return strtod_l(base, nil, nil)
            #endif
        }
    }
}
