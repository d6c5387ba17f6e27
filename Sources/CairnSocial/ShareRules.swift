// Who may see how much of whom, with timed rules that revert by themselves. A pause (ghost mode) hides the owner
// from everyone; a per-friend level overrides the default `precise`. Expiry is checked on every read, so a rule
// never outlives its `until` even between sweeps; `expire(now:)` also removes them so the hub can push the change.

/// Sharing rules for every owner.
public struct ShareRules: Sendable {
    /// One stored rule: a level and when it ends.
    /// (Inlinable, for `OwnerView.level(of:)`: the live map asks for every watching friend of every move.)
    @usableFromInline
    struct Rule: Sendable, Equatable {
        @usableFromInline var level: ShareLevel
        @usableFromInline var until: Int64?
        @inlinable func isLive(at now: Int64) -> Bool { until.map { now < $0 } ?? true }
    }

    private var paused: [Int64: Rule] = [:]
    private var perViewer: [Int64: [Int64: Rule]] = [:]
    private var timed = 0

    /// No rules: everyone shares precisely.
    public init() {}

    /// The level at which `viewer` sees `owner` at time `now`.
    public func level(owner: Int64, viewer: Int64, now: Int64) -> ShareLevel {
        view(of: owner, now: now).level(of: viewer)
    }

    /// `owner`'s rules at `now`, read once for a fan-out over the owner's friends: each friend's level then costs
    /// at most one look-up, and none when the owner has no per-viewer rule. (`level(owner:viewer:now:)` asks it too,
    /// so both give the same answers.)
    public func view(of owner: Int64, now: Int64) -> OwnerView {
        if let pause = paused[owner], pause.isLive(at: now) {
            return OwnerView(hidesFromEveryone: true, perViewer: nil, now: now)
        }
        return OwnerView(hidesFromEveryone: false, perViewer: perViewer[owner], now: now)
    }

    /// True when `owner` is paused at `now`.
    public func isPaused(_ owner: Int64, now: Int64) -> Bool { paused[owner]?.isLive(at: now) ?? false }

    /// True when `owner` has a live per-viewer rule below `precise` (hides from, or is approximate to, someone).
    public func restricts(_ owner: Int64, now: Int64) -> Bool {
        guard let rules = perViewer[owner] else { return false }
        return rules.values.contains { $0.level != .precise && $0.isLive(at: now) }
    }

    /// The explicit per-viewer rule, if one is live.
    public func rule(owner: Int64, viewer: Int64, now: Int64) -> (level: ShareLevel, until: Int64?)? {
        guard let rule = perViewer[owner]?[viewer], rule.isLive(at: now) else { return nil }
        return (rule.level, rule.until)
    }

    /// Pauses `owner` until `until` (nil: until resumed).
    public mutating func pause(_ owner: Int64, until: Int64?) {
        if paused[owner]?.until != nil { timed -= 1 }
        paused[owner] = Rule(level: .hidden, until: until)
        if until != nil { timed += 1 }
    }

    /// Ends a pause.
    public mutating func resume(_ owner: Int64) {
        if let old = paused.removeValue(forKey: owner), old.until != nil { timed -= 1 }
    }

    /// Sets the level `viewer` gets for `owner`; `.precise` without a time limit removes the rule.
    public mutating func set(owner: Int64, viewer: Int64, level: ShareLevel, until: Int64?) {
        if perViewer[owner]?[viewer]?.until != nil { timed -= 1 }
        if level == .precise && until == nil {
            perViewer[owner]?[viewer] = nil
            if perViewer[owner]?.isEmpty == true { perViewer[owner] = nil }
            return
        }
        perViewer[owner, default: [:]][viewer] = Rule(level: level, until: until)
        if until != nil { timed += 1 }
    }

    /// The raw rule for (owner, viewer), or the pause when `viewer` is nil, live or not: for undoing one change.
    func entry(owner: Int64, viewer: Int64?) -> Rule? {
        guard let viewer else { return paused[owner] }
        return perViewer[owner]?[viewer]
    }

    /// Puts back one entry saved with `entry(owner:viewer:)`, leaving every other rule as it is.
    mutating func restore(owner: Int64, viewer: Int64?, to saved: Rule?) {
        guard let viewer else {
            resume(owner)
            if let saved { pause(owner, until: saved.until) }
            return
        }
        set(owner: owner, viewer: viewer, level: .precise, until: nil)
        if let saved { set(owner: owner, viewer: viewer, level: saved.level, until: saved.until) }
    }

    /// Forgets every rule between `a` and `b` (they are no longer friends).
    public mutating func forget(_ a: Int64, _ b: Int64) {
        set(owner: a, viewer: b, level: .precise, until: nil)
        set(owner: b, viewer: a, level: .precise, until: nil)
    }

    /// Removes rules whose time is up and returns them as (owner, viewer or nil for a pause, the level they set).
    public mutating func expire(now: Int64) -> [(owner: Int64, viewer: Int64?, level: ShareLevel)] {
        guard timed > 0 else { return [] }
        var ended: [(owner: Int64, viewer: Int64?, level: ShareLevel)] = []
        for (owner, rule) in paused where !rule.isLive(at: now) {
            paused[owner] = nil
            timed -= 1
            ended.append((owner, nil, .hidden))
        }
        for (owner, rules) in perViewer {
            for (viewer, rule) in rules where !rule.isLive(at: now) {
                perViewer[owner]?[viewer] = nil
                timed -= 1
                ended.append((owner, viewer, rule.level))
            }
            if perViewer[owner]?.isEmpty == true { perViewer[owner] = nil }
        }
        return ended
    }
}

/// One owner's sharing rules at one instant (`ShareRules.view(of:now:)`): what each viewer may see of the owner.
public struct OwnerView: Sendable {
    /// True when the owner is paused: no viewer sees anything.
    public let hidesFromEveryone: Bool
    /// The owner's per-viewer rules (nil: none).
    @usableFromInline let perViewer: [Int64: ShareRules.Rule]?
    @usableFromInline let now: Int64

    /// The level at which `viewer` sees the owner: hidden while paused, else the viewer's live rule, else precise.
    @inlinable
    public func level(of viewer: Int64) -> ShareLevel {
        if hidesFromEveryone { return .hidden }
        if let rule = perViewer?[viewer], rule.isLive(at: now) { return rule.level }
        return .precise
    }
}
