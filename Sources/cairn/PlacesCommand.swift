// `cairn places`: operators' places of interest, straight on a data directory or on the PostgreSQL database several
// hubs share (`--storage-url`, `CAIRN_STORAGE_URL`, `storage.url` in the configuration file; see StorageOptions).
// `import` reads CSV or GeoJSON and upserts by (source, external id); with the hub stopped it takes the data
// directory's lock, and while a hub runs it writes beside it (SQLite in WAL mode lets both write) and then sends that
// hub SIGHUP, which makes it read the places again. On PostgreSQL it writes beside the hubs, which read the places
// again on SIGHUP or `places.reload`, each hub its own. `list` counts places by source and category; `remove
// --source` deletes a source's places.
import ArgumentParser
import CairnApp
import CairnPlaces
import Foundation

struct PlacesCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "places",
        abstract: "Import, list and remove places of interest (safe while the hub runs).",
        subcommands: [PlacesImport.self, PlacesList.self, PlacesRemove.self])
}

extension StorageOptions {
    /// Opens the data directory alone when no hub runs, beside the hub otherwise; answers the hub's pid then.
    func openForPlaces() throws -> (Maintenance, hub: Int32?) {
        CommandLogging.bootstrap()
        let storage = try resolve()
        guard case .dataDirectory(let directory) = storage else { return (try Self.open(storage, .besideHub), nil) }
        do {
            return (try Maintenance(dataDirectory: directory, access: .exclusive(purpose: "cairn places")), nil)
        } catch DataDirectoryLockError.held(_, let pid, let purpose) where purpose == "a hub" {
            do {
                return (try Maintenance(dataDirectory: directory, access: .besideHub), pid)
            } catch {
                throw CommandFailure("\(error)")
            }
        } catch {
            throw CommandFailure("\(error)")
        }
    }

    /// Asks the hub with `pid` to read the places again; on a shared database, tells the operator to ask each hub.
    func reloadHub(_ pid: Int32?, shared: Bool = false) {
        if shared {
            printError("the hubs on this database read places again on SIGHUP or places.reload: ask each one")
            return
        }
        guard let pid, pid > 0 else {
            printError("a hub is running: send it SIGHUP (or call places.reload) to pick up the change")
            return
        }
        if kill(pid, SIGHUP) == 0 {
            printError("asked the running hub (pid \(pid)) to reload its places")
        } else {
            printError("could not signal the hub (pid \(pid)): send it SIGHUP to pick up the change")
        }
    }
}

func printError(_ text: String) {
    FileHandle.standardError.write(Data((text + "\n").utf8))
}

struct PlacesImport: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "import",
        abstract: "Import places from a CSV file (header: lat, lon, name, optional category, id) or GeoJSON points.",
        discussion: """
            Upserts by (source, id): importing a newer file with the same --source updates the places it names. \
            Every bad row is reported by line and reason and the rest are imported (none with --strict).
            """)

    @Argument(help: "The CSV or GeoJSON file.")
    var file: String

    @Option(help: "Category of rows that name none.")
    var category: String = "place"

    @Option(help: "Source the places are filed under (re-importing with the same source updates them).")
    var source: String = "import"

    @Flag(help: "Import nothing if any row is bad.")
    var strict = false

    @OptionGroup var storage: StorageOptions

    func run() throws {
        let (data, hub) = try storage.openForPlaces()
        defer { try? data.close() }
        let options = PlaceImportOptions(source: source, category: category, strict: strict)
        let file = self.file
        let started = Date()
        nonisolated(unsafe) var lastShown = Date.distantPast
        let report: PlaceImportReport
        do {
            report = try runBlocking {
                try await data.importPlaces(file: file, options: options) { done, total in
                    guard total >= 20_000, Date().timeIntervalSince(lastShown) >= 1 || done == total else { return }
                    lastShown = Date()
                    printError("imported \(done) of \(total) places")
                }
            }
        } catch let error as MaintenanceError {
            throw CommandFailure(error.description)
        }
        for problem in report.problems { printError("\(file): \(problem)") }
        if report.refusedAll {
            throw CommandFailure(
                "\(report.problems.count) bad row(s); nothing imported (--strict)")
        }
        // A file with no good row (a wrong header, an empty file, every row bad) is a failed import, not zero places.
        if report.read == 0 && !report.problems.isEmpty {
            throw CommandFailure("no place could be read from \(file); nothing imported")
        }
        let seconds = Date().timeIntervalSince(started)
        print(
            "imported \(report.read) place(s) from \(file) as source '\(source)': \(report.inserted) new, "
                + "\(report.updated) updated, \(report.problems.count) bad row(s) skipped "
                + "(\(String(format: "%.1f", seconds)) s)")
        if hub != nil || data.isShared { storage.reloadHub(hub, shared: data.isShared) }
    }
}

struct PlacesList: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "list", abstract: "Count places by source and category.")

    @OptionGroup var storage: StorageOptions

    func run() throws {
        CommandLogging.bootstrap()
        let data = try storage.open(.besideHub)
        defer { try? data.close() }
        let counts = try runBlocking { try await data.placeCounts() }
        if counts.isEmpty { print("no places") }
        for count in counts { print("\(count.source)\t\(count.category)\t\(count.count)") }
    }
}

struct PlacesRemove: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "remove", abstract: "Remove every place of one source.")

    @Option(help: "The source whose places to remove.")
    var source: String

    @OptionGroup var storage: StorageOptions

    func run() throws {
        let (data, hub) = try storage.openForPlaces()
        defer { try? data.close() }
        let source = self.source
        let removed = try runBlocking { try await data.removePlaces(source: source) }
        print("removed \(removed) place(s) of source '\(source)'")
        if hub != nil || data.isShared { storage.reloadHub(hub, shared: data.isShared) }
    }
}
