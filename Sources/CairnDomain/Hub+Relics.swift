// Relics (seed 003): messages with optional media left at a place, openable only from within their radius, for a
// while or for good, optionally behind a password. The server enforces every rule: a marker never carries the
// content, `relic.open` checks the caller's last reported position against the radius, the password (hashed, off
// the loop, rate-limited per user and relic) and the expiry, which is checked on every read as well as swept once a
// second, so an expired relic is never served even before the sweep removes it.
//
// A relic is committed before `relic.create` replies and deleted before `relic.delete` replies. The request field
// naming a relic is `relic`, because `id` is the envelope's request id.
import CairnGeo
import CairnSpatial
import CairnWire

/// Signs short-lived media URLs for those allowed to see the media (implemented by the media service).
public protocol MediaSigner: Sendable {
    /// A URL path (with its signature) through which `media` can be fetched for a while after `now`.
    func url(for media: String, now: Int64) -> String
}

extension Hub {
    /// Live relics in memory.
    public var liveRelics: Int { relics.count }

    // MARK: Ops

    func createRelic(id: Int64?, from client: Client, user: User) throws(WireError) {
        let text = try message.requireString("text")
        let radius = try message.requireDouble("radius")
        let ttl = try message.int("ttl")
        let password = try message.string("password")
        let media = try message.string("media")
        let lat = try message.double("lat"), lon = try message.double("lon")
        let limits = configuration
        guard text.count <= limits.relicTextLimit else {
            throw .badRequest("field 'text' must be at most \(limits.relicTextLimit) characters")
        }
        guard !text.trimmingWhitespace().isEmpty || media != nil else {
            throw .badRequest("field 'text' must not be empty unless the relic carries media")
        }
        guard limits.relicRadius.contains(radius) else {
            throw .badRequest("field 'radius' must be between \(Int(limits.relicRadius.lowerBound)) and \(Int(limits.relicRadius.upperBound)) m")
        }
        if let ttl, !limits.relicTTLSeconds.contains(ttl) {
            throw .badRequest("field 'ttl' must be between \(limits.relicTTLSeconds.lowerBound) s and \(limits.relicTTLSeconds.upperBound) s (one year); omit it for a permanent relic")
        }
        if let password, password.isEmpty || password.utf8.count > accounts.rules.maxPasswordBytes {
            throw .badRequest("field 'password' must be 1 to \(accounts.rules.maxPasswordBytes) bytes")
        }
        if let media, !MediaLinks.isMediaID(media) {
            throw .badRequest("field 'media' must be a media id returned by POST /v1/media")
        }
        guard (lat == nil) == (lon == nil) else { throw .badRequest("fields 'lat' and 'lon' go together") }
        let here = try lastPoint(of: user, doing: "leaving a relic")
        var place = here
        if let lat, let lon {
            guard let asked = GeoPoint(lat: lat, lon: lon) else {
                throw .badRequest("fields 'lat' and 'lon' must be within [-90, 90] and [-180, 180]")
            }
            let apart = here.distance(to: asked)
            guard apart <= limits.relicPlacementSlack else {
                throw WireError(.tooFar, "a relic is left where you are: that point is \(Int(apart.rounded())) m from your last position (at most \(Int(limits.relicPlacementSlack)) m)")
                    .with(.init("distance", Int64(apart.rounded())), .init("radius", Int64(limits.relicPlacementSlack)))
            }
            place = asked
        }
        guard relics.count(of: user.id) < limits.relicsPerUser else {
            throw WireError(.rateLimited, "you already have \(limits.relicsPerUser) live relics; delete one or let one expire")
        }
        let now = clock.now()
        let new = NewRelic(creatorID: user.id, lat: place.lat, lon: place.lon, radius: radius, text: text,
                           mediaID: media, passwordHash: nil, createdAt: now, expiresAt: ttl.map { now + $0 * 1000 })
        let store = relicStore, hasher = accounts.hasher
        start(client, id: id, op: "relic.create", { () async throws(WireError) -> RelicRecord in
            var relic = new
            if let password { relic.passwordHash = await hasher.hash(password) }
            do {
                return relic.record(id: try await store.createRelic(relic))
            } catch RelicStoreError.mediaNotFound {
                throw WireError(.notFound, "no media '\(media ?? "")' was uploaded by you")
            } catch {
                storageLogger.error("storage failure: \(error)")
                throw WireError(.internal, "Storage failure; the relic was not left")
            }
        }, then: { client, record in
            self.insertRelic(record.marker)
            self.replyOK(client, id: id) { w in
                w.key("relic"); self.writeRelic(record, state: nil, now: now, to: &w)
            }
        })
    }

