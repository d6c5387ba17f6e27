// `admin.settings.get` and `admin.settings.set` (docs/PROTOCOL.md, Administration). A change is checked whole on the
// loop first — every key known, every value of its type and within its bounds — so a request with one bad value
// changes nothing. Changes are written one at a time (`AdminSettings.oneAtATime`): each commits its values and one
// audit line per value that changed (who, the key, `old → new`) in one transaction, and only then are the values put
// in force and the owning features told, on the loop — even if the admin's connection has gone meanwhile, since
// the change is on disk. A value equal to the one in force is left alone (neither stored nor audited), so an override
// is only ever stored with the audit line that explains it. With several nodes, a committed change is announced
// (`RemoteSettings`) and every other node reads the stored values again.
public import CairnCore
import CairnErrorCodes
import CairnSessions

/// The settings as an admin reads them: each one's definition and its value in force, in registration order.
public struct AdminSettingsReading {
    /// Each setting and its value.
    public var entries: [(setting: AdminSetting, value: AdminSettingValue)]
}

extension Administration {
    /// What `admin.settings.get` and `.set` answer.
    var settingsReading: AdminSettingsReading {
        AdminSettingsReading(
            entries: settings.all.map { setting in (setting, settings.value(setting.key) ?? setting.defaultValue) })
    }

    /// Every setting and its value in force, for an admin.
    public func settingsInForce(_ caller: Caller, _ done: @escaping Outcome<AdminSettingsReading>) {
        asAdmin(
            caller, { _ async throws(DomainError) in }, then: { result in done(result.map { self.settingsReading }) })
    }

    /// Changes some settings (a nil value: back to the default), all or none; committed with its audit lines before
    /// the answer, in force from the answer on. Answers every setting as it now stands.
    public func changeSettings(
        _ caller: Caller, _ changes: [AdminSettingChange], _ done: @escaping Outcome<AdminSettingsReading>
    ) {
        let checked: [(AdminSetting, AdminSettingValue)]
        do { checked = try settings.check(changes) } catch { return refuse(caller, error, done) }
        guard let roles, let store else { return done(.failure(Self.notAdmin)) }
        let admin = caller.user
        let connection = caller.connection
        let resets = Set(changes.filter { $0.value == nil }.map(\.key))
        settings.oneAtATime { [self] finished in
            let now = clock.now()
            var set: [String: String] = [:]
            var audit: [AuditEntry] = []
            for (setting, value) in checked {
                let old = settings.value(setting.key) ?? setting.defaultValue
                // A value equal to the one in force changes nothing: not stored, not audited.
                guard old != value else { continue }
                if !resets.contains(setting.key) { set[setting.key] = value.description }
                audit.append(
                    AuditEntry(
                        at: now, admin: admin, action: "setting.set", targetKind: "setting", targetID: 0,
                        targetName: setting.key, reason: nil,
                        detail: "\(old) → \(value)" + (resets.contains(setting.key) ? " (default)" : "")))
            }
            let reset = Array(resets)
            let values = set
            let lines = audit
            work.run(
                { () async throws(DomainError) in
                    guard try await LoopWork.storage({ try await roles.hasRole(.admin, userID: admin.id) }) else {
                        throw Self.notAdmin
                    }
                    try await LoopWork.storage {
                        try await store.saveAdminSettings(set: values, reset: reset, audit: lines)
                    }
                },
                then: { result in
                    if case .success = result {
                        self.settings.put(checked)
                        if !values.isEmpty || !reset.isEmpty { self.remote?.settingsChanged() }
                    }
                    finished()
                    guard self.sessions.user(of: connection)?.id == admin.id else {
                        return done(.failure(DomainError(.unauthorized, "the session ended")))
                    }
                    done(result.map { self.settingsReading })
                })
        }
    }
}
