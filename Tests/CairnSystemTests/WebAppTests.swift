// The web app's files over real HTTP on the hub's port: `/` and its headers (type, Content-Security-Policy, ETag,
// caching), 304 on a current copy, HEAD, paths that try to leave the web root (`..` plain and encoded, symbolic
// links, hidden files, NUL), methods other than GET and HEAD, the client library and the vendored browser
// libraries, `/config.json` and the tile host in the policy, the admin console at `/admin` (a directory named without
// its `/` is sent to it), and the hub's other routes left as they were.
import CairnApp
import CairnTestSupport
import Foundation
import Testing

extension ServerIntegration {
    @Suite struct WebAppTests {
        /// A web root `site/` with an index and a file inside, next to a secret it must never serve, and links out.
        final class Site {
            let base = NSTemporaryDirectory() + "cairn-web-\(UUID().uuidString)"
            var root: String { base + "/site" }
            var clients: String { base + "/clients/js" }
            static let secret = "TOP SECRET, outside the web root"

            init() throws {
                let files = FileManager.default
                try files.createDirectory(atPath: root + "/css", withIntermediateDirectories: true)
                try files.createDirectory(atPath: clients, withIntermediateDirectories: true)
                try write("<!doctype html><title>t</title><p data-connection=\"offline\">", to: root + "/index.html")
                try write("body{}", to: root + "/css/app.css")
                try write("hidden", to: root + "/.hidden")
                try write(Self.secret, to: base + "/secret.txt")
                try write("export class CairnClient {}\n", to: clients + "/cairn.js")
                try write("export declare class CairnClient {}\n", to: clients + "/cairn.d.ts")
                try write("not for the web\n", to: clients + "/package.json")
                try files.createSymbolicLink(atPath: root + "/out", withDestinationPath: base + "/secret.txt")
                try files.createSymbolicLink(atPath: root + "/up", withDestinationPath: base)
                try files.createSymbolicLink(atPath: root + "/inside.css", withDestinationPath: root + "/css/app.css")
            }

            func write(_ text: String, to path: String) throws {
                try text.write(toFile: path, atomically: false, encoding: .utf8)
            }

            deinit { try? FileManager.default.removeItem(atPath: base) }
        }

        func hub(_ site: Site, tiles: String? = nil) throws -> RunningHub {
            try RunningHub {
                $0.web.root = site.root
                $0.web.tiles = tiles
                $0.web.tilesAttribution = tiles == nil ? nil : "© OpenStreetMap contributors"
            }
        }

        @Test func rootServesTheRepositorysIndexWithTypePolicyAndTag() throws {
            let hub = try RunningHub()  // no web.root: found by walking up from the test binary
            defer { hub.removeData() }
            let response = try HTTPClient.get(port: hub.port, path: "/")
            #expect(response.status == 200)
            #expect(response.headers["content-type"] == "text/html; charset=utf-8")
            #expect(response.text.contains("data-connection") && response.text.contains("/cairn.js"))
            let policy = try #require(response.headers["content-security-policy"])
            #expect(policy.contains("default-src 'self'"))
            #expect(policy.contains("connect-src 'self' ws://127.0.0.1:\(hub.port) wss://127.0.0.1:\(hub.port)"))
            #expect(policy.contains("img-src 'self' data: blob:;"))
            #expect(policy.contains("frame-ancestors 'none'"))
            #expect(response.headers["x-content-type-options"] == "nosniff")
            #expect(response.headers["cache-control"] == "no-cache")
            let index = try String(contentsOfFile: Self.repository + "/web/index.html", encoding: .utf8)
            #expect(response.text == index)
            #expect(response.headers["etag"]?.hasPrefix("\"") == true)
        }

        @Test func aCurrentCopyIs304AndHeadSendsNoBody() throws {
            let site = try Site()
            let hub = try hub(site)
            defer { hub.removeData() }
            let first = try HTTPClient.get(port: hub.port, path: "/")
            let tag = try #require(first.headers["etag"])
            let again = try HTTPClient.get(port: hub.port, path: "/", headers: ["If-None-Match": tag])
            #expect(again.status == 304)
            #expect(again.body.isEmpty)
            #expect(again.headers["etag"] == tag)
            let listed = try HTTPClient.get(port: hub.port, path: "/", headers: ["If-None-Match": "\"x\", W/\(tag)"])
            #expect(listed.status == 304)
            let other = try HTTPClient.get(port: hub.port, path: "/", headers: ["If-None-Match": "\"other\""])
            #expect(other.status == 200 && other.body == first.body)
            // A changed file has another tag.
            try site.write("<!doctype html><title>changed</title>", to: site.root + "/index.html")
            let changed = try HTTPClient.get(port: hub.port, path: "/", headers: ["If-None-Match": tag])
            #expect(changed.status == 200 && changed.text.contains("changed"))
            #expect(changed.headers["etag"] != tag)

            let head = try HTTPClient.request(method: "HEAD", port: hub.port, path: "/css/app.css")
            #expect(head.status == 200)
            #expect(head.headers["content-type"] == "text/css; charset=utf-8")
            #expect(head.headers["content-length"] == "6")
            #expect(head.body.isEmpty)
        }

