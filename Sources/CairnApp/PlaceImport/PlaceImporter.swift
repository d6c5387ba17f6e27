// `cairn places import`: reads a CSV or GeoJSON file (PlaceCSV, PlaceGeoJSON), checks every place by the rules
// the hub applies to `place.upsert` (`Places.problem(with:)`), and upserts the good ones by (source, external id)
// in batches, reporting progress. Every bad row is named by its line and reason and the rest are imported; with
// `strict`, one bad row means nothing is imported. A running hub does not see the rows until it reloads
// (SIGHUP or `places.reload`); the command line sends the signal itself when it finds a hub holding the directory.
public import CairnPlaces
import CairnStore
import Foundation

/// How to import a file of places.
public struct PlaceImportOptions: Sendable {
    /// The source the places are upserted under (re-importing with the same source updates them).
    public var source: String
    /// The category of rows that name none.
    public var category: String
    /// Import nothing when any row is bad.
    public var strict: Bool
    /// Places written per transaction (and per progress report).
    public var batchSize: Int

    /// Creates the value.
    public init(source: String = "import", category: String = "place", strict: Bool = false, batchSize: Int = 5000) {
        self.source = source
        self.category = category
        self.strict = strict
        self.batchSize = batchSize
    }
}

/// What an import did.
public struct PlaceImportReport: Sendable {
    /// Places read from the file (good rows).
    public var read = 0
    /// Places newly inserted.
    public var inserted = 0
    /// Places that existed (same source and external id) and were updated.
    public var updated = 0
    /// Rows refused, by line.
    public var problems: [ParseProblem] = []
    /// True when nothing was written because of `strict`.
    public var refusedAll = false
}

extension Maintenance {
    /// Imports the places in `file` (CSV, or GeoJSON when it ends in .geojson / .json or starts with `{`).
    /// `progress(done, total)` is called after each batch.
    public func importPlaces(
        file: String, options: PlaceImportOptions, progress: (Int, Int) -> Void = { _, _ in }
    ) async throws -> PlaceImportReport {
        guard let data = FileManager.default.contents(atPath: file) else {
            throw MaintenanceError.unreadableFile(file)
        }
        let bytes = [UInt8](data)
        let parsed = Self.isGeoJSON(path: file, bytes: bytes) ? PlaceGeoJSON.parse(bytes) : PlaceCSV.parse(bytes)
        var report = PlaceImportReport()
        report.problems = parsed.problems
        var drafts: [PlaceDraft] = []
        drafts.reserveCapacity(parsed.places.count)
        for place in parsed.places {
            let draft = PlaceDraft(
                source: options.source, externalID: place.externalID, name: place.name,
                category: place.category ?? options.category, lat: place.lat, lon: place.lon,
                attributes: place.attributes.map { attribute in
                    switch attribute.value {
                    case .text(let text): PlaceAttribute(attribute.name, .text(text))
                    case .number(let number): PlaceAttribute(attribute.name, .number(number))
                    case .flag(let flag): PlaceAttribute(attribute.name, .flag(flag))
                    }
                })
            if let problem = Places.problem(with: draft) {
                report.problems.append(ParseProblem(line: place.line, reason: problem))
            } else {
                drafts.append(draft)
            }
        }
        report.problems.sort { $0.line < $1.line }
        report.read = drafts.count
        if options.strict && !report.problems.isEmpty {
            report.refusedAll = true
            return report
        }
        var done = 0
        while done < drafts.count {
            let batch = Array(drafts[done..<min(drafts.count, done + max(1, options.batchSize))])
            report.inserted += try await store.upsertPlaces(batch)
            done += batch.count
            progress(done, drafts.count)
        }
        report.updated = drafts.count - report.inserted
        return report
    }

    /// How many places each source and category hold.
    public func placeCounts() async throws -> [PlaceCount] { try await store.placeCounts() }

    /// Removes every place of `source`; answers how many.
    public func removePlaces(source: String) async throws -> Int { try await store.removePlaces(source: source) }

    private static func isGeoJSON(path: String, bytes: [UInt8]) -> Bool {
        let lower = path.lowercased()
        if lower.hasSuffix(".geojson") || lower.hasSuffix(".json") { return true }
        if lower.hasSuffix(".csv") { return false }
        let first = bytes.first { $0 != 0x20 && $0 != 0x0A && $0 != 0x0D && $0 != 0x09 }
        return first == UInt8(ascii: "{")
    }
}