    func browseRelics(id: Int64?, from client: Client, user: User) throws(WireError) {
        let radius = try message.double("radius") ?? configuration.relicBrowseRadius
        guard radius > 0 && radius <= configuration.relicBrowseRadiusMax else {
            throw .badRequest("field 'radius' must be above 0 and at most \(Int(configuration.relicBrowseRadiusMax)) m")
        }
        let here = try lastPoint(of: user, doing: "looking for relics")
        let now = clock.now()
        var found: [(marker: RelicMarker, distance: Double)] = []
        index.forEach(in: .relics, within: radius, of: here) { relic, _, distance in
            if let marker = relics.live(relic, at: now) { found.append((marker, distance)) }
        }
        found.sort { $0.distance < $1.distance || ($0.distance == $1.distance && $0.marker.id < $1.marker.id) }
        let truncated = found.count > configuration.relicNearbyLimit
        if truncated { found.removeLast(found.count - configuration.relicNearbyLimit) }
        relics.show(found.map(\.marker.id), to: client.id)
        replyOK(client, id: id) { w in
            w.key("relics"); w.beginArray()
            for (marker, distance) in found { Self.writeMarker(marker, distance: distance, to: &w) }
            w.endArray()
            if truncated { w.field("truncated", true) }
        }
    }

    func openRelic(id: Int64?, from client: Client, user: User) throws(WireError) {
        let relicID = try requireRelicID()
        let password = try message.string("password")
        let now = clock.now()
        let store = relicStore, social = self.social
        guard let marker = relics.live(relicID, at: now) else {
            if relics.markers[relicID] != nil {
                expireRelics(now: now)  // due but not yet swept: sweep now, so everyone hears of it
                throw WireError(.expired, "relic \(relicID) has expired")
            }
            // Not live: tell an expired relic (kept until the retention ends) from one that never was.
            start(client, id: id, op: "relic.open", { () async throws(WireError) -> Bool in
                let record = try await Self.storage { try await store.relic(id: relicID) }
                return record?.marker.isExpired(at: now) ?? false
            }, then: { client, expired in
                if expired {
                    self.fail(client, id: id, op: "relic.open", WireError(.expired, "relic \(relicID) has expired"))
                } else {
                    self.fail(client, id: id, op: "relic.open", WireError(.notFound, "no relic \(relicID)"))
                }
            })
            return
        }
        let isCreator = marker.creatorID == user.id
        var limiterKey: String?
        if !isCreator {
            let here = try lastPoint(of: user, doing: "opening a relic")
            let distance = here.distance(to: GeoPoint(lat: marker.lat, lon: marker.lon) ?? here)
            guard distance <= marker.radius else {
                throw WireError(.tooFar, "you are \(Int(distance.rounded())) m away; relic \(relicID) opens within \(Int(marker.radius)) m")
                    .with(.init("distance", Int64(distance.rounded())), .init("radius", Int64(marker.radius)))
            }
            if marker.locked {
                guard let password, !password.isEmpty else {
                    throw WireError(.wrongPassword, "relic \(relicID) is locked: send its 'password'")
                }
                let key = "\(user.id)/\(relicID)"
                if let wait = relicPasswords.attempt(key, now: now) {
                    throw WireError(.rateLimited, "too many wrong passwords for this relic; try again in \((wait + 999) / 1000) s")
                        .with(.init("retry_after_ms", wait))
                }
                limiterKey = key
            }
        }
        let hasher = accounts.hasher
        let checksPassword = limiterKey != nil
        start(client, id: id, op: "relic.open", { () async throws(WireError) -> (RelicRecord?, User?, Bool) in
            guard let record = try await Self.storage({ try await store.relic(id: relicID) }) else {
                return (nil, nil, false)
            }
            var allowed = true
            if checksPassword {
                allowed = await hasher.verify(password ?? "", against: record.passwordHash)
            }
            let creator = allowed ? try? await social.user(id: record.marker.creatorID) : nil
            return (record, creator, allowed)
        }, then: { client, result in
            let (record, creator, allowed) = result
            let now = self.clock.now()
            guard let record, self.relics.markers[relicID] != nil else {
                self.fail(client, id: id, op: "relic.open", WireError(.notFound, "no relic \(relicID)"))
                return
            }
            guard self.relics.live(relicID, at: now) != nil else {
                self.expireRelics(now: now)
                self.fail(client, id: id, op: "relic.open", WireError(.expired, "relic \(relicID) has expired"))
                return
            }
            guard allowed else {
                self.fail(client, id: id, op: "relic.open", WireError(.wrongPassword, "wrong password for relic \(relicID)"))
                return
            }
            if let limiterKey { self.relicPasswords.forgive(limiterKey, at: now) }
            self.replyOK(client, id: id) { w in
                w.key("relic"); self.writeRelic(record, state: nil, now: now, creator: creator, to: &w)
            }
        })
    }

