// The web app's options from every source: they land in `AppConfiguration.web`, and what would make the page's
// policy or the served directories wrong (a tile template that is not a plain http(s) URL, a root that is not a
// directory) is refused by name before the hub starts.
import CairnApp
import Foundation
import Testing

@testable import CairnConfig

@Suite(.timeLimit(.minutes(5))) struct WebOptionsTests {
    @Test func optionsLandInTheWebConfiguration() throws {
        let root = NSTemporaryDirectory()
        let resolved = try ConfigurationResolver.resolve(environment: [
            "CAIRN_WEB_ROOT": root, "CAIRN_WEB_TILES": "https://{s}.tile.example.org/{z}/{x}/{y}.png",
            "CAIRN_WEB_TILES_ATTRIBUTION": "© Example",
        ])
        #expect(resolved.app.web.root == root)
        #expect(resolved.app.web.tiles == "https://{s}.tile.example.org/{z}/{x}/{y}.png")
        #expect(resolved.app.web.tilesAttribution == "© Example")
        #expect(resolved.app.web.clientRoot == nil)
    }

    @Test(arguments: [
        (["CAIRN_WEB_TILES": "https://tile.example/{z}/{x}.png"], "needs the placeholders {z}, {x} and {y}"),
        (["CAIRN_WEB_TILES": "https://x.example; script-src */{z}/{x}/{y}"], "web.tiles \"https://x.example;"),
        (["CAIRN_WEB_TILES": "//tile.example/{z}/{x}/{y}.png"], "must be an http:// or https:// URL"),
        (["CAIRN_WEB_ROOT": "/nonexistent/web"], "web.root \"/nonexistent/web\" is not a directory"),
        (["CAIRN_WEB_CLIENT_ROOT": "/nonexistent/js"], "web.client_root \"/nonexistent/js\" is not a directory"),
    ])
    func problemsNameTheKey(environment: [String: String], message: String) {
        #expect {
            _ = try ConfigurationResolver.resolve(environment: environment)
        } throws: { error in
            String(describing: error).contains(message)
        }
    }
}
