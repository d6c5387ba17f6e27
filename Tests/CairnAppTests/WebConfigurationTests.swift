// Where the hub looks for the web app and the client library (the documented search order), the tile host the
// Content-Security-Policy admits and the templates `cairn config check` refuses, the policy's WebSocket source from
// the Host header, and `/config.json`'s body.
import Foundation
import Testing

@testable import CairnApp

@Suite(.timeLimit(.minutes(5))) struct WebConfigurationTests {
    /// A tree `base/` with `base/opt/bin/cairn`, to be given web folders.
    final class Tree {
        let base = NSTemporaryDirectory() + "cairn-webconf-\(UUID().uuidString)"
        var binary: String { base + "/opt/bin/cairn" }

        init() throws {
            try FileManager.default.createDirectory(atPath: base + "/opt/bin", withIntermediateDirectories: true)
            try Data().write(to: URL(fileURLWithPath: binary))
        }

        func site(_ directory: String) throws {
            try FileManager.default.createDirectory(atPath: base + directory, withIntermediateDirectories: true)
            try Data("<!doctype html>".utf8).write(to: URL(fileURLWithPath: base + directory + "/index.html"))
        }

        func folder(_ directory: String) throws {
            try FileManager.default.createDirectory(atPath: base + directory, withIntermediateDirectories: true)
        }

        deinit { try? FileManager.default.removeItem(atPath: base) }
    }

    func configuration(_ tree: Tree) -> WebConfiguration {
        var web = WebConfiguration()
        web.executable = tree.binary
        return web
    }

    @Test func theWebRootIsSearchedUpFromTheBinaryNearestFirst() throws {
        let tree = try Tree()
        let web = configuration(tree)
        #expect(web.findRoot(currentDirectory: tree.base + "/nowhere") == nil)
        try tree.site("/web")
        #expect(web.findRoot() == tree.base + "/web")
        try tree.site("/opt/share/cairn/web")  // an installed layout: <prefix>/bin and <prefix>/share/cairn/web
        #expect(web.findRoot() == tree.base + "/opt/share/cairn/web")
        try tree.site("/opt/bin/web")
        #expect(web.findRoot() == tree.base + "/opt/bin/web")
        try tree.folder("/opt/bin/web2")  // a web/ without index.html does not count
        var configured = web
        configured.root = tree.base + "/elsewhere"
        #expect(configured.findRoot() == tree.base + "/elsewhere")
    }

    @Test func theCurrentDirectoryIsTheLastPlaceLookedAt() throws {
        let tree = try Tree()
        try tree.folder("/opt/bin/web")  // no index.html: skipped
        try tree.site("/work/web")
        #expect(configuration(tree).findRoot(currentDirectory: tree.base + "/work") == tree.base + "/work/web")
    }

    @Test func theClientLibraryIsBesideTheWebRoot() throws {
        let tree = try Tree()
        let web = configuration(tree)
        #expect(web.findClientRoot(webRoot: nil) == nil)
        try tree.folder("/opt/clients/js")
        #expect(web.findClientRoot(webRoot: nil) == tree.base + "/opt/clients/js")
        try tree.folder("/srv/clients/js")
        #expect(web.findClientRoot(webRoot: tree.base + "/srv/web") == tree.base + "/srv/clients/js")
        var configured = web
        configured.clientRoot = "/x"
        #expect(configured.findClientRoot(webRoot: tree.base + "/srv/web") == "/x")
    }

    @Test func tileTemplatesGiveTheirOrigin() {
        #expect(
            WebConfiguration.tileSource("https://{s}.tile.openstreetmap.org/{z}/{x}/{y}.png")
                == "https://*.tile.openstreetmap.org")
        #expect(
            WebConfiguration.tileSource("https://tile.openstreetmap.org/{z}/{x}/{y}.png")
                == "https://tile.openstreetmap.org")
        #expect(WebConfiguration.tileSource("http://Tiles.Example:8080/{z}/{x}/{y}.png") == "http://tiles.example:8080")
        for bad in [
            "ftp://a.example/{z}/{x}/{y}", "https://a.{s}.example/{z}/{x}/{y}", "https://localhost/{z}/{x}/{y}",
            "https://{s}.org/{z}/{x}/{y}.png",
            "https://a.example;script-src:*/{z}", "https://a.example:x/{z}", "https://a.example 'unsafe-inline'/",
            "https://*.example/{z}/{x}/{y}", "tile.example/{z}/{x}/{y}",
        ] {
            #expect(WebConfiguration.tileSource(bad) == nil, "\(bad)")
            #expect(WebConfiguration.problem(tiles: bad) != nil, "\(bad)")
        }
        #expect(WebConfiguration.problem(tiles: "https://tile.example/{z}/{x}.png")?.contains("{y}") == true)
        #expect(WebConfiguration.problem(tiles: "https://tile.example/{z}/{x}/{y}.png?k=a b") != nil)
        #expect(WebConfiguration.problem(tiles: "https://{s}.tile.example/{z}/{x}/{y}.png?key=abc") == nil)
    }

    @Test func thePolicyNamesTheHostOnlyWhenItIsPlain() {
        var web = WebConfiguration()
        let policy = web.contentSecurityPolicy(host: "hub.example:443")
        #expect(policy.contains("connect-src 'self' ws://hub.example:443 wss://hub.example:443;"))
        #expect(policy.contains("img-src 'self' data: blob:;"))
        #expect(policy.hasPrefix("default-src 'self';") && policy.hasSuffix("frame-ancestors 'none'"))
        #expect(web.contentSecurityPolicy(host: "[::1]:7681").contains("ws://[::1]:7681 "))
        for hostile in ["a; script-src *", "a b", "a'", "", nil] {
            #expect(web.contentSecurityPolicy(host: hostile).contains("connect-src 'self';"), "\(hostile ?? "nil")")
        }
        web.tiles = "https://tile.example/{z}/{x}/{y}.png"
        #expect(web.contentSecurityPolicy(host: nil).contains("img-src 'self' data: blob: https://tile.example;"))
    }

    @Test func pageConfigurationIsJSONWithNulls() throws {
        var web = WebConfiguration()
        #expect(String(decoding: web.pageConfiguration, as: UTF8.self) == #"{"tiles":null,"attribution":null}"#)
        web.tiles = "https://tile.example/{z}/{x}/{y}.png"
        web.tilesAttribution = "© \"Example\""
        let object = try JSONSerialization.jsonObject(with: Data(web.pageConfiguration)) as? [String: String]
        #expect(object == ["tiles": "https://tile.example/{z}/{x}/{y}.png", "attribution": "© \"Example\""])
    }
}
