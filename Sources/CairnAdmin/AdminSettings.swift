// Settings an admin changes while the hub runs (docs/PROTOCOL.md, Administration: `admin.settings.get` / `.set`).
// The registry knows no feature: a feature registers each of its live settings — key, type, bounds, the default the
// configuration gives, and an `apply` closure — and from then on hears every new value at once, on the loop, through
// that closure. Overrides written by admins are stored (`AdminSettingsStore`) and handed to `restore` at start; a
// setting registered before or after the restore gets its stored value either way, so the order in which features
// are built does not matter. A stored value that no longer fits (an unknown key, bounds tightened since) is left
// out and the default holds. With several nodes on one store, a change committed through another node is read from
// the store again and put in force here (`putStored`, `RemoteSettings.swift`). Loop thread only.
import CairnCore
import Logging

/// A setting's type and the values it may take.
public enum AdminSettingKind: Sendable, Equatable {
    /// A whole number within the range.
    case integer(ClosedRange<Int64>)
    /// True or false.
    case boolean
}

/// A setting's value.
public enum AdminSettingValue: Sendable, Equatable, CustomStringConvertible {
    /// A whole number.
    case integer(Int64)
    /// True or false.
    case boolean(Bool)

    /// As stored and audited: the number in decimal, or `true` / `false`.
    public var description: String {
        switch self {
        case .integer(let value): "\(value)"
        case .boolean(let value): value ? "true" : "false"
        }
    }

    /// The stored text read back as a value of `kind`; nil when it is not one, or out of bounds.
    init?(stored text: String, kind: AdminSettingKind) {
        switch kind {
        case .integer(let range):
            guard let value = Int64(text), range.contains(value) else { return nil }
            self = .integer(value)
        case .boolean:
            guard text == "true" || text == "false" else { return nil }
            self = .boolean(text == "true")
        }
    }
}

/// One registered setting.
public struct AdminSetting {
    /// Its name on the wire and in the store, e.g. `max_upload_bytes`.
    public let key: String
    /// Its type and bounds.
    public let kind: AdminSettingKind
    /// Its value when no admin has set one (from the configuration).
    public let defaultValue: AdminSettingValue
    /// One line saying what it does, for `admin.settings.get`.
    public let help: String
    /// Hands a new value to the feature that owns the setting; on the loop.
    let apply: (AdminSettingValue) -> Void

    /// The refusal when `value` does not fit, naming the key; nil when it does.
    func problem(_ value: AdminSettingValue) -> DomainError? {
        switch (kind, value) {
        case (.integer(let range), .integer(let number)):
            range.contains(number)
                ? nil
                : .badRequest("setting '\(key)' must be \(range.lowerBound)–\(range.upperBound)")
        case (.boolean, .boolean): nil
        case (.integer, _): .badRequest("setting '\(key)' must be an integer")
        case (.boolean, _): .badRequest("setting '\(key)' must be a boolean")
        }
    }
}

/// A change asked for: a new value, or nil to go back to the default.
public typealias AdminSettingChange = (key: String, value: AdminSettingValue?)

/// The registry of live settings and their values. Loop thread only.
public final class AdminSettings {
    private var settings: [String: AdminSetting] = [:]
    private var order: [String] = []
    private var values: [String: AdminSettingValue] = [:]
    /// Overrides read from the store at start, kept for settings registered later.
    private var stored: [String: String] = [:]
    /// A change being committed, and those waiting for it: changes are written one at a time, so each audit line's
    /// old value is the value the previous change left.
    private(set) var writing = false
    private var waiting: [(@escaping () -> Void) -> Void] = []
    /// Local puts so far: a read of the store that overlapped one is read again (`RemoteSettings.swift`).
    private(set) var generation = 0
    /// Reading the stored overrides again after a change made on another node (`RemoteSettings.swift`).
    var rereads = SettingsRereads()

    package init() {}

    // MARK: Registering

    /// Registers a setting: from now on `apply` receives its value — at once (the stored override, else the
    /// default) and after every change an admin makes. Each key is registered once.
    public func register(
        _ key: String, kind: AdminSettingKind, default defaultValue: AdminSettingValue, help: String,
        apply: @escaping (AdminSettingValue) -> Void
    ) {
        precondition(settings[key] == nil, "setting '\(key)' registered twice")
        let setting = AdminSetting(key: key, kind: kind, defaultValue: defaultValue, help: help, apply: apply)
        precondition(setting.problem(defaultValue) == nil, "the default of setting '\(key)' does not fit it")
        settings[key] = setting
        order.append(key)
        var value = defaultValue
        if let text = stored[key] {
            if let read = AdminSettingValue(stored: text, kind: kind) {
                value = read
            } else {
                hubLogger.warning("stored setting '\(key)' = '\(text)' does not fit it; the default holds")
            }
        }
        values[key] = value
        apply(value)
    }

