// The domain's events on the wire: one `{"ev":…}` object each. Positions are written by `LocalDelivery` itself
// (they take the latest-wins path); everything else is here.
import CairnCore
import CairnWire

extension HubEvent {
    /// Writes the event as one JSON object.
    func write(into w: inout JSONWriter) {
        switch self {
        case .presence(let user, let online):
            Envelope.event("presence", into: &w) { w in
                w.key("user")
                w.int(user)
                w.key("online")
                w.bool(online)
            }
        case .friendRequest(let from):
            Envelope.event("friend.request", into: &w) { w in
                w.key("user")
                from.write(to: &w)
            }
        case .friendAccepted(let by):
            Envelope.event("friend.accepted", into: &w) { w in
                w.key("user")
                by.write(to: &w)
            }
        case .friendRemoved(let by):
            Envelope.event("friend.removed", into: &w) { w in
                w.key("user")
                by.write(to: &w)
            }
        case .chatMessage(let message):
            Envelope.event("chat.msg", into: &w) { w in
                w.key("message")
                message.write(to: &w)
            }
        case .chatRead(let peer, let upto, let unread):
            Envelope.event("chat.read", into: &w) { w in
                w.field("with", peer)
                w.field("upto", upto)
                w.field("unread", unread)
            }
        case .relicAppeared(let marker):
            Envelope.event("relic.appear", into: &w) { w in
                w.key("relic")
                marker.write(distance: nil, to: &w)
            }
        case .relicVanished(let id, let reason):
            Envelope.event("relic.vanish", into: &w) { w in
                w.field("id", id)
                if let reason { w.field("reason", reason) }
            }
        case .relicExpired(let id):
            Envelope.event("relic.expired", into: &w) { w in w.field("id", id) }
        case .bucketChanged(let bucket):
            Envelope.event("bucket.changed", into: &w) { w in w.field("bucket", bucket) }
        case .bucketRemoved(let bucket):
            Envelope.event("bucket.removed", into: &w) { w in w.field("bucket", bucket) }
        case .itemLeftBehind(let item, let distance, let lat, let lon):
            Envelope.event("item.left_behind", into: &w) { w in
                w.field("item", item)
                w.field("distance", distance)
                w.field("lat", lat)
                w.field("lon", lon)
            }
        case .itemReunited(let item):
            Envelope.event("item.reunited", into: &w) { w in w.field("item", item) }
        case .pictureNew(let picture):
            Envelope.event("picture.new", into: &w) { w in
                w.key("picture")
                picture.write(to: &w)
            }
        case .stats(let snapshot, let rates):
            Envelope.event("stats", into: &w) { w in snapshot.write(rates: rates, to: &w) }
        }
    }
}
