// Places from CSV (RFC 4180: quoted fields with doubled quotes and line breaks inside, CRLF or LF, an optional
// UTF-8 byte order mark). The header names the columns: `lat` (or `latitude`), `lon` (or `lng`, `long`,
// `longitude`) and `name` are required; `category` and `id` are optional; every other column becomes an attribute
// of the place (numbers and true/false typed, empty cells left out). Each bad row is named by its line and reason
// and the rest are read.

/// Reads places from CSV text.
public enum PlaceCSV {
    /// Parses `bytes`; a file without the required header columns is one problem at line 1.
    public static func parse(_ bytes: [UInt8]) -> ParsedPlaces {
        var result = ParsedPlaces()
        var reader = CSVReader(bytes)
        guard let header = reader.next() else {
            result.problems.append(ParseProblem(line: 1, reason: "the file is empty (a header line is needed)"))
            return result
        }
        let names = header.fields.map { ParsedChecks.trim($0).lowercased() }
        func column(_ candidates: [String]) -> Int? { names.firstIndex { candidates.contains($0) } }
        guard let latColumn = column(["lat", "latitude"]), let lonColumn = column(["lon", "lng", "long", "longitude"]),
            let nameColumn = column(["name"])
        else {
            result.problems.append(
                ParseProblem(line: header.line, reason: "the header must name the columns lat, lon and name"))
            return result
        }
        if let error = header.error {
            result.problems.append(ParseProblem(line: header.line, reason: error))
            return result
        }
        let categoryColumn = column(["category"])
        let idColumn = column(["id"])
        let special: Set<Int> = Set([latColumn, lonColumn, nameColumn] + [categoryColumn, idColumn].compactMap { $0 })
        while let row = reader.next() {
            if let error = row.error {
                result.problems.append(ParseProblem(line: row.line, reason: error))
                continue
            }
            if row.fields.count == 1 && ParsedChecks.trim(row.fields[0]).isEmpty { continue }  // a blank line
            guard row.fields.count == names.count else {
                result.problems.append(
                    ParseProblem(
                        line: row.line, reason: "\(row.fields.count) columns where the header has \(names.count)"))
                continue
            }
            let lat: Double
            let lon: Double
            switch ParsedChecks.coordinate(row.fields[latColumn], "lat", limit: 90) {
            case .success(let v): lat = v
            case .failure(let reason):
                result.problems.append(ParseProblem(line: row.line, reason: reason.text))
                continue
            }
            switch ParsedChecks.coordinate(row.fields[lonColumn], "lon", limit: 180) {
            case .success(let v): lon = v
            case .failure(let reason):
                result.problems.append(ParseProblem(line: row.line, reason: reason.text))
                continue
            }
            let name = ParsedChecks.trim(row.fields[nameColumn])
            guard !name.isEmpty else {
                result.problems.append(ParseProblem(line: row.line, reason: "name is empty"))
                continue
            }
            let category = categoryColumn.map { ParsedChecks.trim(row.fields[$0]) }.flatMap { $0.isEmpty ? nil : $0 }
            let id = idColumn.map { ParsedChecks.trim(row.fields[$0]) }.flatMap { $0.isEmpty ? nil : $0 }
            var attributes: [(name: String, value: ParsedValue)] = []
            for (i, field) in row.fields.enumerated() where !special.contains(i) {
                let text = ParsedChecks.trim(field)
                if text.isEmpty || names[i].isEmpty { continue }
                attributes.append((names[i], ParsedChecks.value(text)))
            }
            result.places.append(
                ParsedPlace(
                    line: row.line, externalID: id, name: name, category: category, lat: lat, lon: lon,
                    attributes: attributes))
        }
        return result
    }
}

/// Splits CSV bytes into records with the line each starts on.
struct CSVReader {
    struct Record {
        var line: Int
        var fields: [String]
        /// Why the record is malformed (an unclosed quote, text after a closing quote), if it is.
        var error: String?
    }

    private let bytes: [UInt8]
    private var i = 0
    private var line = 1

    init(_ bytes: [UInt8]) {
        self.bytes = bytes
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { i = 3 }
    }

    mutating func next() -> Record? {
        guard i < bytes.count else { return nil }
        var record = Record(line: line, fields: [])
        var field: [UInt8] = []
        while true {
            if i >= bytes.count {
                record.fields.append(String(decoding: field, as: UTF8.self))
                return record
            }
            let byte = bytes[i]
            if byte == UInt8(ascii: "\"") && field.isEmpty {
                i += 1
                var closed = false
                while i < bytes.count {
                    let b = bytes[i]
                    if b == UInt8(ascii: "\"") {
                        if i + 1 < bytes.count && bytes[i + 1] == UInt8(ascii: "\"") {
                            field.append(b)
                            i += 2
                            continue
                        }
                        i += 1
                        closed = true
                        break
                    }
                    if b == UInt8(ascii: "\n") { line += 1 }
                    field.append(b)
                    i += 1
                }
                if !closed {
                    record.error = "a quoted field is not closed"
                    record.fields.append(String(decoding: field, as: UTF8.self))
                    return record
                }
                // After the closing quote: a separator, the end of the record, or a mistake.
                if i < bytes.count, bytes[i] != UInt8(ascii: ","), bytes[i] != UInt8(ascii: "\n"),
                    bytes[i] != UInt8(ascii: "\r"), record.error == nil
                {
                    record.error = "text after a closing quote"
                }
                continue
            }
            switch byte {
            case UInt8(ascii: ","):
                record.fields.append(String(decoding: field, as: UTF8.self))
                field.removeAll(keepingCapacity: true)
                i += 1
            case UInt8(ascii: "\r") where i + 1 < bytes.count && bytes[i + 1] == UInt8(ascii: "\n"):
                i += 1
            case UInt8(ascii: "\n"):
                i += 1
                line += 1
                record.fields.append(String(decoding: field, as: UTF8.self))
                return record
            default:
                field.append(byte)
                i += 1
            }
        }
    }
}
