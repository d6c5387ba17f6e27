// swift-tools-version:6.0
// Cairn: a realtime location hub. One module per layer; see docs/ARCHITECTURE.md for the graph.
import PackageDescription

let package = Package(
    name: "Cairn",
    platforms: [.macOS(.v14)],
    products: [
        .executable(name: "cairn", targets: ["cairn"]),
        .executable(name: "cairn-loadtest", targets: ["cairn-loadtest"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.6.0"),
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.0.0"),
        .package(url: "https://github.com/LebJe/TOMLKit", exact: "0.6.0"),
        .package(url: "https://github.com/apple/swift-metrics", from: "2.4.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus", from: "2.4.1"),
        .package(url: "https://github.com/HdrHistogram/hdrhistogram-swift", from: "0.2.0"),
    ],
    targets: [
        // C: libwebsockets plus the few things Swift cannot import (LWS_PRE, composite option macros, logging),
        // and the libev loop the transport runs lws on.
        .target(name: "CLws", linkerSettings: [.linkedLibrary("websockets"), .linkedLibrary("ev")]),
        // C: liburing, for the batch that hands a loop turn's frames to the kernel in one submission.
        .target(name: "CUring", linkerSettings: [.linkedLibrary("uring")]),
        // C: OpenSSL's libcrypto (scrypt, SHA-256, SHA-1, HMAC, secure random).
        // C: hiredis's async client, attached to the hub's libev loop by its (inline) libev adapter, and an ev_timer
        // for reconnect back-off and presence refresh (scale-out through Redis).
        .target(name: "CHiredis", linkerSettings: [.linkedLibrary("hiredis"), .linkedLibrary("ev")]),
        // C: libpq, PostgreSQL's client, for the store several nodes share (its notice processor set in C).
        .target(name: "CPostgres", linkerSettings: [.linkedLibrary("pq")]),
        .systemLibrary(name: "COpenSSL", pkgConfig: "libcrypto", providers: [.apt(["libssl-dev"])]),
        // C: OpenSSL's libssl, for the test client's TLS (the hub's TLS goes through libwebsockets).
        .systemLibrary(name: "CLibSSL", path: "Tests/CLibSSL", pkgConfig: "libssl", providers: [.apt(["libssl-dev"])]),

        // Pure layers: no I/O, no sockets, no SQLite.
        // The seam between the loop-owning transport and what it drives: connection ids, the loop scheduler,
        // outbound bytes, the connection handler, loop confinement, and plain HTTP services. No dependencies.
        .target(name: "CairnLoop"),
        .target(name: "CairnGeo"),
        .target(name: "CairnSpatial", dependencies: ["CairnGeo"]),
        // The contract's error codes, the one list both the domain and the wire use; knows neither.
        .target(name: "CairnErrorCodes"),
        .target(name: "CairnWire", dependencies: ["CairnErrorCodes"]),
        .target(name: "CairnCrypto", dependencies: ["COpenSSL"]),
        // Seeded randomness and the generated friend graph, shared by `cairn seed` and the load tester.
        .target(name: "CairnSeed"),

        // The domain: one module per feature; `internal` means "this feature". Each knows only the features below it;
        // a lower feature tells a higher one through a hook (a closure) the hub wires. None knows JSON, SQL or sockets.
        // The core every feature shares: clock, loop work, errors, configuration, the hub's events and the values they
        // carry, the figures (telemetry, stats readings), the roles port, the logger.
        .target(
            name: "CairnCore",
            dependencies: [
                "CairnLoop", "CairnGeo", "CairnErrorCodes", .product(name: "Logging", package: "swift-log"),
            ]),
        // Accounts, sessions, guests, presence, and the limits on guessing passwords.
        .target(
            name: "CairnSessions",
            dependencies: [
                "CairnCore", "CairnLoop", "CairnCrypto", .product(name: "Logging", package: "swift-log"),
                "CairnErrorCodes",
            ]),
        // The admin role's ops: browsing and suspending users (audited), live settings, daily figures.
        .target(name: "CairnAdmin", dependencies: ["CairnCore", "CairnLoop", "CairnSessions", "CairnErrorCodes"]),
        // Uploaded media: types, uploads, signed URLs, placeholders, the collection of unreferenced media.
        .target(
            name: "CairnMedia",
            dependencies: [
                "CairnCore", "CairnSessions", "CairnAdmin", "CairnCrypto",
                .product(name: "Logging", package: "swift-log"), "CairnErrorCodes",
            ]),
        // Places of interest: nearest, search, operators' writes.
        .target(
            name: "CairnPlaces",
            dependencies: [
                "CairnCore", "CairnLoop", "CairnGeo", "CairnSpatial", "CairnErrorCodes",
            ]),
        // The friend graph, friend requests and the sharing rules.
        .target(name: "CairnSocial", dependencies: ["CairnCore", "CairnSessions", "CairnErrorCodes"]),
        // Latest positions, watching and the fan-out of moves, late fixes, snapshots.
        .target(
            name: "CairnLiveMap",
            dependencies: ["CairnCore", "CairnLoop", "CairnGeo", "CairnSpatial", "CairnSessions", "CairnSocial"]),
        // Relics: markers on the map, their expiry, opening them.
        .target(
            name: "CairnRelics",
            dependencies: [
                "CairnCore", "CairnLoop", "CairnGeo", "CairnSpatial", "CairnSessions", "CairnSocial", "CairnLiveMap",
                "CairnMedia", "CairnErrorCodes",
            ]),
        // Messages between friends.
        .target(
            name: "CairnChat",
            dependencies: [
                "CairnCore", "CairnSocial", "CairnAdmin", "CairnErrorCodes", "CairnSessions",
            ]),
        // Display names, bios and photos.
        .target(
            name: "CairnProfiles",
            dependencies: [
                "CairnCore", "CairnLoop", "CairnSessions", "CairnMedia", "CairnErrorCodes",
            ]),
        // Buckets: shared collections of items, and who may see which item.
        .target(
            name: "CairnBuckets",
            dependencies: [
                "CairnCore", "CairnSocial", "CairnMedia", "CairnErrorCodes", "CairnSessions",
            ]),
        // Trackers bound to items: their reports (ingest), items' live positions, finding an item, safe zones and
        // left-behind alerts.
        .target(
            name: "CairnTrackers",
            dependencies: [
                "CairnCore", "CairnLoop", "CairnGeo", "CairnSpatial", "CairnCrypto", "CairnSessions", "CairnLiveMap",
                "CairnBuckets", "CairnErrorCodes",
            ]),
        // Pictures posted nearby or to events, and the events (hashtags) themselves.
        .target(
            name: "CairnPictures",
            dependencies: [
                "CairnCore", "CairnLoop", "CairnGeo", "CairnCrypto", "CairnSessions", "CairnSocial", "CairnLiveMap",
                "CairnAdmin", "CairnMedia", "CairnErrorCodes",
            ]),
        // The stats channel for operators.
        .target(
            name: "CairnStats",
            dependencies: [
                "CairnCore", "CairnLoop", "CairnSessions", "CairnLiveMap", "CairnErrorCodes",
            ]),
        // The hub: builds the features, wires their hooks, runs the tick and the shutdown drain (the one module that
        // knows every feature).
        .target(
            name: "CairnHub",
            dependencies: [
                "CairnCore", "CairnLoop", "CairnCrypto", "CairnSessions", "CairnAdmin", "CairnMedia", "CairnPlaces",
                "CairnSocial", "CairnLiveMap", "CairnRelics", "CairnChat", "CairnProfiles", "CairnBuckets",
                "CairnTrackers", "CairnPictures", "CairnStats", .product(name: "Logging", package: "swift-log"),
            ]),

        // Protocol: the op table, the router the transport drives, and the local event delivery; maps JSON
        // requests to the domain's features and their answers and events back to JSON.
        .target(
            name: "CairnProtocol",
            dependencies: [
                "CairnLoop", "CairnCore", "CairnSessions", "CairnAdmin", "CairnMedia", "CairnPlaces", "CairnSocial",
                "CairnLiveMap", "CairnRelics", "CairnChat", "CairnProfiles", "CairnBuckets", "CairnTrackers",
                "CairnPictures", "CairnStats", "CairnHub", "CairnWire", "CairnErrorCodes", "CairnGeo",
            ]),

        // The store written once: the domain's storage ports in SQL over a small database protocol (statements
        // with `?` parameters, typed rows, transactions off the loop) and a dialect for what SQLite and PostgreSQL
        // spell differently; plus the group-commit queue. Knows neither engine: CairnStore and CairnPostgres run it.
        .target(
            name: "CairnSQL",
            dependencies: [
                "CairnCore", "CairnSessions", "CairnAdmin", "CairnPlaces", "CairnSocial",
                "CairnRelics", "CairnChat", "CairnProfiles", "CairnBuckets", "CairnTrackers", "CairnPictures",
                "CairnGeo",
            ]),

        // Storage: SQLite through GRDB: schema and migrations, the pool, backup, media files; runs CairnSQL's ports.
        .target(
            name: "CairnStore",
            dependencies: [
                "CairnCrypto", "CairnSQL", "CairnCore", "CairnSessions", "CairnAdmin", "CairnMedia", "CairnPlaces",
                "CairnSocial",
                "CairnRelics", "CairnChat", "CairnProfiles", "CairnBuckets", "CairnTrackers", "CairnPictures",
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "Logging", package: "swift-log"),
            ]),

        // Shared storage for several nodes: PostgreSQL through libpq (schema, pool, bounded waits, media cache);
        // runs CairnSQL's ports, as CairnStore does.
        .target(
            name: "CairnPostgres",
            dependencies: [
                "CairnCrypto", "CPostgres", "CairnSQL", "CairnCore", "CairnSessions", "CairnAdmin", "CairnMedia",
                "CairnPlaces", "CairnSocial",
                "CairnRelics", "CairnChat", "CairnProfiles", "CairnBuckets", "CairnTrackers", "CairnPictures",
                .product(name: "Logging", package: "swift-log"),
            ]),

        // Transport: libwebsockets service thread, HTTP and WebSocket on one port. Drives a `ConnectionHandler`
        // (CairnLoop); knows no domain.
        .target(
            name: "CairnServer",
            dependencies: [
                "CLws", "CUring", "CairnLoop", "CairnWire",
                .product(name: "Logging", package: "swift-log"),
            ]),

        // Prometheus exposition of the hub's figures (swift-metrics API over swift-prometheus); only this module
        // knows a metrics library.
        .target(
            name: "CairnMetrics",
            dependencies: [
                "CairnCore", "CairnTrackers", .product(name: "CoreMetrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
            ]),

        // Scale-out: the link to Redis on the hub's libev loop (two async connections, reconnect with back-off) and
        // what nodes share through it (presence). Knows no JSON, no SQLite, no domain.
        .target(name: "CairnCluster", dependencies: ["CairnLoop", "CHiredis"]),

        // Several nodes: the node itself (`ClusterNode`: the Redis link plugged into the features' `Remote*` ports),
        // the table of control kinds (each with its typed payload and applier), item positions across nodes, the
        // position ask, the catch-up reads and fence. Built by the composition from `[cluster]`.
        .target(
            name: "CairnNodes",
            dependencies: [
                "CairnCluster", "CairnLoop", "CairnCrypto", "CairnCore", "CairnSessions", "CairnAdmin", "CairnSocial",
                "CairnLiveMap", "CairnRelics", "CairnBuckets", "CairnTrackers", "CairnPictures", "CairnStats",
                "CairnHub", "CairnProtocol", .product(name: "Logging", package: "swift-log"),
            ]),

        // A WebSocket client on libwebsockets' client role, for command-line tools (`cairn stats`).
        .target(name: "CairnClient", dependencies: ["CLws"]),

        // Composition: wires store, hub and transport into one running hub (used by the CLI and the tests).
        .target(
            name: "CairnApp",
            dependencies: [
                "CairnServer", "CairnCore", "CairnSessions", "CairnAdmin", "CairnMedia", "CairnPlaces", "CairnSocial",
                "CairnRelics", "CairnChat", "CairnProfiles", "CairnBuckets", "CairnTrackers", "CairnPictures",
                "CairnHub", "CairnStore", "CairnSQL", "CairnPostgres", "CairnProtocol", "CairnLoop", "CairnCrypto",
                "CairnMetrics", "CairnSeed", "CairnCluster", "CairnNodes",
                .product(name: "Logging", package: "swift-log"), "CairnWire",
            ]),

        // Configuration: the option table, TOML file, environment and flags merged into an AppConfiguration.
        .target(
            name: "CairnConfig",
            dependencies: [
                "CairnApp", "CairnCrypto",
                .product(name: "TOMLKit", package: "TOMLKit"),
                .product(name: "Logging", package: "swift-log"), "CairnCore", "CairnServer", "CairnSessions",
            ]),

        // The command line: serving and maintenance (`Maintenance`) go through the composition layer only.
        .executableTarget(
            name: "cairn",
            dependencies: [
                "CairnConfig", "CairnApp", "CairnClient",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ]),
        .executableTarget(
            name: "cairn-bench",
            dependencies: [
                "CairnLoop", "CairnCore", "CairnSessions", "CairnPictures", "CairnHub", "CairnWire", "CairnGeo",
                "CairnSpatial", "CairnProtocol", "CairnStore", "CairnCrypto", "CairnApp", "CairnSeed",
                "CairnServer",  // `bookkeeping` times the transport's own structures
            ], path: "Sources/CairnBench"),

        // The load tester (loadtest/): thousands of simulated users against Cairn over libwebsockets' client, or
        // the same workload against Mosquitto through libmosquitto. A client only: it links no server module.
        // libmosquitto is loaded at run time (dlopen), not linked: no build of Cairn needs an MQTT library.
        .target(name: "CMosquitto", path: "loadtest/Sources/CMosquitto", linkerSettings: [.linkedLibrary("dl")]),
        .target(
            name: "CairnLoadTest",
            dependencies: [
                "CLws", "CMosquitto", "CairnSeed",
                .product(name: "Histogram", package: "hdrhistogram-swift"),
            ], path: "loadtest/Sources/CairnLoadTest"),
        .executableTarget(
            name: "cairn-loadtest",
            dependencies: [
                "CairnLoadTest",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ], path: "loadtest/Sources/cairn-loadtest"),

        // Tests mirror the sources; CairnTestSupport holds a small blocking RFC 6455 client.
        .target(name: "CairnTestSupport", dependencies: ["COpenSSL", "CLibSSL"], path: "Tests/CairnTestSupport"),
        .testTarget(name: "CairnGeoTests", dependencies: ["CairnGeo"]),
        .testTarget(name: "CairnSpatialTests", dependencies: ["CairnSpatial", "CairnGeo"]),
        .testTarget(name: "CairnWireTests", dependencies: ["CairnWire", "CairnErrorCodes"]),
        .testTarget(name: "CairnCryptoTests", dependencies: ["CairnCrypto"]),
        .testTarget(name: "CairnSeedTests", dependencies: ["CairnSeed"]),
        // In-memory stores for the features' ports, a collecting scheduler, seeded randomness, recorded events,
        // fakes of other nodes, and a hub over them (`DomainHarness`), for the features' and the protocol's tests.
        .target(
            name: "CairnHubTestSupport",
            dependencies: [
                "CairnLoop", "CairnCore", "CairnAdmin", "CairnBuckets", "CairnChat", "CairnCrypto", "CairnGeo",
                "CairnHub", "CairnLiveMap", "CairnPictures", "CairnPlaces", "CairnProfiles", "CairnRelics",
                "CairnSessions", "CairnSocial", "CairnTrackers",
            ], path: "Tests/CairnHubTestSupport"),
        // The domain's tests, one target per feature (its rules, in memory, with a manual clock); those built on
        // `DomainHarness` drive the feature inside a whole hub.
        .testTarget(
            name: "CairnCoreTests",
            dependencies: ["CairnCore", "CairnErrorCodes", "CairnLoop", "CairnSeed", "CairnHubTestSupport"]),
        .testTarget(
            name: "CairnSessionsTests",
            dependencies: [
                "CairnSessions", "CairnCore", "CairnCrypto", "CairnErrorCodes", "CairnHub", "CairnLiveMap", "CairnLoop",
                "CairnSocial", "CairnHubTestSupport",
            ]),
        .testTarget(
            name: "CairnAdminTests",
            dependencies: ["CairnAdmin", "CairnCore", "CairnHub", "CairnLoop", "CairnHubTestSupport"]),
        .testTarget(
            name: "CairnMediaTests",
            dependencies: [
                "CairnMedia", "CairnCore", "CairnCrypto", "CairnLoop", "CairnSessions", "CairnHubTestSupport",
            ]),
        .testTarget(name: "CairnPlacesTests", dependencies: ["CairnPlaces", "CairnGeo"]),
        .testTarget(
            name: "CairnSocialTests",
            dependencies: [
                "CairnSocial", "CairnCore", "CairnErrorCodes", "CairnHub", "CairnLiveMap", "CairnLoop",
                "CairnHubTestSupport",
            ]),
        .testTarget(
            name: "CairnLiveMapTests",
            dependencies: [
                "CairnLiveMap", "CairnCore", "CairnGeo", "CairnHub", "CairnLoop", "CairnSessions", "CairnSocial",
                "CairnHubTestSupport",
            ]),
        .testTarget(
            name: "CairnRelicsTests",
            dependencies: ["CairnRelics", "CairnCore", "CairnGeo", "CairnLoop", "CairnHubTestSupport"]),
        .testTarget(
            name: "CairnTrackersTests",
            dependencies: [
                "CairnTrackers", "CairnBuckets", "CairnCore", "CairnErrorCodes", "CairnGeo", "CairnHub", "CairnLiveMap",
                "CairnLoop", "CairnSessions", "CairnSocial", "CairnHubTestSupport",
            ]),
        .testTarget(
            name: "CairnPicturesTests",
            dependencies: [
                "CairnPictures", "CairnAdmin", "CairnCore", "CairnErrorCodes", "CairnGeo", "CairnHub", "CairnLiveMap",
                "CairnLoop", "CairnSessions", "CairnSocial", "CairnHubTestSupport",
            ]),
        .testTarget(
            name: "CairnProtocolTests",
            dependencies: [
                "CairnProtocol", "CairnAdmin", "CairnCore", "CairnGeo", "CairnHub", "CairnLiveMap", "CairnLoop",
                "CairnMedia", "CairnPlaces", "CairnRelics", "CairnSessions", "CairnSocial", "CairnTrackers",
                "CairnWire", "CairnHubTestSupport", "CairnTestSupport", "CairnBuckets", "CairnSpatial", "CairnStats",
            ]),
        .testTarget(
            name: "CairnStoreTests",
            dependencies: [
                "CairnStore", "CairnCore", "CairnSessions", "CairnAdmin", "CairnMedia", "CairnPlaces", "CairnSocial",
                "CairnRelics", "CairnChat", "CairnProfiles", "CairnBuckets", "CairnTrackers", "CairnPictures",
                "CairnPostgres", "CairnSQL", "CairnCrypto", "CairnSeed", "CairnTestSupport", "CairnGeo",
            ]),
        .testTarget(
            name: "CairnPostgresTests",
            dependencies: [
                "CairnPostgres", "CairnCrypto", "CairnTestSupport", "CairnCore", "CairnSQL",
            ]),
        .testTarget(name: "CairnMetricsTests", dependencies: ["CairnMetrics", "CairnCore", "CairnTestSupport"]),
        .testTarget(
            name: "CairnAppTests",
            dependencies: [
                "CairnApp", "CairnCore", "CairnSessions", "CairnStore", "CairnCrypto", "CairnSQL", "CairnSeed",
                "CairnSocial",
            ]),
        .testTarget(
            name: "CairnClusterTests", dependencies: ["CairnCluster", "CairnLoop", "CLws", "CairnTestSupport"]),
        .testTarget(
            name: "CairnNodesTests",
            dependencies: [
                "CairnNodes", "CairnCluster", "CairnCore", "CairnSessions", "CairnSocial", "CairnTrackers", "CairnHub",
                "CairnHubTestSupport", .product(name: "Logging", package: "swift-log"), "CairnLoop",
            ]),
        .testTarget(
            name: "CairnConfigTests",
            dependencies: [
                "CairnConfig", "CairnApp", "CairnServer", "CairnCore", "CairnCrypto",
            ]),
        // The transport's own types, without a hub.
        .testTarget(name: "CairnServerTests", dependencies: ["CairnServer", "CairnLoop", "CairnTestSupport"]),
        // The system tests: real hubs, in this process or as `cairn` processes (and Redis, PostgreSQL), driven over
        // sockets.
        .testTarget(
            name: "CairnSystemTests",
            dependencies: [
                "CairnApp", "CairnConfig", "CairnCore", "CairnCrypto", "CairnLoop", "CairnMedia", "CairnServer",
                "CairnSessions", "CairnStore", "CairnTrackers", "CairnTestSupport",
                // CairnConfig's TOML parser has a C++ core whose module the compiler must see from here too.
                .product(name: "TOMLKit", package: "TOMLKit"),
            ]),
        .testTarget(
            name: "CairnLoadTestTests", dependencies: ["CairnLoadTest", "CairnSeed", "CairnTestSupport"],
            path: "loadtest/Tests/CairnLoadTestTests"),
    ]
)

// Stricter rules for every Swift target: a file sees only the members of modules it imports itself
// (MemberImportVisibility), an import is internal unless it says what it exposes (InternalImportsByDefault), and an
// existential is spelled `any` (ExistentialAny).
let cTargets: Set<String> = ["CLws", "CUring", "CHiredis", "CPostgres", "COpenSSL", "CLibSSL"]
for target in package.targets where !cTargets.contains(target.name) {
    target.swiftSettings =
        (target.swiftSettings ?? []) + [
            .enableUpcomingFeature("MemberImportVisibility"),
            .enableUpcomingFeature("InternalImportsByDefault"),
            .enableUpcomingFeature("ExistentialAny"),
        ]
}
