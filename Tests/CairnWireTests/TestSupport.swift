// Small helpers shared by the CairnWire tests: parsing from a String or raw bytes, capturing the WireError a
// parse throws, and checking that a refusal is a bad_request whose message names the problem and the field.

import CairnErrorCodes
import Testing

@testable import CairnWire

/// Parses `text` with a fresh Message.
func parsed(_ text: String, limits: WireLimits = WireLimits()) throws(WireError) -> Message {
    var message = Message(limits: limits)
    try message.parse(Array(text.utf8))
    return message
}

/// The error parsing `bytes` throws, or nil if it parses.
func parseError(_ bytes: [UInt8], limits: WireLimits = WireLimits()) -> WireError? {
    var message = Message(limits: limits)
    do {
        try message.parse(bytes)
        return nil
    } catch {
        return error
    }
}

/// Expects `bytes` to be refused with bad_request and a message containing every fragment.
func expectRefused(
    _ bytes: [UInt8], _ fragments: [String], limits: WireLimits = WireLimits(),
    sourceLocation: SourceLocation = #_sourceLocation
) {
    guard let error = parseError(bytes, limits: limits) else {
        Issue.record("accepted \(String(decoding: bytes, as: UTF8.self))", sourceLocation: sourceLocation)
        return
    }
    #expect(error.code == .badRequest, sourceLocation: sourceLocation)
    for fragment in fragments {
        #expect(error.message.contains(fragment), "message was: \(error.message)", sourceLocation: sourceLocation)
    }
}

/// Expects `text` to be refused with bad_request and a message containing every fragment.
func expectRefused(
    _ text: String, _ fragments: String..., limits: WireLimits = WireLimits(),
    sourceLocation: SourceLocation = #_sourceLocation
) {
    expectRefused(Array(text.utf8), fragments, limits: limits, sourceLocation: sourceLocation)
}

/// The error `body` throws, or nil.
func thrownError<T>(_ body: () throws(WireError) -> T) -> WireError? {
    do {
        _ = try body()
        return nil
    } catch {
        return error
    }
}

/// A deterministic SplitMix64 generator, so property tests are reproducible.
struct SeededGenerator: RandomNumberGenerator {
    private var state: UInt64

    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
