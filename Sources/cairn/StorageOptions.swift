// Where the maintenance commands (`cairn user`, `places`, `backup`, `seed`) find the hub's data: the PostgreSQL
// database several hubs share (`storage.url`) or a data directory's SQLite (`storage.directory`). Both are resolved
// as `serve` resolves them (`SettingsLoader`): a flag wins over its CAIRN_* variable, which wins over the
// configuration file (--config, CAIRN_CONFIG), which wins over the default (./data). So a command run with the hub's
// own configuration works on the hub's data, and never on a new ./data made beside it. The default, ./data of
// wherever the command runs, is used only where it holds a hub's database: a command run from elsewhere without
// naming the data is refused, naming --data and --config, rather than work on (or make) data no hub reads.
import ArgumentParser
import CairnApp
import CairnConfig
import Foundation

/// The data a maintenance command works on.
enum MaintenanceStorage: Equatable {
    /// SQLite in this data directory.
    case dataDirectory(String)
    /// The PostgreSQL database at this URL (`storage.url`).
    case shared(url: String)
}

/// The storage options every maintenance command takes.
struct StorageOptions: ParsableArguments {
    @Option(help: "Data directory holding cairn.sqlite. [env: CAIRN_DATA] (default: from --config, else ./data)")
    var data: String?

    @Option(
        name: .customLong("storage-url"),
        help: "PostgreSQL database the hubs share (storage.url), instead of a data directory. [env: CAIRN_STORAGE_URL]")
    var storageURL: String?

    @Option(help: "Configuration file to read storage.directory and storage.url from. [env: CAIRN_CONFIG]")
    var config: String?

    /// The settings as `serve` would resolve them from these flags, the environment and the configuration file. Only
    /// the storage matters here: no file a hub would open (TLS keys and the like) is checked. A configuration that
    /// cannot be used ends the command as it ends `serve` (every problem listed, exit 78).
    func settings() throws -> ResolvedConfiguration {
        try SettingsLoader.resolve(
            configFile: config,
            arguments: (data.map { ["--data", $0] } ?? []) + (storageURL.map { ["--storage-url", $0] } ?? []),
            checks: [])
    }

    /// The database to work on: PostgreSQL when a storage URL is in force, else the data directory. A `--data` flag
    /// beside a storage URL is refused: whichever was meant, the other would change data no hub reads.
    /// `creating`: the command may make a new data directory (`seed`), so the default needs no database in it.
    func resolve(creating: Bool = false) throws -> MaintenanceStorage {
        let resolved = try settings()
        guard let url = resolved.app.storage.url else {
            if !creating { try Self.requireHubData(resolved) }
            return .dataDirectory(resolved.app.dataDirectory)
        }
        if data != nil {
            let source =
                switch resolved.setting("storage.url")?.source {
                case .flag(let flag): flag
                case .environment(let name): name
                case .file(let path): "storage.url in \(path)"
                case .defaultValue, nil: "storage.url"
                }
            throw CommandFailure(
                "both --data and a storage URL (\(source)) are given: the hubs keep their data in one of them; "
                    + "give only that one")
        }
        return .shared(url: url)
    }

    /// Refuses the default data directory (nothing named one) when it holds no hub database: the command runs from
    /// somewhere else than the hub's data, and says how to name it.
    static func requireHubData(_ resolved: ResolvedConfiguration) throws {
        guard resolved.app.storage.url == nil, resolved.setting("storage.directory")?.source == .defaultValue else {
            return
        }
        let directory = resolved.app.dataDirectory
        let fileManager = FileManager.default
        guard !fileManager.fileExists(atPath: (directory as NSString).appendingPathComponent("cairn.sqlite")) else {
            return
        }
        let installed = "/etc/cairn/cairn.toml"
        throw CommandFailure(
            "no hub data in \(directory) (the default, relative to \(fileManager.currentDirectoryPath)): name the "
                + "hub's data directory with --data DIR (or CAIRN_DATA), or its configuration with --config FILE "
                + "(or CAIRN_CONFIG)"
                + (fileManager.fileExists(atPath: installed) ? "; the installed hub's is --config \(installed)" : ""))
    }

    /// Opens the shared database when a storage URL is in force, else the data directory with `access`; any failure
    /// is a command failure (exit 1) saying why.
    func open(_ access: MaintenanceAccess) throws -> Maintenance { try Self.open(try resolve(), access) }

    /// Opens `storage`, a data directory with `access`; any failure is a command failure (exit 1) saying why.
    static func open(_ storage: MaintenanceStorage, _ access: MaintenanceAccess) throws -> Maintenance {
        do {
            switch storage {
            case .shared(let url): return try Maintenance(storageURL: url)
            case .dataDirectory(let directory): return try Maintenance(dataDirectory: directory, access: access)
            }
        } catch {
            throw CommandFailure("\(error)")
        }
    }
}