    /// Registers a whole-number setting within `range`.
    public func registerInteger(
        _ key: String, range: ClosedRange<Int64>, default defaultValue: Int64, help: String,
        apply: @escaping (Int64) -> Void
    ) {
        register(key, kind: .integer(range), default: .integer(defaultValue), help: help) { value in
            if case .integer(let number) = value { apply(number) }
        }
    }

    /// Registers a true-or-false setting.
    public func registerBoolean(
        _ key: String, default defaultValue: Bool, help: String, apply: @escaping (Bool) -> Void
    ) {
        register(key, kind: .boolean, default: .boolean(defaultValue), help: help) { value in
            if case .boolean(let flag) = value { apply(flag) }
        }
    }

    /// The overrides stored by admins (key → stored text), read once at start: the settings registered so far take
    /// theirs now, the others when they register.
    public func restore(_ overrides: [String: String]) {
        stored = overrides
        for key in order {
            guard let setting = settings[key], let text = overrides[key] else { continue }
            guard let value = AdminSettingValue(stored: text, kind: setting.kind) else {
                hubLogger.warning("stored setting '\(key)' = '\(text)' does not fit it; the default holds")
                continue
            }
            values[key] = value
            setting.apply(value)
        }
    }

    // MARK: Reading

    /// Every setting in registration order.
    public var all: [AdminSetting] { order.compactMap { settings[$0] } }
    /// The setting named `key`.
    public func setting(_ key: String) -> AdminSetting? { settings[key] }
    /// The value in force of `key`.
    public func value(_ key: String) -> AdminSettingValue? { values[key] }
    /// Every value in force, in registration order.
    public var current: [(key: String, value: AdminSettingValue)] {
        order.compactMap { key in values[key].map { (key, $0) } }
    }

    // MARK: Changing

    /// The changes checked: every key known, every value of its type and within its bounds, no key twice; each with
    /// its setting, its old value and its new one (the default for a nil). Throws the first problem, naming its key.
    func check(_ changes: [AdminSettingChange]) throws(DomainError) -> [(AdminSetting, AdminSettingValue)] {
        guard !changes.isEmpty else { throw .badRequest("field 'settings' must name at least one setting") }
        var seen: Set<String> = []
        var checked: [(AdminSetting, AdminSettingValue)] = []
        for change in changes {
            guard let setting = settings[change.key] else {
                throw .badRequest("unknown setting '\(change.key)' (known: \(order.joined(separator: ", ")))")
            }
            guard seen.insert(change.key).inserted else { throw .badRequest("setting '\(change.key)' given twice") }
            let value = change.value ?? setting.defaultValue
            if let problem = setting.problem(value) { throw problem }
            checked.append((setting, value))
        }
        return checked
    }

    /// Puts committed values in force: each owning feature hears its new value now.
    func put(_ changes: [(AdminSetting, AdminSettingValue)]) {
        generation &+= 1
        for (setting, value) in changes {
            values[setting.key] = value
            setting.apply(value)
        }
    }

    /// Puts in force the overrides read from the store again (another node changed some): each setting whose value
    /// differs from memory takes the stored one, or its default when none is stored (a reset elsewhere) or the
    /// stored one no longer fits (said once per stored text, as `restore` says it); its feature hears it once.
    /// Unchanged settings are left alone. Answers how many changed.
    func putStored(_ overrides: [String: String]) -> Int {
        var changed = 0
        for key in order {
            guard let setting = settings[key] else { continue }
            var value = setting.defaultValue
            if let text = overrides[key] {
                if let read = AdminSettingValue(stored: text, kind: setting.kind) {
                    value = read
                } else if stored[key] != text {
                    hubLogger.warning("stored setting '\(key)' = '\(text)' does not fit it; the default holds")
                }
            }
            guard values[key] != value else { continue }
            values[key] = value
            setting.apply(value)
            changed += 1
        }
        stored = overrides
        return changed
    }

    /// Runs `job` once no earlier change is being written; `job` calls its argument when it has finished.
    func oneAtATime(_ job: @escaping (@escaping () -> Void) -> Void) {
        guard !writing else { return waiting.append(job) }
        writing = true
        job { [unowned self] in
            self.writing = false
            if !self.waiting.isEmpty { self.oneAtATime(self.waiting.removeFirst()) } else { self.startReread() }
        }
    }
}
