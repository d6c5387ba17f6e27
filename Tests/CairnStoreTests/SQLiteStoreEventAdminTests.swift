// The admins' writes on PicShare's tables: `updateEvent` changes an event's title and password, copies whether it is
// private into every one of its pictures (what pages read), makes its posters members when it becomes private and
// appends the audit line without the password, in one transaction; and the admin user list counts each account's
// pictures, the likes they received and the open reports against them, from the real tables. Both on both engines.
import CairnAdmin
import CairnCore
import CairnPictures
import Foundation
import GRDB
import Testing

@testable import CairnPostgres
@testable import CairnStore

@Suite(.timeLimit(.minutes(5)))
struct SQLiteStoreEventAdminTests {
    let pictures = SQLiteStorePicturesTests()

    func audit(_ admin: User, _ event: Int64, detail: String?) -> AuditEntry {
        AuditEntry(
            at: 50, admin: admin, action: "event.update", targetKind: "event", targetID: event, targetName: "party",
            reason: nil, detail: detail)
    }

    func page(_ store: any EngineStore, _ event: Int64, viewer: User) async throws -> [Int64] {
        try await store.pictures(
            PictureQuery(
                viewer: viewer.id, scope: .event(event), order: PictureOrder(sort: .date, origin: nil), after: nil,
                limit: 10)
        ).map(\.record.id)
    }

    /// The pictures' private-event copies in id order, and the audit lines' actions and details, newest first.
    func rows(_ store: any EngineStore) async throws -> (copies: [Int64?], audit: [(String, String?)]) {
        let copies = "SELECT private_event FROM pictures ORDER BY id"
        let audit = "SELECT action, detail FROM admin_audit ORDER BY id DESC"
        if let sqlite = store as? SQLiteStore {
            return try await sqlite.pool.read { db in
                (
                    try Int64?.fetchAll(db, sql: copies),
                    try Row.fetchAll(db, sql: audit).map { ($0[0] as String, $0[1] as String?) }
                )
            }
        }
        let postgres = try #require(store as? PostgresStore)
        return try await postgres.pool.read { db in
            (
                try db.rows(copies).map { $0[0] as Int64? },
                try db.rows(audit).map { ($0[0] as String, $0[1] as String?) }
            )
        }
    }

