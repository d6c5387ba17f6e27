// The pictures and events tables of migration v19-pictures-events: a post checks its media (the poster's, an
// image), the hourly limit and the event (created when missing and public, refused when private and not joined);
// likes count once per user; reports hide a picture once enough distinct non-guests reported it; nearby pages, on
// the sparse path and on the dense index walk, are exactly the pages a brute-force ordering of every picture gives,
// across ties, hidden pictures and a private event, and near a pole (ranges of strips); deleting an event deletes
// its pictures; search matches words and hashtags; the pictures' daily figures; event pictures of an older database
// lose the place they were given unasked (v23 / p3). Every test runs on both engines; what no port writes (media
// rows, benchmark fixtures) goes through each engine's own hooks (`PictureTestHooks`).
import CairnAdmin
import CairnCore
import CairnGeo
import CairnPictures
import CairnSQL
import CairnSeed
import CairnSessions
import Foundation
import GRDB
import Testing

@testable import CairnPostgres
@testable import CairnStore

@Suite(.timeLimit(.minutes(5)))
struct SQLiteStorePicturesTests {
    static let jpeg = String(repeating: "1a", count: 32)
    static let video = String(repeating: "2b", count: 32)
    static let paris = GeoPoint(lat: 48.85, lon: 2.35)!

    /// A fresh store with users anna, bob, cleo and a guest; anna uploaded a JPEG and a video, bob the same JPEG.
    func withStore(_ engine: StoreEngine, _ body: (any EngineStore, [User]) async throws -> Void) async throws {
        try await engine.withStore { store in
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
            for (id, owner, type) in uploads {
                try await PictureTestHooks(store).insertMedia(id: id, owner: owner, contentType: type)
            }
            try await body(store, users)
        }
    }

    func new(_ by: User, media: String = jpeg, caption: String? = nil, event: String? = nil, at: Int64 = 1_000)
        -> NewPicture
    {
        NewPicture(
            by: by.id, mediaID: media, caption: caption, eventTag: event, point: Self.paris, createdAt: at,
            postsPerHour: 2)
    }

