// Everything a hub needs from durable storage, whichever engine holds it: the domain's ports, the reads a hub makes
// once at start (before its loop runs, so they may block), and the daily figures' providers. `SQLiteStore` (one node,
// the embedded default) and `PostgresStore` (several nodes sharing one database) both implement it, so the
// composition below it is written once.
public import CairnAdmin
public import CairnBuckets
public import CairnChat
public import CairnCore
public import CairnMedia
public import CairnPictures
public import CairnPlaces
public import CairnPostgres
public import CairnProfiles
public import CairnRelics
import CairnSQL
public import CairnSessions
public import CairnSocial
public import CairnStore
public import CairnTrackers

/// A store a hub can run on.
public protocol HubStorage: AccountStore, SocialStore, RelicStore, ChatStore, ProfileStore, BucketStore,
    TrackerStore, SafeZoneStore, RoleStore, AdminStore, PlaceStore, PictureStore, MediaStore
{
    /// Items' last positions, at start.
    func loadTrackerPositions() throws -> [ItemPosition]
    /// Items' left-behind alerts in force, at start.
    func loadItemAlerts() throws -> [ItemAlertRecord]
    /// Every safe zone, at start.
    func loadSafeZones() throws -> [SafeZone]
    /// Every place, at start.
    func loadPlaceSummariesNow() throws -> [PlaceSummary]
    /// The settings admins changed, at start.
    func loadAdminSettingsNow() throws -> [String: String]
    /// The accounts' part of the daily figures.
    var accountDailyStats: any DailyStatsProvider { get }
    /// The pictures' part of the daily figures.
    var pictureDailyStats: any DailyStatsProvider { get }
    /// The usernames holding `role` (operators' checks and tests).
    func usernames(withRole role: UserRole) throws -> [String]
    /// Gives `role` to the account named `username`; false when it had it. Throws `RoleStoreError.noSuchUser`.
    func grantRole(_ role: UserRole, username: String, at time: Int64) throws -> Bool
    /// Takes `role` from the account named `username`; false when it did not have it. Throws
    /// `RoleStoreError.noSuchUser`.
    func revokeRole(_ role: UserRole, username: String) throws -> Bool
    /// Replaces a non-guest account's password record and deletes its tokens; how many tokens went, nil: no account.
    func setPassword(userID: Int64, hash: String) async throws -> Int?
    /// Deletes an account and what hangs off it (schema cascades); false when there was none.
    func deleteAccount(userID: Int64) async throws -> Bool
    /// Where the data lives, for the log (a path, or a database without its password).
    var location: String { get }
    /// Waits for queued writes, then closes.
    func closeStorage() throws
}

extension SQLiteStore: HubStorage {
    /// The database file.
    public var location: String { path }

    /// Closes the database.
    public func closeStorage() throws { try close() }
}

extension PostgresStore: HubStorage {
    /// The server and database, without the password.
    public var location: String { redactedURL }

    /// Closes every connection.
    public func closeStorage() throws { close() }
}
