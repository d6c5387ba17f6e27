// Chat as the hub sees it: the events port only.
package import CairnCore

extension Chat: HubFeature {
    package func attach(_ events: any HubEvents) { self.events = events }
}
