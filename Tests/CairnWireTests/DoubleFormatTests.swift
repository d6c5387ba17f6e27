// The fast double formatting path must produce exactly the standard library's shortest round-trip text
// whenever it answers, and must answer for the everyday values it exists for.

import Testing

@testable import CairnWire

@Suite(.timeLimit(.minutes(5))) struct DoubleFormatTests {
    private func fast(_ value: Double) -> String? {
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: DoubleFormat.maxBytes) { buffer in
            DoubleFormat.shortFixed(value, into: buffer.baseAddress!).map {
                String(decoding: UnsafeBufferPointer(rebasing: buffer[0..<$0]), as: UTF8.self)
            }
        }
    }

    @Test func everydayValuesTakeTheFastPath() {
        #expect(fast(37.7749295) == "37.7749295")
        #expect(fast(-122.4194155) == "-122.4194155")
        #expect(fast(270.0) == "270.0")
        #expect(fast(1.4) == "1.4")
        #expect(fast(0.001) == "0.001")
        #expect(fast(-0.25) == "-0.25")
        #expect(fast(12345678901.5) == "12345678901.5")
        #expect(fast(123456789012.5) == nil)  // 1234567890125 ≥ 2^40
        #expect(fast(0.123456789) == "0.123456789")
    }

    @Test func valuesOutsideTheFastPathFallBack() {
        #expect(fast(0) == nil)
        #expect(fast(1e-7) == nil)
        #expect(fast(5e300) == nil)
        #expect(fast(0.30000000000000004) == nil)
        #expect(fast(2e12) == nil)
        #expect(fast(1.0 / 3.0) == nil)
    }

    @Test func agreesWithTheStandardLibraryOnRandomValues() {
        var rng = SeededGenerator(seed: 7)
        var answered = 0
        for i in 0..<300_000 {
            let value: Double
            switch i % 4 {
            case 0: value = Double(Int64.random(in: -1_800_000_000...1_800_000_000, using: &rng)) / 1e7  // coordinates
            case 1:
                value =
                    Double(Int64.random(in: -99_999...99_999, using: &rng)) / [1, 10, 100, 1000][Int(rng.next() % 4)]
            case 2: value = Double.random(in: -1e6...1e6, using: &rng)
            default: value = Double(bitPattern: rng.next())
            }
            guard let text = fast(value) else { continue }
            answered += 1
            #expect(text == value.description, "for \(value.description)")
        }
        #expect(answered > 150_000)
    }
}
