// The pictures and events tables of migration v19-pictures-events: a post checks its media (the poster's, an
// image), the hourly limit and the event (created when missing and public, refused when private and not joined);
// likes count once per user; reports hide a picture once enough distinct non-guests reported it; nearby pages, on
// the sparse path and on the dense index walk, are exactly the pages a brute-force ordering of every picture gives,
// across ties, hidden pictures and a private event; deleting an event deletes its pictures; search matches words
// and hashtags.
import CairnDomain
import CairnGeo
import CairnSeed
import Foundation
import GRDB
import Testing

@testable import CairnStore

struct SQLiteStorePicturesTests {
    static let jpeg = String(repeating: "1a", count: 32)
    static let video = String(repeating: "2b", count: 32)
    static let paris = GeoPoint(lat: 48.85, lon: 2.35)!

    /// A fresh store with users anna, bob, cleo and a guest; anna uploaded a JPEG and a video, bob the same JPEG.
    func withStore(_ body: (SQLiteStore, [User]) async throws -> Void) async throws {
        let dir = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let store = try SQLiteStore(directory: dir)
        var users: [User] = []
        for (name, guest) in [("anna", false), ("bob", false), ("cleo", false), ("guest-1", true)] {
            users.append(
                try await store.createUser(
                    NewUser(username: name, name: name, passwordHash: nil, isGuest: guest, createdAt: 1)))
        }
        let uploads = [
            (Self.jpeg, users[0].id, "image/jpeg"), (Self.video, users[0].id, "video/mp4"),
            (Self.jpeg, users[1].id, "image/jpeg"),
        ]
        try await store.pool.write { db in
            for (id, owner, type) in uploads {
                try db.execute(
                    sql: "INSERT INTO media (id, owner_id, content_type, size, created_at) VALUES (?, ?, ?, 3, 1)",
                    arguments: [id, owner, type])
            }
        }
        try await body(store, users)
        try? store.close()
    }

    func new(_ by: User, media: String = jpeg, caption: String? = nil, event: String? = nil, at: Int64 = 1_000)
        -> NewPicture
    {
        NewPicture(
            by: by.id, mediaID: media, caption: caption, eventTag: event, point: Self.paris, createdAt: at,
            postsPerHour: 2)
    }

