// Where admins' settings persist (docs/PROTOCOL.md, Administration): the values admins set, as text by key, read
// once at start (`AdminSettings.restore`) and written together with their audit lines in one transaction, committed
// before `admin.settings.set` answers. A setting put back to its default is deleted, so a later change of the
// configured default counts again.

/// Durable storage of admins' settings.
public protocol AdminSettingsStore: Sendable {
    /// Every stored override, key → value as text.
    func adminSettings() async throws -> [String: String]
    /// Stores `set` (key → text), deletes `reset` and appends `audit`, in one transaction.
    func saveAdminSettings(set: [String: String], reset: [String], audit: [AuditEntry]) async throws
}
