// StaticFiles' rules without a socket: which relative paths are plain, If-None-Match matching, types by extension,
// which root answers a path (longest prefix; a root limited to names lets others through) and that the resolved file
// never lies outside its root. Over HTTP, WebAppTests.
import CairnLoop
import Foundation
import Testing

@testable import CairnServer

@Suite(.timeLimit(.minutes(5))) struct StaticFilesTests {
    @Test func aFIFOIsRefusedAtOnceNotWaitedOn() throws {
        // Opening a FIFO for reading blocks until a writer comes; a FIFO in a served folder must not hold a thread.
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("fifo-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        #expect(mkfifo(directory + "/pipe.txt", 0o600) == 0)
        #expect(HTTPFile.open(path: directory + "/pipe.txt") == nil)
        #expect(HTTPFile.open(path: directory + "/pipe.txt", followingSymlinks: false) == nil)
        _ = FileManager.default.createFile(atPath: directory + "/plain.txt", contents: Data("hi".utf8))
        let plain = try #require(HTTPFile.open(path: directory + "/plain.txt"))
        #expect(plain.size == 2 && fcntl(plain.descriptor, F_GETFL) & O_NONBLOCK == 0)
    }

    @Test func onlyPlainRelativePathsPass() {
        for good in ["index.html", "css/app.css", "a/b/c.js", "a..b/c"] {
            #expect(StaticFiles.isPlain(good), "\(good)")
        }
        for bad in [
            "", "..", ".", "..a", "a/../b", "a//b", "a/", ".git/config", "a\\b", "a%2e", "a\u{0}b", "/etc/passwd",
        ] {
            #expect(!StaticFiles.isPlain(bad), "\(bad)")
        }
    }

    @Test func ifNoneMatchComparesWeakly() {
        #expect(StaticFiles.matches("\"a\"", "\"a\""))
        #expect(StaticFiles.matches("W/\"a\"", "\"a\""))
        #expect(StaticFiles.matches("\"b\", \"a\"", "\"a\""))
        #expect(StaticFiles.matches("*", "\"a\""))
        #expect(!StaticFiles.matches("\"b\"", "\"a\""))
        #expect(!StaticFiles.matches("a", "\"a\""))
    }

    @Test func typesFollowTheExtension() {
        #expect(StaticFiles.contentType(of: "/x/app.MJS") == "text/javascript; charset=utf-8")
        #expect(StaticFiles.contentType(of: "/x/world.geojson") == "application/geo+json")
        #expect(StaticFiles.contentType(of: "/x/a.woff2") == "font/woff2")
        #expect(StaticFiles.contentType(of: "/x/leaflet.js.map") == "application/json")
        #expect(StaticFiles.contentType(of: "/x/README") == "application/octet-stream")
        #expect(StaticFiles.contentType(of: "/x.d/README") == "application/octet-stream")
    }

    @Test func theFirstRootThatAdmitsANameAnswers() throws {
        let base = NSTemporaryDirectory() + "cairn-static-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: base) }
        for directory in ["web", "lib", "vendor/x"] {
            try FileManager.default.createDirectory(atPath: base + "/" + directory, withIntermediateDirectories: true)
        }
        for file in ["web/index.html", "web/cairn.js", "lib/cairn.js", "lib/other.js", "vendor/x/x.js", "outside"] {
            try Data(file.utf8).write(to: URL(fileURLWithPath: base + "/" + file))
        }
        let files = StaticFiles(roots: [
            .init(prefix: "/", directory: base + "/web"),
            .init(prefix: "/", directory: base + "/lib", only: ["cairn.js"]),
            .init(prefix: "/vendor/x/", directory: base + "/vendor/x"),
        ])
        let real = try #require(realpath(base, nil))
        defer { free(real) }
        let root = String(cString: real)
        #expect(files.resolve("/")?.0 == root + "/web/index.html")
        #expect(files.resolve("/cairn.js")?.0 == root + "/lib/cairn.js")
        #expect(files.resolve("/other.js") == nil)
        #expect(files.resolve("/vendor/x/x.js")?.0 == root + "/vendor/x/x.js")
        #expect(files.resolve("/vendor/x/../../outside") == nil)
        #expect(files.resolve("/nothing") == nil)
    }

    @Test func aDirectoryWithAnIndexNamedWithoutItsSlashIsSentToIt() throws {
        let base = NSTemporaryDirectory() + "cairn-static-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: base) }
        for directory in ["web/admin", "web/empty", "web/a b"] {
            try FileManager.default.createDirectory(atPath: base + "/" + directory, withIntermediateDirectories: true)
        }
        for file in ["web/index.html", "web/admin/index.html", "web/a b/index.html"] {
            try Data(file.utf8).write(to: URL(fileURLWithPath: base + "/" + file))
        }
        let files = StaticFiles(roots: [.init(prefix: "/", directory: base + "/web")])
        #expect(files.directoryLocation("/admin") == "/admin/")
        #expect(files.directoryLocation("/admin/") == nil)
        #expect(files.directoryLocation("/admin/index.html") == nil)
        #expect(files.directoryLocation("/empty") == nil)
        #expect(files.directoryLocation("/nothing") == nil)
        #expect(files.directoryLocation("/") == nil)
        #expect(files.directoryLocation("/a b") == nil)  // not repeated into a header
        #expect(files.directoryLocation("/admin\r\nX-Evil: 1") == nil)
    }
}
