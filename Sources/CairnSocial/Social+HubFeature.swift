// The friend graph as the hub sees it: the events port, and the tick that ends sharing rules whose time is up.
package import CairnCore

extension Social: HubFeature {
    package func attach(_ events: any HubEvents) { self.events = events }

    package func tick(now: Int64) { expireShareRules(now: now) }
}