    func listMyRelics(id: Int64?, from client: Client, user: User) throws(WireError) {
        let before = try message.int("before")
        let limit = try message.int("limit") ?? Int64(configuration.relicMineLimit)
        guard limit >= 1 && limit <= Int64(configuration.relicMineLimit) else {
            throw .badRequest("field 'limit' must be between 1 and \(configuration.relicMineLimit)")
        }
        if let before, before <= 0 { throw .badRequest("field 'before' must be a relic id") }
        let store = relicStore, me = user.id
        start(client, id: id, op: "relic.mine", { () async throws(WireError) -> [RelicRecord] in
            try await Self.storage { try await store.relics(creator: me, before: before, limit: Int(limit) + 1) }
        }, then: { client, records in
            let now = self.clock.now()
            let more = records.count > Int(limit)
            self.replyOK(client, id: id) { w in
                w.key("relics"); w.beginArray()
                for record in records.prefix(Int(limit)) {
                    self.writeRelic(record, state: record.marker.isExpired(at: now) ? "expired" : "live", now: now, to: &w)
                }
                w.endArray()
                w.field("more", more)
            }
        })
    }

    func deleteRelic(id: Int64?, from client: Client, user: User) throws(WireError) {
        let relicID = try requireRelicID()
        if let marker = relics.markers[relicID], marker.creatorID != user.id {
            throw WireError(.notOwner, "only its creator can delete relic \(relicID)")
        }
        let store = relicStore, me = user.id
        start(client, id: id, op: "relic.delete", { () async throws(WireError) -> Void in
            guard let record = try await Self.storage({ try await store.relic(id: relicID) }) else {
                throw WireError(.notFound, "no relic \(relicID)")
            }
            guard record.marker.creatorID == me else {
                throw WireError(.notOwner, "only its creator can delete relic \(relicID)")
            }
            _ = try await Self.storage { try await store.deleteRelic(id: relicID) }
        }, then: { client, _ in
            self.removeRelic(relicID, event: "relic.vanish", reason: "deleted")
            self.replyOK(client, id: id) { w in w.field("relic", relicID) }
        })
    }

    // MARK: Live state

    /// Adds a stored relic to memory and tells the connected users standing inside it.
    func insertRelic(_ marker: RelicMarker) {
        guard let centre = GeoPoint(lat: marker.lat, lon: marker.lon) else { return }
        relics.add(marker)
        index.upsert(marker.id, at: centre, in: .relics)
        var standing: [Int64] = []
        index.forEach(in: .users, within: marker.radius, of: centre) { user, _, _ in
            if sessions[user] != nil { standing.append(user) }
        }
        for user in standing where relics.enter(user, marker.id) {
            push(to: user, "relic.appear") { w in w.key("relic"); Self.writeMarker(marker, distance: nil, to: &w) }
        }
    }

    /// Removes a relic from memory and tells whoever saw it (`event` is `relic.vanish` or `relic.expired`).
    func removeRelic(_ relicID: Int64, event: StaticString, reason: String?) {
        index.remove(relicID, from: .relics)
        guard let (marker, audience) = relics.remove(relicID) else { return }
        announce(marker, to: audience, event: event, reason: reason)
    }

    /// Sweeps relics whose time is up (the tick calls this once a second; reads check expiry themselves).
    func expireRelics(now: Int64) {
        var gone: [(RelicMarker, RelicBook.Audience)] = []
        relics.sweep(now: now) { marker, audience in gone.append((marker, audience)) }
        for (marker, audience) in gone {
            index.remove(marker.id, from: .relics)
            announce(marker, to: audience, event: "relic.expired", reason: nil)
        }
    }

