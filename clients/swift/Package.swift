// swift-tools-version:6.1
// CairnKit: the Swift client of a Cairn hub, a package of its own so that an app depends on it without the hub's C
// libraries. The core (codec, requests, connection state, back-off, re-watch) is free of I/O; the default transport is
// swift-websocket's WSClient (SwiftNIO), which runs on Linux and, through NIOTransportServices, on Apple platforms.
import PackageDescription

let package = Package(
    name: "CairnKit",
    platforms: [.iOS(.v16), .macOS(.v13)],
    products: [
        .library(name: "CairnKit", targets: ["CairnKit"]),
        .executable(name: "cairn-friends", targets: ["CairnFriends"]),
    ],
    dependencies: [
        // `from:` rather than `exact:`: an app that also uses SwiftNIO must not be pinned to one release of it.
        .package(url: "https://github.com/hummingbird-project/swift-websocket", from: "1.6.2"),
        // Named for the modules the transport imports itself, at the versions swift-websocket resolves to.
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.3"),
        .package(url: "https://github.com/apple/swift-http-types", from: "1.8.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
    ],
    targets: [
        .target(
            name: "CairnKit",
            dependencies: [
                .product(name: "WSClient", package: "swift-websocket"),
                .product(name: "NIOWebSocket", package: "swift-nio"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // The example: signs in and prints friends' moves as they happen.
        .executableTarget(name: "CairnFriends", dependencies: ["CairnKit"]),
        .testTarget(name: "CairnKitTests", dependencies: ["CairnKit"]),
    ],
    swiftLanguageModes: [.v6]
)
