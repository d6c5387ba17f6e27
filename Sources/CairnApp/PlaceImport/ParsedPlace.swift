// What the place-file parsers produce: a place as read from one row or feature, named by the line it starts on,
// or the reason a row was refused. The parsers (PlaceCSV, PlaceGeoJSON, ImportJSON) import nothing — not even
// the standard library's Foundation — so the fuzz target (fuzz/run-places.sh) compiles these files alone.

/// An attribute's value as read from a file.
public enum ParsedValue: Sendable, Equatable {
    case text(String)
    case number(Double)
    case flag(Bool)
}

/// One place read from a file.
public struct ParsedPlace: Sendable, Equatable {
    /// The line the row or feature starts on (1-based; a CSV header is line 1).
    public var line: Int
    /// Its id in the file's source (`id` column or the feature's `id`), if any.
    public var externalID: String?
    /// Its name.
    public var name: String
    /// Its category (`category` column or property), if any.
    public var category: String?
    /// Latitude in degrees, in [-90, 90].
    public var lat: Double
    /// Longitude in degrees, in [-180, 180].
    public var lon: Double
    /// Every other column or property, in order.
    public var attributes: [(name: String, value: ParsedValue)]

    public static func == (a: ParsedPlace, b: ParsedPlace) -> Bool {
        a.line == b.line && a.externalID == b.externalID && a.name == b.name && a.category == b.category
            && a.lat == b.lat && a.lon == b.lon && a.attributes.count == b.attributes.count
            && zip(a.attributes, b.attributes).allSatisfy { $0.name == $1.name && $0.value == $1.value }
    }
}

/// A row or feature that could not be read, and why.
public struct ParseProblem: Sendable, Equatable, CustomStringConvertible {
    /// The line it starts on (0 when the whole file is unreadable).
    public let line: Int
    /// Why.
    public let reason: String

    /// Creates the value.
    public init(line: Int, reason: String) {
        self.line = line
        self.reason = reason
    }

    /// "line 12: …", or the reason alone for the whole file.
    public var description: String { line > 0 ? "line \(line): \(reason)" : reason }
}

/// The places read from a file and the rows refused.
public struct ParsedPlaces: Sendable {
    /// Places read, in file order.
    public var places: [ParsedPlace] = []
    /// Rows refused, in file order.
    public var problems: [ParseProblem] = []
}

/// Checks shared by both formats.
enum ParsedChecks {
    /// The coordinate read from `text`, or why not.
    static func coordinate(_ text: String, _ what: String, limit: Double) -> Result<Double, ParseProblemReason> {
        let trimmed = trim(text)
        guard !trimmed.isEmpty else { return .failure(ParseProblemReason("\(what) is empty")) }
        guard let value = Double(trimmed), value.isFinite else {
            return .failure(ParseProblemReason("\(what) '\(clip(trimmed))' is not a number"))
        }
        guard value >= -limit && value <= limit else {
            return .failure(ParseProblemReason("\(what) \(trimmed) is out of range [-\(Int(limit)), \(Int(limit))]"))
        }
        return .success(value)
    }

    /// A column's text as an attribute value: a plain decimal number (no leading zeros, which would lose a code
    /// such as a postal code), `true` / `false`, or text.
    static func value(_ text: String) -> ParsedValue {
        if text == "true" { return .flag(true) }
        if text == "false" { return .flag(false) }
        let bytes = Array(text.utf8)
        var i = bytes.first == UInt8(ascii: "-") ? 1 : 0
        let digitsStart = i
        while i < bytes.count, bytes[i] >= 0x30, bytes[i] <= 0x39 { i += 1 }
        let intDigits = i - digitsStart
        var plain = intDigits > 0 && intDigits <= 15 && !(intDigits > 1 && bytes[digitsStart] == 0x30)
        if plain && i < bytes.count && bytes[i] == UInt8(ascii: ".") {
            i += 1
            let fraction = i
            while i < bytes.count, bytes[i] >= 0x30, bytes[i] <= 0x39 { i += 1 }
            plain = i > fraction
        }
        if plain && i == bytes.count, let number = Double(text) { return .number(number) }
        return .text(text)
    }

    static func trim(_ text: String) -> String {
        var s = Substring(text)
        while let first = s.unicodeScalars.first, first.properties.isWhitespace { s.unicodeScalars.removeFirst() }
        while let last = s.unicodeScalars.last, last.properties.isWhitespace { s.unicodeScalars.removeLast() }
        return String(s)
    }

    /// At most 40 characters of `text`, for messages.
    static func clip(_ text: String) -> String { text.count > 40 ? String(text.prefix(40)) + "…" : text }
}

/// A reason, as an Error so it can travel in a Result.
struct ParseProblemReason: Error {
    let text: String
    init(_ text: String) { self.text = text }
}