    @Test(arguments: StoreEngine.available)
    func aPostChecksItsMediaTheHourlyLimitAndTheEvent(engine: StoreEngine) async throws {
        try await withStore(engine) { store, u in
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

    @Test(arguments: StoreEngine.available)
    func aPostedPictureReadsBackAsItsPostAnnouncedItWithTheMembersNow(engine: StoreEngine) async throws {
        try await withStore(engine) { store, u in
            let open = try await store.postPicture(new(u[0], caption: "hello", event: "party"))
            _ = try await store.setLike(picture: open.record.id, user: u[1].id, liked: true, at: 2)
            let read = try #require(try await store.postedPicture(id: open.record.id))
            #expect(read.members == nil)
            var expected = open.record
            expected.likes = 1
            #expect(read.record == expected)
            let wedding = try await store.createEvent(
                NewEvent(tag: "wedding", title: "W", owner: u[1].id, passwordHash: "hash", createdAt: 5))
            try await store.join(event: wedding.id, user: u[0].id, at: 7)
            let closed = try await store.postPicture(new(u[0], event: "wedding", at: 2_000))
            try await store.join(event: wedding.id, user: u[2].id, at: 8)
            let members = try #require(try await store.postedPicture(id: closed.record.id)).members
            #expect(members == [u[0].id, u[1].id, u[2].id], "the members now, not at the post")
            #expect(try await store.postedPicture(id: closed.record.id + 100) == nil)
        }
    }

    @Test(arguments: StoreEngine.available)
    func likesCountOnceAndReportsHideAtTheThreshold(engine: StoreEngine) async throws {
        try await withStore(engine) { store, u in
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
            #expect(try await PictureTestHooks(store).reportStates(picture: id) == ["open", "open", "open"])
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

    @Test(arguments: StoreEngine.available)
    func aGuestsReportHoldsNeitherAPictureNorItsEventForReview(engine: StoreEngine) async throws {
        try await withStore(engine) { store, u in
            // A guest's report does not count toward hiding, so it holds nothing for review: the poster may still
            // delete the picture, and its event may still go; a member's report does hold it.
            let guest = u[3]
            let kept = try await store.postPicture(new(u[0], event: "picnic")).record.id
            let gone = try await store.postPicture(new(u[0])).record.id
            for id in [kept, gone] {
                #expect(
                    try await store.report(
                        NewReport(picture: id, reporter: guest, reason: .spam, text: nil, at: 5, threshold: 1))
                        == false)
            }
            #expect(try await store.deletePicture(id: gone))
            #expect(try await store.picture(id: gone, viewer: u[0].id) == nil)
            let picnic = try #require(try await store.event(tag: "picnic", viewer: u[0].id)).info
            _ = try await store.report(
                NewReport(picture: kept, reporter: u[2], reason: .spam, text: nil, at: 6, threshold: 3))
            await #expect(throws: PictureStoreError.underReview) { try await store.deletePicture(id: kept) }
            await #expect(throws: PictureStoreError.underReview) { try await store.deleteEvent(id: picnic.id) }
            let restore = AuditEntry(
                at: 7, admin: u[1], action: "picture.restore", targetKind: "picture", targetID: kept, targetName: nil,
                reason: nil, detail: nil)
            #expect(try await store.resolveReports(picture: kept, remove: false, audit: restore))
            try await store.deleteEvent(id: picnic.id)
            #expect(try await store.picture(id: kept, viewer: u[0].id) == nil)
        }
    }

    /// Stores `count` pictures within about `spread` metres of Paris with few distinct like counts and dates
    /// (many ties), some hidden and some in a private event; returns them as candidates.
    func scatter(_ store: any EngineStore, _ u: [User], count: Int, spread: Double) async throws
        -> [PictureCandidate]
    {
        let hooks = PictureTestHooks(store)
        let event = try await hooks.insertFixtureEvent(tag: "secret", owner: u[0].id)
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
        try await hooks.insertFixturePictures(rows)
        try await hooks.hideFixturePictures(hidden)
        return all
    }

    func pagesMatchBruteForce(
        _ store: any EngineStore, _ all: [PictureCandidate], viewer: User, radius: Double, origin: GeoPoint = paris
    ) async throws -> Int {
        let seer = PictureViewer(user: viewer.id, joined: [], reported: [])
        var pages = 0
        for sort in PictureSort.allCases {
            let order = PictureOrder(sort: sort, origin: origin)
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

    @Test(arguments: StoreEngine.available)
    func denseNearbyPagesWalkTheOrderIndexExactly(engine: StoreEngine) async throws {
        #expect(SQLiteStore.denseLimit == PostgresStore.denseLimit)
        try await withStore(engine) { store, u in
            // More than `denseLimit` pictures within the radius's box: likes and date walk their index.
            let all = try await scatter(store, u, count: SQLiteStore.denseLimit + 700, spread: 400)
            let pages = try await pagesMatchBruteForce(store, all, viewer: u[1], radius: 600)
            #expect(pages >= 3 * (SQLiteStore.denseLimit / 50))  // three sorts, 2,880 pictures each
        }
    }

    @Test(arguments: StoreEngine.available)
    func nearThePoleNearbyPagesReadRangesOfStripsExactly(engine: StoreEngine) async throws {
        try await withStore(engine) { store, u in
            // A box reaching the pole spans every longitude: one range of strips instead of a seek per strip.
            let origin = GeoPoint(lat: 89.6, lon: 10)!
            #expect(PictureArea(around: origin, radius: 60_000).strips.allSatisfy { $0.last != nil })
            var rng = SplitMix64(seed: 9)
            var rows: [FixturePicture] = []
            var all: [PictureCandidate] = []
            for i in 0..<400 {
                let point = GeoPoint(
                    lat: Double.random(in: 89.2...90, using: &rng), lon: Double.random(in: -180..<180, using: &rng))!
                let likes = Int64(i % 3)
                rows.append(
                    FixturePicture(
                        by: u[0].id, lat: point.lat, lon: point.lon, likes: likes, createdAt: Int64(i / 5),
                        privateEvent: nil))
                all.append(
                    PictureCandidate(
                        id: Int64(i + 1), point: point, likes: likes, createdAt: Int64(i / 5), hidden: false,
                        privateEvent: nil))
            }
            try await PictureTestHooks(store).insertFixturePictures(rows)
            let pages = try await pagesMatchBruteForce(store, all, viewer: u[1], radius: 60_000, origin: origin)
            #expect(pages >= 3)
        }
    }

    @Test(arguments: StoreEngine.available)
    func sparseNearbyPagesSortInMemoryExactly(engine: StoreEngine) async throws {
        try await withStore(engine) { store, u in
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

    @Test(arguments: StoreEngine.available)
    func eventsPagesSearchAndDeletion(engine: StoreEngine) async throws {
        try await withStore(engine) { store, u in
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

    @Test(arguments: StoreEngine.available)
    func dailyFiguresCountPostsLikesReportsAndTheMedianResolution(engine: StoreEngine) async throws {
        try await withStore(engine) { store, u in
            let day = DailyStatsRange.dayMs
            let a = try await store.postPicture(new(u[0], at: 10)).record.id
            let b = try await store.postPicture(new(u[1], at: day + 10)).record.id
            _ = try await store.setLike(picture: a, user: u[1].id, liked: true, at: day + 20)
            _ = try await store.setLike(picture: b, user: u[0].id, liked: true, at: day + 30)
            for (picture, reporter) in [(a, u[1]), (a, u[2]), (b, u[2])] {
                _ = try await store.report(
                    NewReport(
                        picture: picture, reporter: reporter, reason: .spam, text: nil, at: day + 40, threshold: 9))
            }
            let audit = AuditEntry(
                at: day + 40 + 5_000, admin: u[2], action: "picture.restore", targetKind: "picture", targetID: a,
                targetName: nil, reason: nil, detail: nil)
            #expect(try await store.resolveReports(picture: a, remove: false, audit: audit))
            let stats = try await PictureTestHooks(store).pictureDailyStats.dailyStats(
                DailyStatsRange(firstDay: 0, days: 3))
            #expect(stats[.picturesPosted] == [1, 1, 0])
            #expect(stats[.likes] == [0, 2, 0])
            #expect(stats[.reportsOpened] == [0, 3, 0])
            #expect(stats[.reportsResolved] == [0, 2, 0])
            #expect(stats[.medianResolveSeconds] == [nil, 5, nil])
        }
    }
}

extension SQLiteStorePicturesTests {
    /// PostgreSQL's plans of the nearby statements (the planner picks by statistics, so only their presence is
    /// checked; the SQLite plans are `explainPictureQueries()`'s, checked by the benchmark).
    @Test(.enabled(if: StoreEngine.available.contains(.postgres)))
    func postgresExplainsTheNearbyStatements() async throws {
        try await withStore(.postgres) { store, _ in
            let postgres = try #require(store as? PostgresStore)
            for radius in [600.0, 3_000_000] {  // one seek per strip; near a pole or wide, ranges of strips
                let plans = try await postgres.explainPictureQueries(
                    PictureOrder(sort: .likes, origin: GeoPoint(lat: 80, lon: 179.9)!), radius: radius)
                #expect(plans.count == 4)
                #expect(plans.allSatisfy { !$0.1.isEmpty && $0.1.joined().contains("pictures") })
                for sort in PictureSort.allCases {
                    let query = PictureQuery(
                        viewer: 1, scope: .nearby(radius: radius),
                        order: PictureOrder(sort: sort, origin: GeoPoint(lat: 80, lon: 179.9)!), after: nil, limit: 5)
                    #expect(try await store.pictures(query).isEmpty)
                }
            }
        }
    }
}

/// What the pictures tests write and read below the ports, through each engine's own connection: media rows (the
/// media port is another's), the benchmark's fixtures and the daily figures (store methods outside the ports).
struct PictureTestHooks {
    let store: any EngineStore

    init(_ store: any EngineStore) { self.store = store }

    private var engine: (sqlite: SQLiteStore?, postgres: PostgresStore?) {
        (store as? SQLiteStore, store as? PostgresStore)
    }

    func insertMedia(id: String, owner: Int64, contentType: String) async throws {
        let sql = "INSERT INTO media (id, owner_id, content_type, size, created_at) VALUES (?, ?, ?, 3, 1)"
        if let sqlite = engine.sqlite {
            try await sqlite.pool.write { db in try db.execute(sql: sql, arguments: [id, owner, contentType]) }
        } else if let postgres = engine.postgres {
            try await postgres.pool.write { db in try db.execute(sql, [id, owner, contentType]) }
        }
    }

    func reportStates(picture: Int64) async throws -> [String] {
        let sql = "SELECT state FROM picture_reports WHERE picture_id = ? ORDER BY id"
        if let sqlite = engine.sqlite {
            return try await sqlite.pool.read { db in try String.fetchAll(db, sql: sql, arguments: [picture]) }
        }
        return try await engine.postgres!.pool.read { db in try db.scalars(sql, [picture], as: String.self) }
    }

    func insertFixtureEvent(tag: String, owner: Int64) async throws -> Int64 {
        if let sqlite = engine.sqlite { return try await sqlite.insertFixtureEvent(tag: tag, owner: owner) }
        return try await engine.postgres!.insertFixtureEvent(tag: tag, owner: owner)
    }

    func insertFixturePictures(_ rows: [FixturePicture]) async throws {
        if let sqlite = engine.sqlite { return try await sqlite.insertFixturePictures(rows) }
        try await engine.postgres!.insertFixturePictures(rows)
    }

    func hideFixturePictures(_ ids: [Int64]) async throws {
        if let sqlite = engine.sqlite { return try await sqlite.hideFixturePictures(ids) }
        try await engine.postgres!.hideFixturePictures(ids)
    }

    var pictureDailyStats: any DailyStatsProvider {
        engine.sqlite?.pictureDailyStats ?? engine.postgres!.pictureDailyStats
    }
}

extension SQLiteStorePicturesTests {
    /// Migration v23 / p3 on a database from before it: an event picture that kept its poster's place unasked loses
    /// it and is stored as an event post without `place` is today (found by no nearby page, still in its event); a
    /// nearby picture keeps its place.
    @Test(arguments: StoreEngine.available)
    func eventPicturesPostedBeforeTheMigrationLoseTheirPlace(engine: StoreEngine) async throws {
        let media = Self.jpeg
        let placed = "48.85, 2.35, \(PictureArea.strip(lon: Self.paris.lon))"
        let legacyRows = [
            "INSERT INTO users (username, name, is_guest, created_at) VALUES ('anna', 'anna', false, 1)",
            "INSERT INTO users (username, name, is_guest, created_at) VALUES ('bob', 'bob', false, 1)",
            "INSERT INTO media (id, owner_id, content_type, size, created_at) "
                + "VALUES ('\(media)', 1, 'image/jpeg', 3, 1)",
            "INSERT INTO events (tag, owner_id, created_at) VALUES ('party', 1, 2)",
            "INSERT INTO event_members (event_id, user_id, joined_at) VALUES (1, 1, 2)",
            "INSERT INTO pictures (by_id, media_id, event_id, lat, lon, strip, created_at) "
                + "VALUES (1, '\(media)', 1, \(placed), 10)",
            "INSERT INTO pictures (by_id, media_id, lat, lon, strip, created_at) VALUES (1, '\(media)', \(placed), 20)",
        ]
        try await engine.withLegacyStore(
            sqliteUpTo: "v22-tracker-paired-by", postgresMigrations: 2, rows: legacyRows
        ) { store in
            let (legacy, nearby) = (Int64(1), Int64(2))
            #expect(try #require(try await store.picture(id: legacy, viewer: 2)).record.point == nil)
            #expect(try #require(try await store.picture(id: nearby, viewer: 2)).record.point == Self.paris)
            // As today's event post without `place`: no latitude, longitude or strip for a nearby page to find.
            let today = try await store.postPicture(
                NewPicture(
                    by: 1, mediaID: media, caption: nil, eventTag: "party", point: nil, createdAt: 30, postsPerHour: 9)
            ).record.id
            let unplaced = "SELECT count(*) FROM pictures WHERE lat IS NULL AND lon IS NULL AND strip IS NULL"
            #expect(try await store.sqlInteger(unplaced + " AND id IN (?, ?)", .int(legacy), .int(today)) == 2)
            #expect(try await store.sqlInteger(unplaced + " AND id = ?", .int(nearby)) == 0)
            for sort in PictureSort.allCases {
                let page = try await store.pictures(
                    PictureQuery(
                        viewer: 2, scope: .nearby(radius: 5_000), order: PictureOrder(sort: sort, origin: Self.paris),
                        after: nil, limit: 10))
                #expect(page.map(\.record.id) == [nearby])
            }
            let party = try await store.pictures(
                PictureQuery(
                    viewer: 2, scope: .event(1), order: PictureOrder(sort: .date, origin: nil), after: nil, limit: 10))
            #expect(party.map(\.record.id) == [today, legacy])
        }
    }
}
