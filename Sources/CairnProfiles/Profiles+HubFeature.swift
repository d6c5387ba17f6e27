// Profiles as the hub sees them: no events, tick or session state; a signer for the photos' URLs (`ShowsMedia`).
import CairnCore
import CairnMedia

extension Profiles: HubFeature {}

extension Profiles: ShowsMedia {}