    /// Tells the users inside a relic, its creator and the connections shown it that it is gone; each connection
    /// hears it once.
    private func announce(_ marker: RelicMarker, to audience: RelicBook.Audience, event: StaticString, reason: String?) {
        var connections = audience.connections
        for user in audience.users.union([marker.creatorID]) {
            for connection in sessions[user] ?? [] { connections.insert(connection) }
        }
        guard !connections.isEmpty else { return }
        writer.reset()
        Envelope.event(event, into: &writer) { w in
            w.field("id", marker.id)
            if let reason { w.field("reason", reason) }
        }
        for connection in connections { flush(to: connection) }
    }

    /// A connected user moved: `relic.appear` for each relic they stepped into, `relic.vanish` for each they left.
    func roamRelics(_ user: Int64, to point: GeoPoint, now: Int64) {
        relics.roam(user, to: point, now: now, entered: { marker in
            self.push(to: user, "relic.appear") { w in w.key("relic"); Self.writeMarker(marker, distance: nil, to: &w) }
        }, left: { relic in
            self.push(to: user, "relic.vanish") { w in w.field("id", relic) }
        })
    }

    /// Purges relics expired longer ago than the retention, off the loop, at most once per purge interval.
    func purgeOldRelics(now: Int64) {
        guard !relicPurging, now - lastRelicPurgeAt >= configuration.relicPurgeIntervalMs else { return }
        relicPurging = true
        lastRelicPurgeAt = now
        let store = relicStore, cutoff = now - configuration.relicRetentionMs
        background({ try await store.purgeExpiredRelics(expiredBefore: cutoff) }, then: { result in
            self.relicPurging = false
            switch result {
            case .success(let count) where count > 0: self.logger.info("purged \(count) relic(s) expired before the retention period")
            case .success: break
            case .failure(let error): self.logger.error("purging expired relics failed: \(error)")
            }
        })
    }

    // MARK: Helpers

    private func requireRelicID() throws(WireError) -> Int64 {
        guard message.contains("relic") else {
            throw .badRequest("missing field 'relic' (the relic's id; 'id' is the request id)")
        }
        let relicID = try message.requireInt("relic")
        guard relicID > 0 else { throw .badRequest("field 'relic' must be a relic id") }
        return relicID
    }

    private func lastPoint(of user: User, doing what: String) throws(WireError) -> GeoPoint {
        guard let fix = fixes[user.id], let point = GeoPoint(lat: fix.lat, lon: fix.lon) else {
            throw .badRequest("no position yet: report one with 'pos' before \(what)")
        }
        return point
    }

    /// The contract's marker: `{id, lat, lon, radius, creator, created, expires?, locked}` (plus `distance` in
    /// metres when browsing).
    static func writeMarker(_ marker: RelicMarker, distance: Double?, to w: inout JSONWriter) {
        w.beginObject()
        writeMarkerFields(marker, to: &w)
        if let distance { w.field("distance", distance.rounded()) }
        w.endObject()
    }

    private static func writeMarkerFields(_ marker: RelicMarker, to w: inout JSONWriter) {
        w.field("id", marker.id)
        w.field("lat", marker.lat)
        w.field("lon", marker.lon)
        w.field("radius", marker.radius)
        w.field("creator", marker.creatorID)
        w.field("created", marker.createdAt)
        if let expires = marker.expiresAt { w.field("expires", expires) }
        w.field("locked", marker.locked)
    }

    /// A relic with its content: the marker's fields, `text`, and `media` with a signed `media_url` when it has
    /// media; `state` for `relic.mine`, `creator_user` when known.
    func writeRelic(_ record: RelicRecord, state: String?, now: Int64, creator: User? = nil, to w: inout JSONWriter) {
        w.beginObject()
        Self.writeMarkerFields(record.marker, to: &w)
        w.field("text", record.text)
        if let media = record.mediaID {
            w.field("media", media)
            if let mediaSigner { w.field("media_url", mediaSigner.url(for: media, now: now)) }
        }
        if let state { w.field("state", state) }
        if let creator { w.key("creator_user"); creator.write(to: &w) }
        w.endObject()
    }
}
