// `cairn user create | list | set-password | suspend | unsuspend | delete`: the operator's account commands, on the
// data directory or the shared PostgreSQL database (StorageOptions), with the protocol's rules (Maintenance+Accounts).
// A password comes from standard input (--password-stdin, one line) or is generated and printed once.
import ArgumentParser
import CairnAdmin
import CairnApp
import CairnCore
import CairnSessions
import Foundation

/// Where a new password comes from.
struct PasswordSource: ParsableArguments {
    @Flag(help: "Read the password from the first line of standard input (else one is generated and printed).")
    var passwordStdin = false

    /// The password, and whether it was generated (and must be printed).
    func password() throws -> (String, generated: Bool) {
        guard passwordStdin else { return (Maintenance.generatedPassword(), true) }
        guard let line = readLine(strippingNewline: true), !line.isEmpty else {
            throw CommandFailure("no password on standard input")
        }
        return (line, false)
    }
}

extension StorageOptions {
    /// Opens the storage with `access`, runs `body` and prints what it answers; maintenance errors exit 1.
    func account(
        _ access: MaintenanceAccess = .besideHub, _ body: @escaping @Sendable (Maintenance) async throws -> String
    ) throws {
        CommandLogging.bootstrap()
        let data = try open(access)
        defer { try? data.close() }
        do {
            print(try runBlocking { try await body(data) })
        } catch let error as MaintenanceError {
            throw CommandFailure(error.description)
        }
    }
}

struct UserCreate: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "create", abstract: "Create an account (username and password as `register` checks them).")

    @Argument(help: "The username: 3–32 characters of a-z, 0-9, '_' and '.'.")
    var username: String
    @Option(help: "The display name (default: the username).")
    var name: String?
    @OptionGroup var source: PasswordSource
    @OptionGroup var storage: StorageOptions

    func run() throws {
        let (password, generated) = try source.password()
        let (username, name) = (username, name)
        try storage.account { data in
            let user = try await data.createUser(username: username, password: password, name: name)
            return "created '\(user.username)' (id \(user.id))" + (generated ? "; password: \(password)" : "")
        }
    }
}

struct UserList: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "list", abstract: "List accounts: id, username, name, roles, suspension, created, last seen.")

    @Flag(help: "Include guest accounts.")
    var guests = false
    @OptionGroup var storage: StorageOptions

    func run() throws {
        let guests = guests
        try storage.account { data in
            let rows = try await data.listUsers(guests: guests)
            let lines = rows.map { row -> String in
                let roles = row.isAdmin ? "admin" : "-"
                let suspended =
                    row.suspension.map { s in "suspended " + (s.until.map { "until \(iso($0))" } ?? "until lifted") }
                    ?? "active"
                let seen = row.lastSeenAt.map(iso) ?? "never"
                return [
                    String(row.user.id), row.user.username, row.user.name, roles, suspended, iso(row.createdAt), seen,
                ]
                .joined(separator: "\t")
            }
            return (["id\tusername\tname\troles\tstate\tcreated\tlast seen"] + lines).joined(separator: "\n")
        }
    }
}

/// Milliseconds since the epoch as ISO 8601 UTC, seconds precision.
private func iso(_ ms: Int64) -> String {
    let formatter = ISO8601DateFormatter()
    formatter.timeZone = TimeZone(identifier: "UTC")
    return formatter.string(from: Date(timeIntervalSince1970: Double(ms) / 1000))
}

struct UserSetPassword: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "set-password",
        abstract: "Set an account's password (generated and printed unless --password-stdin); signs out its devices.")

    @Argument(help: "The account's username.")
    var username: String
    @OptionGroup var source: PasswordSource
    @OptionGroup var storage: StorageOptions

    func run() throws {
        let (password, generated) = try source.password()
        let username = username
        try storage.account { data in
            let revoked = try await data.setPassword(username: username, password: password)
            return "set the password of '\(username)' and signed out its \(revoked) session(s)"
                + (generated ? "; password: \(password)" : "")
        }
    }
}

struct UserSuspend: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "suspend",
        abstract: "Suspend an account as admin.suspend does: sign-ins refused with the reason, audited.")

    @Argument(help: "The account's username.")
    var username: String
    @Option(help: "Why (shown to the account at sign-in; at most 500 bytes).")
    var reason: String
    @Option(name: .customLong("for"), help: "Seconds until it ends by itself (default: until unsuspended).")
    var seconds: Int64?
    @OptionGroup var storage: StorageOptions

    func run() throws {
        let (username, reason, seconds) = (username, reason, seconds)
        try storage.account { data in
            let suspension = try await data.suspend(username: username, reason: reason, seconds: seconds)
            let end = suspension.until.map { "until \(iso($0))" } ?? "until lifted"
            return "suspended '\(username)' \(end): a running hub refuses its next sign-in; "
                + "connections open now stay until they close"
        }
    }
}

struct UserUnsuspend: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "unsuspend", abstract: "Lift an account's suspension (audited).")

    @Argument(help: "The account's username.")
    var username: String
    @OptionGroup var storage: StorageOptions

    func run() throws {
        let username = username
        try storage.account { data in
            try await data.unsuspend(username: username)
                ? "lifted the suspension of '\(username)'" : "'\(username)' was not suspended"
        }
    }
}

struct UserDelete: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "delete",
        abstract: "Delete an account with its tokens, friendships, relics, pictures, messages and the buckets it "
            + "alone owned (with their items). Stop the hub first.")

    @Argument(help: "The account's username.")
    var username: String
    @OptionGroup var storage: StorageOptions

    func run() throws {
        let username = username
        try storage.account(.exclusive(purpose: "cairn user delete")) { data in
            let gone = try await data.deleteUser(username: username)
            return "deleted '\(gone.user.username)' (id \(gone.user.id)) with its tokens, \(gone.friends) "
                + "friendship(s), \(gone.relics) relic(s), \(gone.pictures) picture(s), its messages, and its "
                + "place in \(gone.buckets) bucket(s) (those it alone owned went, with their items)"
        }
    }
}
