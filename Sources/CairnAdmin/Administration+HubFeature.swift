// Administration as the hub sees it: nothing to attach or forget; its activity log writes the day's marks on the
// tick.
import CairnCore

extension Administration: HubFeature {}

extension ActivityLog: HubFeature {}
