// Signed media URLs: a URL works for its id until it expires, and any change to the id, expiry or signature, a
// different secret, or a malformed query is refused with the matching typed error.
import CairnHubTestSupport
import CairnLoop
import CairnMedia
import Foundation
import Testing

@Suite(.timeLimit(.minutes(5)))
struct MediaLinksTests {
    static let id = String(repeating: "ab", count: 32)
    static let other = String(repeating: "cd", count: 32)
    let links = MediaLinks(secret: Array(repeating: 7, count: 32), lifetimeMs: 60_000)
    let now: Int64 = 1_763_740_800_000

    private func query(_ url: String) -> String { String(url.split(separator: "?", maxSplits: 1)[1]) }

    @Test func issuedURLHasThePathAndVerifies() throws {
        let url = links.url(for: Self.id, now: now)
        #expect(url.hasPrefix("/v1/media/\(Self.id)?exp=\(now + 60_000)&sig="))
        #expect(try links.verify(media: Self.id, query: query(url), now: now) == now + 60_000)
        #expect(try links.verify(media: Self.id, query: query(url), now: now + 59_999) == now + 60_000)
    }

    @Test func expiredURLIsRefused() {
        let url = links.url(for: Self.id, now: now)
        #expect(throws: MediaLinkError.expired) {
            try links.verify(media: Self.id, query: query(url), now: now + 60_000)
        }
    }

    @Test func anotherIDIsRefused() {
        let url = links.url(for: Self.id, now: now)
        #expect(throws: MediaLinkError.badSignature) {
            try links.verify(media: Self.other, query: query(url), now: now)
        }
    }

    @Test func extendedExpiryIsRefused() {
        let q = query(links.url(for: Self.id, now: now)).replacingOccurrences(
            of: "exp=\(now + 60_000)", with: "exp=\(now + 6_000_000)")
        #expect(throws: MediaLinkError.badSignature) { try links.verify(media: Self.id, query: q, now: now) }
    }

    @Test func tamperedSignatureIsRefused() {
        let q = query(links.url(for: Self.id, now: now))
        let sigStart = q.range(of: "sig=")!.upperBound
        var chars = Array(q)
        let i = q.distance(from: q.startIndex, to: sigStart)
        chars[i] = chars[i] == "A" ? "B" : "A"
        #expect(throws: MediaLinkError.badSignature) {
            try links.verify(media: Self.id, query: String(chars), now: now)
        }
    }

    @Test func anotherSecretIsRefused() {
        let url = MediaLinks(secret: Array(repeating: 8, count: 32), lifetimeMs: 60_000).url(for: Self.id, now: now)
        #expect(throws: MediaLinkError.badSignature) { try links.verify(media: Self.id, query: query(url), now: now) }
    }

    @Test(arguments: [
        nil, "", "exp=1", "sig=abc", "exp=x&sig=AAAA", "exp=1&sig=***", "exp=1&sig=AAAA",
        "exp=-5&sig=" + String(repeating: "A", count: 43), "exp&sig",
    ])
    func malformedQueriesAreRefused(q: String?) {
        #expect(throws: MediaLinkError.malformed) { try links.verify(media: Self.id, query: q, now: now) }
    }

    @Test func repeatedParametersAreMalformed() {
        let q = query(links.url(for: Self.id, now: now))
        #expect(throws: MediaLinkError.malformed) { try links.verify(media: Self.id, query: q + "&exp=1", now: now) }
    }

    @Test func nonMediaIDIsMalformed() {
        let url = links.url(for: Self.id, now: now)
        #expect(throws: MediaLinkError.malformed) {
            try links.verify(media: "../etc/passwd", query: query(url), now: now)
        }
    }

    @Test func mediaIDShape() {
        #expect(MediaLinks.isMediaID(Self.id))
        #expect(!MediaLinks.isMediaID(Self.id.uppercased()))
        #expect(!MediaLinks.isMediaID(String(Self.id.dropLast())))
        #expect(!MediaLinks.isMediaID(String(Self.id.dropLast()) + "g"))
        #expect(!MediaLinks.isMediaID(""))
    }
}