    @Test(arguments: StoreEngine.available)
    func anEventMadePrivateHidesItsPicturesFromNonMembersAndPublicAgainShowsThem(engine: StoreEngine) async throws {
        try await pictures.withStore(engine) { store, u in
            let (anna, bob, cleo) = (u[0], u[1], u[2])
            let a = try await store.postPicture(pictures.new(anna, event: "party", at: 10)).record.id
            let b = try await store.postPicture(pictures.new(bob, event: "party", at: 20)).record.id
            let party = try #require(try await store.event(tag: "party", viewer: cleo.id)).info
            #expect(try await page(store, party.id, viewer: cleo) == [b, a])

            let update = EventUpdate(event: party.id, title: .set("The party"), passwordHash: .set("scrypt$x"), at: 40)
            let made = try #require(
                try await store.updateEvent(update, audit: audit(cleo, party.id, detail: "private=true")))
            #expect(made.info.isPrivate && made.info.title == "The party")
            #expect(made.members == [anna.id, bob.id])  // the creator and the other poster
            #expect(made.info.member == false)  // as the admin (cleo) sees it
            #expect(try await rows(store).copies == [party.id, party.id])
            #expect(try await page(store, party.id, viewer: cleo) == [])
            #expect(try await page(store, party.id, viewer: bob) == [b, a])
            #expect(try await store.picture(id: a, viewer: cleo.id)?.member == false)
            let nearby = try await store.pictures(
                PictureQuery(
                    viewer: cleo.id, scope: .nearby(radius: 1_000),
                    order: PictureOrder(sort: .date, origin: SQLiteStorePicturesTests.paris), after: nil, limit: 10))
            #expect(nearby.isEmpty)
            #expect(try await store.event(tag: "party", viewer: cleo.id)?.passwordHash == "scrypt$x")

            let open = EventUpdate(event: party.id, title: .clear, passwordHash: .clear, at: 60)
            let opened = try #require(try await store.updateEvent(open, audit: audit(cleo, party.id, detail: nil)))
            #expect(opened.members == nil && !opened.info.isPrivate && opened.info.title == nil)
            #expect(try await page(store, party.id, viewer: cleo) == [b, a])
            let lines = try await rows(store).audit
            #expect(lines.map(\.0) == ["event.update", "event.update"])
            #expect(lines.last?.1 == "private=true")
            let missing = EventUpdate(event: 9_999, title: .set("x"), passwordHash: .keep, at: 70)
            #expect(try await store.updateEvent(missing, audit: audit(cleo, 9_999, detail: nil)) == nil)
            #expect(try await rows(store).audit.count == 2)
        }
    }

    @Test(arguments: StoreEngine.available)
    func theUserListCountsPicturesLikesReceivedAndOpenReports(engine: StoreEngine) async throws {
        try await pictures.withStore(engine) { store, u in
            let (anna, bob, cleo, guest) = (u[0], u[1], u[2], u[3])
            let first = try await store.postPicture(pictures.new(anna, at: 10)).record.id
            let second = try await store.postPicture(pictures.new(anna, at: 20)).record.id
            _ = try await store.postPicture(pictures.new(bob, at: 30))
            _ = try await store.setLike(picture: first, user: bob.id, liked: true, at: 40)
            _ = try await store.setLike(picture: first, user: cleo.id, liked: true, at: 40)
            _ = try await store.setLike(picture: second, user: bob.id, liked: true, at: 40)
            for reporter in [bob, cleo, guest] {
                _ = try await store.report(
                    NewReport(picture: first, reporter: reporter, reason: .spam, text: nil, at: 50, threshold: 5))
            }
            _ = try await store.report(
                NewReport(picture: second, reporter: cleo, reason: .other, text: "why", at: 50, threshold: 5))
            let annaRow = try #require(try await store.adminUser(id: anna.id, now: 60))
            #expect(annaRow.pictures == 2 && annaRow.likesReceived == 3 && annaRow.openReports == 4)
            let bobRow = try #require(try await store.adminUser(id: bob.id, now: 60))
            #expect(bobRow.pictures == 1 && bobRow.likesReceived == 0 && bobRow.openReports == 0)

            let restore = AuditEntry(
                at: 70, admin: cleo, action: "picture.restore", targetKind: "picture", targetID: first,
                targetName: nil, reason: nil, detail: nil)
            #expect(try await store.resolveReports(picture: first, remove: false, audit: restore))
            let rows = try await store.adminUsers(
                AdminUserQuery(prefix: "an", after: nil, guests: false, limit: 5), now: 80)
            #expect(rows.map(\.user.username) == ["anna"])
            #expect(rows.first?.openReports == 1 && rows.first?.likesReceived == 3)
        }
    }

    @Test(arguments: StoreEngine.available)
    func anAdminDeletesAnEventUnderReviewWithItsPicturesAndItsAuditLine(engine: StoreEngine) async throws {
        try await pictures.withStore(engine) { store, u in
            let (anna, bob, cleo) = (u[0], u[1], u[2])
            let a = try await store.postPicture(pictures.new(anna, event: "party", at: 10)).record.id
            let b = try await store.postPicture(pictures.new(bob, event: "party", at: 20)).record.id
            let kept = try await store.postPicture(pictures.new(bob, at: 30)).record.id
            let party = try #require(try await store.event(tag: "party", viewer: cleo.id)).info
            _ = try await store.report(
                NewReport(picture: a, reporter: cleo, reason: .spam, text: nil, at: 40, threshold: 5))
            // Its creator may not delete it while it is under review; an admin may.
            await #expect(throws: PictureStoreError.underReview) { try await store.deleteEvent(id: party.id) }
            let gone = AuditEntry(
                at: 50, admin: cleo, action: "event.delete", targetKind: "event", targetID: party.id,
                targetName: "party", reason: "spam ring", detail: "pictures=2")
            #expect(try await store.deleteEventAsAdmin(id: party.id, audit: gone))
            #expect(try await store.event(tag: "party", viewer: cleo.id) == nil)
            #expect(try await store.picture(id: a, viewer: cleo.id) == nil)
            #expect(try await store.picture(id: b, viewer: cleo.id) == nil)
            #expect(try await store.picture(id: kept, viewer: cleo.id) != nil)
            #expect(try await store.reportedPictures(open: true, limit: 10).isEmpty)
            #expect(try await rows(store).audit.map(\.0) == ["event.delete"])
            #expect(try await rows(store).audit.first?.1 == "pictures=2")
            // None left to delete: false, and no audit line.
            #expect(try await store.deleteEventAsAdmin(id: party.id, audit: gone) == false)
            #expect(try await rows(store).audit.count == 1)
        }
    }
}
