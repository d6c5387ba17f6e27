// Relic markers across nodes. With several nodes on one shared store, a relic created or deleted through one node is
// committed at once, but the markers live in every node's memory (the book, the index, the appear and vanish
// events for users standing there). Relics tells this port after each commit; the composition publishes the relic's
// id, and hands what other nodes publish back here: a created relic is read from the store and inserted (users
// standing inside it here hear it appear), a deleted one removed (whoever saw it here hears it vanish). A node that
// may have missed messages reads the live relics again (`resync`) and applies the differences, leaving alone the
// relics that changed while the read was under way. A single node has no port and nothing changes. Loop thread only.
package import CairnCore

/// Where relics created and deleted here go for the other nodes.
public protocol RemoteRelics: AnyObject {
    /// A relic was created here (committed).
    func relicCreated(_ id: Int64)
    /// A relic was deleted here (committed).
    func relicDeleted(_ id: Int64)
}

extension Relics {
    /// Another node created relic `id`: read from the store and shown here as a local one is, unless it is known
    /// already, was deleted since, or has expired.
    package func applyRemoteCreated(_ id: Int64) {
        guard book.markers[id] == nil, !recentlyDeleted.contains(id) else { return }
        let store = self.store
        work.run(
            { () async throws(DomainError) -> RelicRecord? in
                try await LoopWork.storage { try await store.relic(id: id) }
            },
            then: { result in
                guard case .success(let record?) = result, self.book.markers[id] == nil,
                    !self.recentlyDeleted.contains(id), record.marker.expiresAt.map({ $0 > self.clock.now() }) ?? true
                else { return }
                self.insert(record.marker)
            })
    }

    /// Another node deleted relic `id`: it vanishes here too.
    package func applyRemoteDeleted(_ id: Int64) {
        recentlyDeleted.insert(id)
        remove(id, reason: "deleted")
    }

    /// Reads the live relics from the store and applies what memory lacks or still holds; `done` learns how many
    /// relics were added and removed, or why the read failed (memory then stays as it was).
    package func resync(_ done: @escaping (Result<(added: Int, removed: Int), DomainError>) -> Void) {
        guard touchedRelics == nil else {
            // One read at a time; a resync asked for meanwhile gets a read of its own, begun after this one ends.
            relicResyncsWaiting.append(done)
            return
        }
        touchedRelics = []
        let store = self.store
        let now = clock.now()
        work.run(
            { () async throws(DomainError) -> [RelicMarker] in
                try await LoopWork.storage { try await store.liveRelics(now: now) }
            },
            then: { result in
                let touched = self.touchedRelics ?? []
                self.touchedRelics = nil
                defer {
                    let waiting = self.relicResyncsWaiting
                    self.relicResyncsWaiting = []
                    if !waiting.isEmpty {
                        self.resync { result in for done in waiting { done(result) } }
                    }
                }
                done(
                    result.map { stored in
                        let live = Dictionary(stored.map { ($0.id, $0) }, uniquingKeysWith: { a, _ in a })
                        var added = 0
                        var removed = 0
                        let current = self.clock.now()
                        for (id, marker) in live
                        where self.book.markers[id] == nil && !touched.contains(id)
                            && !self.recentlyDeleted.contains(id) && (marker.expiresAt ?? .max) > current
                        {
                            self.insert(marker)
                            added += 1
                        }
                        for (id, marker) in self.book.markers
                        where live[id] == nil && !touched.contains(id) && (marker.expiresAt ?? .max) > current {
                            // Created after the read began is touched; expired ones go by the sweep with their reason.
                            self.remove(id, reason: "deleted")
                            removed += 1
                        }
                        return (added, removed)
                    })
            })
    }
}