        @Test func pathsLeavingTheRootAre404() throws {
            let site = try Site()
            let hub = try hub(site)
            defer { hub.removeData() }
            let attempts = [
                "/../secret.txt", "/%2e%2e/secret.txt", "/..%2fsecret.txt", "/%2e%2e%2fsecret.txt",
                "/css/../../secret.txt", "/css/%2e%2e/%2e%2e/secret.txt", "/%252e%252e/secret.txt",
                "/out", "/up/secret.txt", "/.hidden", "/%2ehidden", "/%00index.html", "/css/%00app.css",
                "/css%5c..%5c..%5csecret.txt", site.base + "/secret.txt", "//" + site.base + "/secret.txt",
                "/../Package.swift", "/..%2f..%2fPackage.swift",
            ]
            for path in attempts {
                let response: HTTPResponse
                do { response = try HTTPClient.get(port: hub.port, path: path) } catch {
                    Issue.record("\(path): \(error)")
                    continue
                }
                #expect(response.status == 404, "\(path): \(response.status)")
                #expect(!response.text.contains("SECRET"), "\(path) served the secret")
            }
            // A NUL after a name's first character: libwebsockets hangs up without an answer, serving nothing either.
            for path in ["/index.html%00", "/css%00/app.css"] {
                #expect(throws: TestClientError.self, "\(path)") { try HTTPClient.get(port: hub.port, path: path) }
            }
            // Files inside are served, links that stay inside too.
            #expect(try HTTPClient.get(port: hub.port, path: "/css/app.css").text == "body{}")
            #expect(try HTTPClient.get(port: hub.port, path: "/inside.css").text == "body{}")
        }

        @Test func onlyGetAndHeadAreAllowed() throws {
            let site = try Site()
            let hub = try hub(site)
            defer { hub.removeData() }
            let empty = try HTTPClient.post(port: hub.port, path: "/", body: [])
            #expect(empty.status == 405)
            #expect(empty.headers["allow"] == "GET, HEAD")
            let form = try HTTPClient.post(port: hub.port, path: "/index.html", body: Array("a=1".utf8))
            #expect(form.status == 405)
            #expect(try HTTPClient.request(method: "DELETE", port: hub.port, path: "/index.html").status == 405)
            #expect(try HTTPClient.request(method: "PUT", port: hub.port, path: "/x.html", body: [1]).status == 404)
            #expect(try HTTPClient.post(port: hub.port, path: "/v1/nope", body: []).status == 404)
        }

        @Test func theClientLibraryIsServedByName() throws {
            let site = try Site()
            let hub = try hub(site)
            defer { hub.removeData() }
            let library = try HTTPClient.get(port: hub.port, path: "/cairn.js")
            #expect(library.status == 200)
            #expect(library.headers["content-type"] == "text/javascript; charset=utf-8")
            #expect(library.text == "export class CairnClient {}\n")
            let types = try HTTPClient.get(port: hub.port, path: "/cairn.d.ts")
            #expect(types.status == 200 && types.text.contains("declare"))
            // Only those two names: the rest of the directory is not published.
            #expect(try HTTPClient.get(port: hub.port, path: "/package.json").status == 404)
        }

        @Test(.enabled(if: FileManager.default.fileExists(atPath: "/usr/share/javascript/leaflet/leaflet.js")))
        func leafletIsServedFromDebiansPackage() throws {
            let site = try Site()
            let hub = try hub(site)
            defer { hub.removeData() }
            let script = try HTTPClient.get(port: hub.port, path: "/vendor/leaflet/leaflet.js")
            #expect(script.status == 200)
            #expect(script.headers["content-type"] == "text/javascript; charset=utf-8")
            #expect(script.headers["cache-control"] == "public, max-age=86400")
            let bytes = try Data(contentsOf: URL(fileURLWithPath: "/usr/share/javascript/leaflet/leaflet.js"))
            #expect(script.body == Array(bytes))
            let icon = try HTTPClient.get(port: hub.port, path: "/vendor/leaflet/images/marker-icon.png")
            #expect(icon.status == 200 && icon.headers["content-type"] == "image/png")
            #expect(try HTTPClient.get(port: hub.port, path: "/vendor/leaflet/../leaflet/leaflet.js").status != 500)
            #expect(try HTTPClient.get(port: hub.port, path: "/vendor/nothing/x.js").status == 404)
        }