    @Test func aPostChecksItsMediaTheHourlyLimitAndTheEvent() async throws {
        try await withStore { store, u in
            await #expect(throws: PictureStoreError.mediaNotFound) {
                _ = try await store.postPicture(new(u[2]))
            }
            await #expect(throws: PictureStoreError.notAnImage(contentType: "video/mp4")) {
                _ = try await store.postPicture(new(u[0], media: Self.video))
            }
            let first = try await store.postPicture(new(u[0], caption: "hello", event: "party"))
            #expect(first.record.event?.tag == "party")
            #expect(first.record.event?.isPrivate == false)
            #expect(first.members == nil)
            let party = try #require(try await store.event(tag: "party", viewer: u[1].id))
            #expect(party.info.owner.id == u[0].id)
            #expect(party.info.member)
            #expect(party.passwordHash == nil)
            let second = try await store.postPicture(new(u[0], at: 2_000)).record.id
            await #expect(throws: PictureStoreError.rateLimited(limit: 2)) {
                _ = try await store.postPicture(new(u[0], at: 3_000))
            }
            // Deleting a post does not give it back: the hour counts posts, not surviving pictures.
            #expect(try await store.deletePicture(id: second))
            await #expect(throws: PictureStoreError.rateLimited(limit: 2)) {
                _ = try await store.postPicture(new(u[0], at: 4_000))
            }
            // An hour later the first post no longer counts.
            _ = try await store.postPicture(new(u[0], at: 1_000 + 3_600_000))
            // A private event: members only.
            let wedding = try await store.createEvent(
                NewEvent(tag: "wedding", title: "W", owner: u[1].id, passwordHash: "hash", createdAt: 5))
            await #expect(throws: PictureStoreError.tagTaken) {
                _ = try await store.createEvent(
                    NewEvent(tag: "wedding", title: nil, owner: u[0].id, passwordHash: nil, createdAt: 6))
            }
            await #expect(throws: PictureStoreError.notMember) {
                _ = try await store.postPicture(new(u[0], event: "wedding", at: 10_000_000))
            }
            try await store.join(event: wedding.id, user: u[0].id, at: 7)
            let posted = try await store.postPicture(new(u[0], event: "wedding", at: 10_000_000))
            #expect(posted.members == [u[0].id, u[1].id])
            #expect(posted.record.event?.isPrivate == true)
            let access = try #require(try await store.picture(id: posted.record.id, viewer: u[2].id))
            #expect(!access.member)
            #expect(try await store.picture(id: posted.record.id, viewer: u[1].id)?.member == true)
        }
    }

    @Test func likesCountOnceAndReportsHideAtTheThreshold() async throws {
        try await withStore { store, u in
            let id = try await store.postPicture(new(u[0])).record.id
            #expect(try await store.setLike(picture: id, user: u[1].id, liked: true, at: 5) == 1)
            #expect(try await store.setLike(picture: id, user: u[1].id, liked: true, at: 5) == 1)
            #expect(try await store.setLike(picture: id, user: u[2].id, liked: true, at: 5) == 2)
            #expect(try await store.picture(id: id, viewer: u[1].id)?.record.liked == true)
            #expect(try await store.setLike(picture: id, user: u[1].id, liked: false, at: 5) == 1)
            #expect(try await store.setLike(picture: id, user: u[1].id, liked: false, at: 5) == 1)
            func report(_ user: User) async throws -> Bool {
                try await store.report(
                    NewReport(picture: id, reporter: user, reason: .spam, text: nil, at: 9, threshold: 2))
            }
            #expect(try await report(u[1]) == false)
            #expect(try await store.picture(id: id, viewer: u[1].id)?.reportedByViewer == true)
            #expect(try await store.picture(id: id, viewer: u[2].id)?.reportedByViewer == false)
            #expect(try await report(u[1]) == false)  // the same reporter again
            #expect(try await report(u[3]) == false)  // a guest
            #expect(try await report(u[2]) == true)
            #expect(try await store.picture(id: id, viewer: u[0].id)?.record.hidden == true)
            let states = try await store.pool.read { db in
                try String.fetchAll(db, sql: "SELECT state FROM picture_reports WHERE picture_id = ?", arguments: [id])
            }
            #expect(states == ["open", "open", "open"])
            // Under review: the poster's delete is refused and nothing goes; once an admin restored it, it may go.
            await #expect(throws: PictureStoreError.underReview) { try await store.deletePicture(id: id) }
            #expect(try await store.picture(id: id, viewer: u[0].id) != nil)
            let restore = AuditEntry(
                at: 10, admin: u[2], action: "picture.restore", targetKind: "picture", targetID: id, targetName: nil,
                reason: nil, detail: nil)
            #expect(try await store.resolveReports(picture: id, remove: false, audit: restore))
            #expect(try await store.deletePicture(id: id))
            #expect(try await store.deletePicture(id: id) == false)
            #expect(try await store.picture(id: id, viewer: u[0].id) == nil)
        }
    }

    /// Stores `count` pictures within about `spread` metres of Paris with few distinct like counts and dates
    /// (many ties), some hidden and some in a private event; returns them as candidates.
    func scatter(_ store: SQLiteStore, _ u: [User], count: Int, spread: Double) async throws -> [PictureCandidate] {
        let event = try await store.insertFixtureEvent(tag: "secret", owner: u[0].id)
        var rng = SplitMix64(seed: 5)
        var rows: [FixturePicture] = []
        var hidden: [Int64] = []
        var all: [PictureCandidate] = []
        for i in 0..<count {
            let north = Double.random(in: -spread...spread, using: &rng)
            let east = Double.random(in: -spread...spread, using: &rng)
            let point = GeoPoint(
                lat: Self.paris.lat + north / 111_195, lon: Self.paris.lon + east / (111_195 * cos(48.85 * .pi / 180)))!
            let likes = Int64.random(in: 0...2, using: &rng)
            let created = Int64(1_000 + i / 7)  // seven pictures share each millisecond
            let inEvent = i % 17 == 0 ? event : nil
            rows.append(
                FixturePicture(
                    by: u[i % 3].id, lat: point.lat, lon: point.lon, likes: likes, createdAt: created,
                    privateEvent: inEvent))
            let isHidden = i % 23 == 0
            if isHidden { hidden.append(Int64(i + 1)) }
            all.append(
                PictureCandidate(
                    id: Int64(i + 1), point: point, likes: likes, createdAt: created, hidden: isHidden,
                    privateEvent: inEvent))
        }
        try await store.insertFixturePictures(rows)
        try await store.hideFixturePictures(hidden)
        return all
    }

    func pagesMatchBruteForce(_ store: SQLiteStore, _ all: [PictureCandidate], viewer: User, radius: Double)
        async throws
        -> Int
    {
        let seer = PictureViewer(user: viewer.id, joined: [], reported: [])
        var pages = 0
        for sort in PictureSort.allCases {
            let order = PictureOrder(sort: sort, origin: Self.paris)
            var after: PictureKey?
            var shown = 0
            repeat {
                let query = PictureQuery(
                    viewer: viewer.id, scope: .nearby(radius: radius), order: order, after: after, limit: 50)
                let got = try await store.pictures(query)
                let want = order.page(all, viewer: seer, after: after, radius: radius, limit: 50)
                #expect(got.map(\.record.id) == want.map(\.candidate.id), "\(sort) after \(String(describing: after))")
                #expect(got.map(\.key) == want.map(\.key))
                shown += got.count
                after = got.count == 50 ? got.last?.key : nil
                pages += 1
            } while after != nil && pages < 1_000
            let visible = all.filter { seer.sees($0) && order.distance(to: $0.point) <= radius }.count
            #expect(shown == visible, "\(sort)")
        }
        return pages
    }

    @Test func denseNearbyPagesWalkTheOrderIndexExactly() async throws {
        try await withStore { store, u in
            // More than `denseLimit` pictures within the radius's box: likes and date walk their index.
            let all = try await scatter(store, u, count: SQLiteStore.denseLimit + 700, spread: 400)
            let pages = try await pagesMatchBruteForce(store, all, viewer: u[1], radius: 600)
            #expect(pages >= 3 * (SQLiteStore.denseLimit / 50))  // three sorts, 2,880 pictures each
        }
    }

    @Test func sparseNearbyPagesSortInMemoryExactly() async throws {
        try await withStore { store, u in
            let all = try await scatter(store, u, count: 1_500, spread: 3_000)
            _ = try await pagesMatchBruteForce(store, all, viewer: u[2], radius: 1_200)
            // The event's owner sees the private pictures too.
            let owner = PictureViewer(user: u[0].id, joined: [1], reported: [])
            let order = PictureOrder(sort: .likes, origin: Self.paris)
            let got = try await store.pictures(
                PictureQuery(viewer: u[0].id, scope: .nearby(radius: 3_000), order: order, after: nil, limit: 50))
            #expect(
                got.map(\.record.id)
                    == order.page(all, viewer: owner, after: nil, radius: 3_000, limit: 50).map(\.candidate.id))
            #expect(got.contains { $0.record.event?.isPrivate == true })
        }
    }

    @Test func eventsPagesSearchAndDeletion() async throws {
        try await withStore { store, u in
            let a = try await store.postPicture(new(u[0], caption: "Cake on the #table", event: "party", at: 10)).record
            let b = try await store.postPicture(new(u[1], caption: "more cake", event: "party", at: 20)).record
            let c = try await store.postPicture(new(u[1], caption: "a tablecloth", at: 30)).record
            let party = try #require(try await store.event(tag: "party", viewer: u[2].id)).info
            #expect(party.pictures == 2)
            let page = try await store.pictures(
                PictureQuery(
                    viewer: u[2].id, scope: .event(party.id), order: PictureOrder(sort: .date, origin: nil), after: nil,
                    limit: 10))
            #expect(page.map(\.record.id) == [b.id, a.id])
            func search(_ words: [String], _ tags: [String]) async throws -> [Int64] {
                try await store.searchPictures(words: words, tags: tags, viewer: u[2].id, limit: 10).map(\.id)
            }
            #expect(try await search(["cake"], []) == [b.id, a.id])
            #expect(try await search(["table"], []) == [c.id, a.id])
            #expect(try await search([], ["table"]) == [a.id])  // a whole hashtag, not "tablecloth"
            #expect(try await search([], ["party"]) == [b.id, a.id])
            #expect(try await search(["more"], ["party"]) == [b.id])
            #expect(try await store.searchEvents(text: "par", viewer: u[2].id, limit: 10).map(\.tag) == ["party"])
            // A picture of it under review keeps the event (and everything in it) until an admin decides.
            _ = try await store.report(
                NewReport(picture: b.id, reporter: u[2], reason: .spam, text: nil, at: 40, threshold: 3))
            await #expect(throws: PictureStoreError.underReview) { try await store.deleteEvent(id: party.id) }
            #expect(try await store.picture(id: a.id, viewer: u[0].id) != nil)
            let restore = AuditEntry(
                at: 50, admin: u[0], action: "picture.restore", targetKind: "picture", targetID: b.id, targetName: nil,
                reason: nil, detail: nil)
            #expect(try await store.resolveReports(picture: b.id, remove: false, audit: restore))
            try await store.deleteEvent(id: party.id)
            #expect(try await store.picture(id: a.id, viewer: u[0].id) == nil)
            #expect(try await store.picture(id: c.id, viewer: u[0].id) != nil)
            #expect(try await store.event(tag: "party", viewer: u[0].id) == nil)
        }
    }
}
