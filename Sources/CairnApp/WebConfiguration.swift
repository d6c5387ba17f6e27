// The web app the hub serves from its own origin: where its files are (`web.root`, else found next to the binary),
// where the JavaScript client library is (`web.client_root`, else beside the web root), the browser libraries from
// Debian's packages, the optional tile server and the Content-Security-Policy that follows from it. Part of
// `AppConfiguration`; `CairnApp` turns it into a `StaticFiles` mount on `/` (see docs/OPERATIONS.md, "Web app").
import CairnLoop
import CairnServer
import CairnWire
public import Foundation

/// Settings of the web app.
public struct WebConfiguration: Sendable {
    /// The web app's directory (`web.root`); nil: found next to the binary (`WebConfiguration.findRoot`).
    public var root: String?
    /// The directory holding `cairn.js` and `cairn.d.ts` (`web.client_root`); nil: `clients/js` beside the web
    /// root's parent, else found next to the binary.
    public var clientRoot: String?
    /// A tile URL template (`web.tiles`), e.g. `https://tile.openstreetmap.org/{z}/{x}/{y}.png`; nil: no tiles.
    public var tiles: String?
    /// The tiles' attribution as the map shows it (`web.tiles_attribution`).
    public var tilesAttribution: String?
    /// Where Debian installs browser libraries; `/vendor/<name>/` serves `<vendorRoot>/<name>/` when it exists.
    public var vendorRoot = "/usr/share/javascript"
    /// The browser libraries served from `vendorRoot` (leaflet holds leaflet.markercluster too).
    public var vendored = ["leaflet", "chart.js"]
    /// The binary the search starts from; nil: this process's executable.
    public var executable: String?

    /// The defaults: everything found, no tiles.
    public init() {}

    /// Seconds a browser may keep a vendored library without asking again (they change only with their package).
    public static let vendorMaxAgeSeconds = 86_400

    // MARK: Finding the files

    /// The web root: `root` if set; else, from the executable's directory up to `/`, the first `D/web` or
    /// `D/share/cairn/web` that holds an `index.html`; else `./web` if it holds one; else nil.
    public func findRoot(currentDirectory: String = FileManager.default.currentDirectoryPath) -> String? {
        if let root { return root }
        for directory in Self.ancestors(of: executable ?? Self.executablePath()) {
            for candidate in [directory + "/web", directory + "/share/cairn/web"]
            where Self.isFile(candidate + "/index.html") {
                return candidate
            }
        }
        let local = currentDirectory + "/web"
        return Self.isFile(local + "/index.html") ? local : nil
    }

    /// The client library's directory: `clientRoot` if set; else `clients/js` beside the web root (`<root>/..`);
    /// else, from the executable's directory up, the first `D/clients/js` or `D/share/cairn/clients/js`; else nil.
    public func findClientRoot(webRoot: String?) -> String? {
        if let clientRoot { return clientRoot }
        if let webRoot {
            let beside = (webRoot as NSString).deletingLastPathComponent + "/clients/js"
            if Self.isDirectory(beside) { return beside }
        }
        for directory in Self.ancestors(of: executable ?? Self.executablePath()) {
            for candidate in [directory + "/clients/js", directory + "/share/cairn/clients/js"]
            where Self.isDirectory(candidate) {
                return candidate
            }
        }
        return nil
    }

    /// The directories from the executable's own up to `/`.
    static func ancestors(of executable: String) -> [String] {
        var directory = (executable as NSString).deletingLastPathComponent
        var all: [String] = []
        while !directory.isEmpty {
            all.append(directory)
            if directory == "/" { break }
            directory = (directory as NSString).deletingLastPathComponent
        }
        return all
    }

    /// This process's executable, symbolic links resolved.
    static func executablePath() -> String {
        (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe"))
            ?? CommandLine.arguments.first ?? "."
    }

    static func isFile(_ path: String) -> Bool {
        var isDirectory: ObjCBool = false
        return FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) && !isDirectory.boolValue
    }