        @Test func configJSONAndThePolicyFollowTheTileSetting() throws {
            let site = try Site()
            let plain = try hub(site)
            let none = try HTTPClient.get(port: plain.port, path: "/config.json")
            #expect(none.status == 200 && none.headers["content-type"] == "application/json")
            let empty = try none.jsonObject()
            #expect(empty["tiles"] is NSNull && empty["attribution"] is NSNull)
            try plain.stop()
            plain.removeData()

            let template = "https://{s}.tile.openstreetmap.org/{z}/{x}/{y}.png"
            let tiled = try hub(site, tiles: template)
            defer { tiled.removeData() }
            let config = try HTTPClient.get(port: tiled.port, path: "/config.json").jsonObject()
            #expect(config["tiles"] as? String == template)
            #expect(config["attribution"] as? String == "© OpenStreetMap contributors")
            let policy = try HTTPClient.get(port: tiled.port, path: "/").headers["content-security-policy"] ?? ""
            #expect(policy.contains("img-src 'self' data: blob: https://*.tile.openstreetmap.org;"))
        }

        @Test func unknownPathsAre404AndTheHubsRoutesAreUnchanged() throws {
            let site = try Site()
            let hub = try hub(site)
            defer { hub.removeData() }
            let missing = try HTTPClient.get(port: hub.port, path: "/nope.html")
            #expect(missing.status == 404)
            #expect(try missing.jsonObject()["error"] as? String == "not found")
            #expect(try HTTPClient.get(port: hub.port, path: "/css/").status == 404)
            #expect(try HTTPClient.get(port: hub.port, path: "/v1/nope").status == 404)
            #expect(try hub.health()["status"] as? String == "ok")
            #expect(try HTTPClient.get(port: hub.port, path: "/metrics").status == 200)
            #expect(try HTTPClient.get(port: hub.port, path: "/ws").status == 400)
            let placeholder = try HTTPClient.get(port: hub.port, path: "/v1/placeholder/user.svg")
            #expect(placeholder.status == 200 && placeholder.headers["content-type"] == "image/svg+xml")
            let upload = try HTTPClient.post(port: hub.port, path: "/v1/media", body: [1, 2, 3])
            #expect(upload.status == 401)
            let c = try hub.client()
            _ = try c.requestOK("guest")
            #expect(throws: TestClientError.self) { _ = try hub.client(path: "/") }
        }

        @Test func theAdminConsoleIsServedAtAdminUnderThePolicy() throws {
            let hub = try RunningHub()  // the repository's web/ and web/admin/
            defer { hub.removeData() }
            let bare = try HTTPClient.get(port: hub.port, path: "/admin")
            #expect(bare.status == 301)
            #expect(bare.headers["location"] == "/admin/")
            #expect(bare.headers["content-security-policy"]?.contains("default-src 'self'") == true)
            let page = try HTTPClient.get(port: hub.port, path: "/admin/")
            #expect(page.status == 200 && page.headers["content-type"] == "text/html; charset=utf-8")
            let index = try String(contentsOfFile: Self.repository + "/web/admin/index.html", encoding: .utf8)
            #expect(page.text == index && index.contains("data-connection") && index.contains("/admin/admin.js"))
            #expect(page.headers["content-security-policy"]?.contains("frame-ancestors 'none'") == true)
            let script = try HTTPClient.get(port: hub.port, path: "/admin/admin.js")
            #expect(script.status == 200 && script.headers["content-type"] == "text/javascript; charset=utf-8")
            // Only a directory with an index is sent on; a file or nothing stays as it was.
            #expect(try HTTPClient.get(port: hub.port, path: "/admin/admin.js/").status == 404)
            #expect(try HTTPClient.get(port: hub.port, path: "/basemap").status == 404)
            #expect(try HTTPClient.get(port: hub.port, path: "/nothing").status == 404)
            #expect(try HTTPClient.post(port: hub.port, path: "/admin", body: []).status == 405)
        }

        /// The repository's root (this file is Tests/CairnSystemTests/WebAppTests.swift).
        static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent().path
    }
}
