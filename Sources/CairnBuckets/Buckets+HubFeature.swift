// Buckets as the hub sees them: the events port and the media signer for items' photos (what trackers must learn of
// bucket changes goes through the hooks the hub wires).
package import CairnCore
import CairnMedia

extension Buckets: HubFeature {
    package func attach(_ events: any HubEvents) { self.events = events }
}

extension Buckets: ShowsMedia {}
