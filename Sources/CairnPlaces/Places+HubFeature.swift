// Places as the hub sees them: a feature with no events, tick or session state.
import CairnCore

extension Places: HubFeature {}