    static func isDirectory(_ path: String) -> Bool {
        var isDirectory: ObjCBool = false
        return FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) && isDirectory.boolValue
    }

    // MARK: What the page is told and allowed

    /// `GET /config.json`: `{"tiles": …, "attribution": …}`, null where unset.
    public var pageConfiguration: [UInt8] {
        var w = JSONWriter(capacity: 256)
        w.beginObject()
        w.key("tiles")
        if let tiles { w.string(tiles) } else { w.null() }
        w.key("attribution")
        if let tilesAttribution { w.string(tilesAttribution) } else { w.null() }
        w.endObject()
        return w.bytes
    }

    /// The Content-Security-Policy for a request whose `Host` header is `host`: only the hub's own origin, its
    /// WebSocket (on that host, plain or TLS), images from the hub (and `data:`/`blob:` ones the page makes) and the
    /// tile server if one is configured; no framing.
    public func contentSecurityPolicy(host: String?) -> String {
        var connect = "'self'"
        if let host, Self.isPlainHost(host) { connect += " ws://\(host) wss://\(host)" }
        var images = "'self' data: blob:"
        if let tiles, let source = Self.tileSource(tiles) { images += " " + source }
        return "default-src 'self'; connect-src \(connect); img-src \(images); "
            + "object-src 'none'; base-uri 'self'; form-action 'self'; frame-ancestors 'none'"
    }

    /// A `Host` header safe to repeat in a policy: letters, digits, `.`, `-`, `:`, `[` and `]` only.
    static func isPlainHost(_ host: String) -> Bool {
        !host.isEmpty && host.utf8.count <= 255
            && host.utf8.allSatisfy { c in
                (c >= 0x30 && c <= 0x3A) || (c >= 0x41 && c <= 0x5A) || (c >= 0x61 && c <= 0x7A)
                    || c == UInt8(ascii: ".") || c == UInt8(ascii: "-") || c == UInt8(ascii: "[")
                    || c == UInt8(ascii: "]")
            }
    }

    /// The CSP source for a tile URL template: its scheme, host and port, a `{s}`-like leftmost label as `*`
    /// (`https://{s}.tile.example.org/{z}/{x}/{y}.png` gives `https://*.tile.example.org`); nil if unusable.
    static func tileSource(_ template: String) -> String? {
        let scheme: String
        if template.hasPrefix("https://") {
            scheme = "https"
        } else if template.hasPrefix("http://") {
            scheme = "http"
        } else {
            return nil
        }
        let rest = template.dropFirst(scheme.count + 3)
        let authority = rest.prefix { $0 != "/" && $0 != "?" && $0 != "#" }
        var hostPart = Substring(authority)
        var port = ""
        if let colon = authority.lastIndex(of: ":") {
            hostPart = authority[..<colon]
            port = String(authority[colon...])
            guard port.count > 1, port.dropFirst().allSatisfy(\.isASCII), Int(port.dropFirst()) != nil else {
                return nil
            }
        }
        var labels = hostPart.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        guard labels.count >= 2 else { return nil }
        let wildcard = labels[0].contains("{")
        // A wildcard stands for one label under a registered name (`*.tile.example`), never under a bare suffix
        // (`*.org` would let the page load images from every host under it).
        guard !wildcard || labels.count >= 3 else { return nil }
        if wildcard { labels[0] = "*" }
        let plain = labels.enumerated().allSatisfy { index, label in
            if index == 0 && wildcard { return true }
            return !label.isEmpty
                && label.utf8.allSatisfy { c in
                    (c >= 0x30 && c <= 0x39) || (c >= 0x61 && c <= 0x7A) || (c >= 0x41 && c <= 0x5A)
                        || c == UInt8(ascii: "-")
                }
        }
        guard plain else { return nil }
        return scheme + "://" + labels.joined(separator: ".").lowercased() + port
    }

    /// Why a tile URL template cannot be used (for `cairn config check`), nil if it can.
    public static func problem(tiles: String) -> String? {
        guard tileSource(tiles) != nil else {
            return "web.tiles \"\(tiles.prefix(200))\" must be an http:// or https:// URL with a plain host name "
                + "(a leftmost {s} label allowed), e.g. https://tile.openstreetmap.org/{z}/{x}/{y}.png"
        }
        guard tiles.contains("{z}"), tiles.contains("{x}"), tiles.contains("{y}") else {
            return "web.tiles \"\(tiles.prefix(200))\" needs the placeholders {z}, {x} and {y}"
        }
        guard !tiles.unicodeScalars.contains(where: { $0.properties.isWhitespace || $0.value < 0x20 }) else {
            return "web.tiles must not contain spaces or control characters"
        }
        return nil
    }

    /// Why a configured directory cannot be served (for `cairn config check`), nil if it can.
    public static func problem(root: String, key: String) -> String? {
        isDirectory(root) ? nil : "\(key) \"\(root.prefix(200))\" is not a directory"
    }

    // MARK: The service

    /// The roots and documents served on `/`, with what was found (for the log).
    func staticFiles() -> (service: StaticFiles, found: [String]) {
        let webRoot = findRoot()
        let clientRoot = findClientRoot(webRoot: webRoot)
        var roots: [StaticFiles.Root] = []
        var found: [String] = []
        if let webRoot {
            roots.append(StaticFiles.Root(prefix: "/", directory: webRoot))
            found.append("/ from \(webRoot)")
        }
        if let clientRoot {
            roots.append(StaticFiles.Root(prefix: "/", directory: clientRoot, only: ["cairn.js", "cairn.d.ts"]))
            found.append("/cairn.js from \(clientRoot)")
        }
        for name in vendored where Self.isDirectory(vendorRoot + "/" + name) {
            roots.append(
                StaticFiles.Root(
                    prefix: "/vendor/\(name)/", directory: vendorRoot + "/" + name,
                    maxAgeSeconds: Self.vendorMaxAgeSeconds))
            found.append("/vendor/\(name)/")
        }
        let document = StaticFiles.Document(
            path: "/config.json", contentType: "application/json", body: pageConfiguration)
        let policy = self
        let service = StaticFiles(roots: roots, documents: [document]) { request in
            [("Content-Security-Policy", policy.contentSecurityPolicy(host: request.host)), ("Vary", "Host")]
        }
        return (service, found)
    }
}
