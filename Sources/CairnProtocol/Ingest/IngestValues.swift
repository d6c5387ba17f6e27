// What the ingest parsers produce, as plain values: the files under Ingest/ read request bytes into these and import
// nothing but CairnWire, so the fuzz targets (fuzz/run-ingest.sh) compile exactly them with CairnWire's sources,
// without the domain. The HTTP endpoints turn an `IngestFix` into the domain's `PositionReport` and an
// `IngestProblem` into its `IngestRefusal`. Numbers and times that every format reads (a decimal in a form field,
// epoch seconds or milliseconds or ISO 8601) are read here once.

/// One position as an app sent it, in the contract's units (m/s, degrees, metres, percent, ms since the epoch); not
/// yet checked against the contract's ranges (the domain does that).
struct IngestFix: Equatable, Sendable {
    var lat: Double
    var lon: Double
    var acc: Double?
    var alt: Double?
    var spd: Double?
    var hdg: Double?
    var bat: Double?
    var ts: Int64?
    /// The device says this is not a valid fix (OsmAnd's `valid=false`): the ingest's `invalid` filter drops it.
    var markedInvalid = false
}

/// Why a request could not be read.
enum IngestProblem: Error, Equatable, Sendable {
    /// Malformed (400), with the reason.
    case malformed(String)
    /// Missing or unusable credentials (401).
    case badCredentials
}

/// Reading the numbers and times of form fields and JSON.
enum IngestNumbers {
    /// Metres per second in a knot.
    static let knot = 1852.0 / 3600.0
    /// Metres per second in a km/h.
    static let kmh = 1000.0 / 3600.0

    /// A decimal number in a form field (digits, sign, point, exponent; finite), or a refusal naming the field.
    static func number(_ name: String, _ text: String) throws(IngestProblem) -> Double {
        let allowed = text.utf8.allSatisfy { c in
            (48...57).contains(c) || c == 46 || c == 45 || c == 43 || c == 101 || c == 69
        }
        guard allowed, let value = Double(text), value.isFinite else {
            throw .malformed("parameter '\(name)' must be a number")
        }
        return value
    }

    /// Milliseconds since the epoch from epoch seconds (below 10^10), epoch milliseconds, or ISO 8601.
    static func timestamp(_ text: String, name: String = "timestamp") throws(IngestProblem) -> Int64 {
        if !text.isEmpty, text.utf8.allSatisfy({ (48...57).contains($0) || $0 == 46 }),
            let value = Double(text), value.isFinite
        {
            guard value < 1e15 else { throw .malformed("parameter '\(name)' is out of range") }
            return value < 1e10 ? Int64((value * 1000).rounded()) : Int64(value.rounded())
        }
        guard let ms = ISO8601.milliseconds(text) else {
            throw .malformed("parameter '\(name)' must be epoch seconds, epoch milliseconds or ISO 8601")
        }
        return ms
    }

    /// Epoch seconds (a JSON number) as milliseconds, or a refusal naming the field.
    static func epochSeconds(_ name: String, _ seconds: Double) throws(IngestProblem) -> Int64 {
        guard seconds.isFinite, seconds >= 0, seconds < 1e11 else { throw .malformed("'\(name)' is out of range") }
        return Int64((seconds * 1000).rounded())
    }

    /// A heading in degrees, with 360 read as 0 (the contract's range is [0, 360)).
    static func heading(_ degrees: Double) -> Double { degrees == 360 ? 0 : degrees }
}

/// A report read from a request: who sends it (credentials only checked for being present), and its positions.
struct ParsedReport: Equatable, Sendable {
    var device: String
    var key: String
    var fixes: [IngestFix]
}
