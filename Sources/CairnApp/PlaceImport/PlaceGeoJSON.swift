// Places from GeoJSON: a FeatureCollection (or a single Feature) of Point features. The name comes from the
// property `name` (or `title`), the category from `category`, the external id from the feature's `id` (or the
// property `id`); every other property that is a string, a number or a boolean becomes an attribute. A feature
// that is not a point, or lacks a name or valid coordinates, is named by the line it starts on and skipped.

/// Reads places from GeoJSON text.
public enum PlaceGeoJSON {
    /// Parses `bytes`; a document that is not JSON or not a feature collection is one problem.
    public static func parse(_ bytes: [UInt8]) -> ParsedPlaces {
        var result = ParsedPlaces()
        let document: ImportJSON
        switch ImportJSON.parse(bytes) {
        case .success(let value): document = value
        case .failure(let error):
            result.problems.append(
                ParseProblem(line: lineOf(error.offset, in: bytes), reason: "not JSON: \(error.reason)"))
            return result
        }
        let features: [ImportJSON]
        switch document["type"] {
        case .string("FeatureCollection"):
            guard case .array(let list)? = document["features"] else {
                result.problems.append(ParseProblem(line: 1, reason: "the FeatureCollection has no 'features' array"))
                return result
            }
            features = list
        case .string("Feature"): features = [document]
        default:
            result.problems.append(ParseProblem(line: 1, reason: "not a GeoJSON FeatureCollection or Feature"))
            return result
        }
        var lines = LineCounter(bytes: bytes)
        for feature in features {
            guard case .object(_, let offset) = feature else {
                result.problems.append(ParseProblem(line: 1, reason: "a feature is not an object"))
                continue
            }
            let line = lines.line(at: offset)
            switch read(feature, line: line) {
            case .success(let place): result.places.append(place)
            case .failure(let reason): result.problems.append(ParseProblem(line: line, reason: reason.text))
            }
        }
        return result
    }

    private static func read(_ feature: ImportJSON, line: Int) -> Result<ParsedPlace, ParseProblemReason> {
        guard case .string("Feature")? = feature["type"] else { return .failure(.init("not a Feature")) }
        guard let geometry = feature["geometry"], case .string(let kind)? = geometry["type"] else {
            return .failure(.init("the feature has no geometry"))
        }
        guard kind == "Point" else {
            return .failure(.init("the geometry is a \(ParsedChecks.clip(kind)), not a Point"))
        }
        guard case .array(let coordinates)? = geometry["coordinates"], coordinates.count >= 2,
            case .number(let lon) = coordinates[0], case .number(let lat) = coordinates[1]
        else { return .failure(.init("the point's coordinates are not [lon, lat]")) }
        guard lat >= -90 && lat <= 90 else { return .failure(.init("lat \(lat) is out of range [-90, 90]")) }
        guard lon >= -180 && lon <= 180 else { return .failure(.init("lon \(lon) is out of range [-180, 180]")) }
        var name: String?
        var category: String?
        var id = identifier(feature["id"])
        var attributes: [(name: String, value: ParsedValue)] = []
        if case .object(let properties, _)? = feature["properties"] {
            for (key, value) in properties {
                switch key {
                case "name", "title":
                    if name == nil, case .string(let text) = value { name = ParsedChecks.trim(text) }
                case "category":
                    if case .string(let text) = value { category = ParsedChecks.trim(text) }
                case "id":
                    if id == nil { id = identifier(value) }
                default:
                    switch value {
                    case .string(let text) where !text.isEmpty: attributes.append((key, .text(text)))
                    case .number(let number): attributes.append((key, .number(number)))
                    case .bool(let flag): attributes.append((key, .flag(flag)))
                    default: continue
                    }
                }
            }
        }
        guard let name, !name.isEmpty else { return .failure(.init("the feature has no 'name' property")) }
        return .success(
            ParsedPlace(
                line: line, externalID: id, name: name, category: category?.isEmpty == true ? nil : category,
                lat: lat, lon: lon, attributes: attributes))
    }

    /// A feature id (string or integral number) as text.
    private static func identifier(_ value: ImportJSON?) -> String? {
        switch value {
        case .string(let text)? where !text.isEmpty: return text
        case .number(let number)? where number == number.rounded() && abs(number) < 1e15: return String(Int64(number))
        default: return nil
        }
    }

    private static func lineOf(_ offset: Int, in bytes: [UInt8]) -> Int {
        var counter = LineCounter(bytes: bytes)
        return counter.line(at: offset)
    }
}

/// Line numbers of increasing byte offsets, counting newlines once.
private struct LineCounter {
    let bytes: [UInt8]
    var position = 0
    var line = 1

    mutating func line(at offset: Int) -> Int {
        if offset < position {
            position = 0
            line = 1
        }
        let end = min(offset, bytes.count)
        while position < end {
            if bytes[position] == 0x0A { line += 1 }
            position += 1
        }
        return line
    }
}
