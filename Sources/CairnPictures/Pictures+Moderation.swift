// The admins' side of reports (issue 14, moderation): the queue of reported pictures with their reports and signed
// URLs, and the two ways out of it — restore (visible again, its reports resolved) and remove (gone for everyone,
// its reports resolved, its image no longer kept from the media collector). Whether the caller is an admin is asked
// of the role store off the loop, by `Administration`, at every request; each resolution is committed together with
// its audit entry (who, what, when, why) before the reply.
import CairnAdmin
public import CairnCore
import CairnErrorCodes
import CairnLoop
import CairnSessions

/// One report of a picture.
public struct PictureReport: Sendable, Equatable {
    /// Who reported it.
    public var reporter: User
    /// Why (one of `ReportReason`).
    public var reason: String
    /// The reporter's words, if any.
    public var text: String?
    /// When (ms).
    public var createdAt: Int64
    /// True once an admin resolved it.
    public var resolved: Bool

    /// Creates the value.
    public init(reporter: User, reason: String, text: String?, createdAt: Int64, resolved: Bool) {
        self.reporter = reporter
        self.reason = reason
        self.text = text
        self.createdAt = createdAt
        self.resolved = resolved
    }
}

/// A reported picture as the admins' queue shows it.
public struct ReportedPicture: Sendable, Equatable {
    /// The picture with its signed URLs.
    public var picture: PictureView
    /// Its reports, oldest first.
    public var reports: [PictureReport]
}

extension Pictures {
    /// Most pictures one queue page lists.
    public static let queueLimit = 50

    /// The reported pictures whose reports are open (`state` "open", the default) or resolved, oldest report
    /// first.
    public func reports(_ caller: Caller, state: String?, _ done: @escaping Outcome<[ReportedPicture]>) {
        let open: Bool
        guard let store, let administration else { return done(.failure(Administration.notAdmin)) }
        switch state ?? "open" {
        case "open": open = true
        case "resolved": open = false
        default: return administration.refuse(caller, .badRequest("field 'state' must be open or resolved"), done)
        }
        let now = clock.now()
        administration.asAdmin(
            caller,
            { _ async throws(DomainError) in
                try await Self.call { try await store.reportedPictures(open: open, limit: Self.queueLimit) }
            },
            then: { result in
                done(
                    result.map { rows in
                        rows.map {
                            ReportedPicture(picture: self.view($0.record, from: nil, now: now), reports: $0.reports)
                        }
                    })
            })
    }

    /// Restores (`remove` false) or removes a reported picture, resolving its reports, audited with `reason`.
    public func resolve(
        _ caller: Caller, picture id: Int64, remove: Bool, reason rawReason: String?, _ done: @escaping Outcome<Int64>
    ) {
        guard let store, let administration else { return done(.failure(Administration.notAdmin)) }
        var reason = rawReason?.trimmingWhitespace()
        if reason?.isEmpty == true { reason = nil }
        if let reason, reason.utf8.count > Administration.maxReasonBytes {
            let message = "field 'reason' must be at most \(Administration.maxReasonBytes) bytes"
            return administration.refuse(caller, .badRequest(message), done)
        }
        let audit = AuditEntry(
            at: clock.now(), admin: caller.user, action: remove ? "picture.remove" : "picture.restore",
            targetKind: "picture", targetID: id, targetName: nil, reason: reason, detail: nil)
        administration.asAdmin(
            caller,
            { _ async throws(DomainError) in
                guard try await Self.call({ try await store.resolveReports(picture: id, remove: remove, audit: audit) })
                else { throw DomainError(.notFound, "no picture \(id)") }
                return id
            }, then: done)
    }
}
