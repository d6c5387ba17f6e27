// An in-memory stand-in for the relic and chat parts of the store, with the same contracts as the SQLite one
// (media ownership checked on create, pages newest-limited and oldest-first, read marks that only move forward)
// and switches to make writes fail, so the hub's relic and chat ops are tested without SQLite.
public import CairnChat
public import CairnCore
import CairnLoop
public import CairnRelics
public import Synchronization

public final class MemoryContentStore: RelicStore, ChatStore {
    /// Creates an empty one.
    public init() {}

    public struct State {
        /// The empty state.
        public init() {}

        public var relics: [Int64: RelicRecord] = [:]
        public var nextRelic: Int64 = 1
        /// (media id, owner) pairs that exist.
        public var media: Set<String> = []
        public var messages: [ChatMessage] = []
        public var reads: [[Int64]: Int64] = [:]
        public var failWrites = false
    }
    public let state = Mutex(State())

    public struct InjectedFailure: Error {
        /// Creates the error.
        public init() {}
    }

    /// Deletes every relic of these creators (a guest purge); returns their ids.
    public func deleteRelics(of creators: Set<Int64>) -> [Int64] {
        state.withLock { s in
            let theirs = s.relics.values.filter { creators.contains($0.marker.creatorID) }.map(\.marker.id)
            for id in theirs { s.relics[id] = nil }
            return theirs
        }
    }

    /// Records an upload of `media` by `owner`.
    public func addMedia(_ media: String, owner: Int64) { _ = state.withLock { $0.media.insert("\(media)/\(owner)") } }

    public func loadLiveRelics(now: Int64) throws -> [RelicMarker] {
        state.withLock { s in s.relics.values.map(\.marker).filter { !$0.isExpired(at: now) } }
    }

    public func liveRelics(now: Int64) async throws -> [RelicMarker] {
        state.withLock { s in
            s.relics.values.map(\.marker).filter { !$0.isExpired(at: now) }
        }
    }

    public func createRelic(_ relic: NewRelic) async throws -> Int64 {
        try state.withLock { s in
            if s.failWrites { throw InjectedFailure() }
            if let media = relic.mediaID, !s.media.contains("\(media)/\(relic.creatorID)") {
                throw RelicStoreError.mediaNotFound
            }
            let id = s.nextRelic
            s.nextRelic += 1
            s.relics[id] = relic.record(id: id)
            return id
        }
    }

    public func relic(id: Int64) async throws -> RelicRecord? { state.withLock { $0.relics[id] } }

    public func relics(creator: Int64, before: Int64?, limit: Int) async throws -> [RelicRecord] {
        state.withLock { s in
            Array(
                s.relics.values.filter { $0.marker.creatorID == creator && $0.marker.id < (before ?? .max) }
                    .sorted { $0.marker.id > $1.marker.id }.prefix(limit))
        }
    }

    public func deleteRelic(id: Int64) async throws -> Bool {
        try state.withLock { s in
            if s.failWrites { throw InjectedFailure() }
            return s.relics.removeValue(forKey: id) != nil
        }
    }

    public func purgeExpiredRelics(expiredBefore cutoff: Int64) async throws -> Int {
        state.withLock { s in
            let old = s.relics.values.filter { ($0.marker.expiresAt ?? .max) < cutoff }.map(\.marker.id)
            for id in old { s.relics[id] = nil }
            return old.count
        }
    }

    public func saveMessage(from: Int64, to: Int64, text: String, at ts: Int64) async throws -> ChatMessage {
        try state.withLock { s in
            if s.failWrites { throw InjectedFailure() }
            let message = ChatMessage(id: Int64(s.messages.count + 1), from: from, to: to, text: text, ts: ts)
            s.messages.append(message)
            return message
        }
    }

    public func conversations(of user: Int64, limit: Int) async throws -> [ChatConversation] {
        state.withLock { s in
            var last: [Int64: ChatMessage] = [:]
            for m in s.messages where m.from == user || m.to == user { last[m.from == user ? m.to : m.from] = m }
            return last.map { peer, m in ChatConversation(peer: peer, last: m, unread: Self.unread(s, user, peer)) }
                .sorted { $0.last.id > $1.last.id }.prefix(limit).map { $0 }
        }
    }

    public func history(of user: Int64, with peer: Int64, before: Int64?, limit: Int) async throws -> [ChatMessage] {
        state.withLock { s in
            let pair = s.messages.filter { ($0.from == user && $0.to == peer) || ($0.from == peer && $0.to == user) }
                .filter { $0.id < (before ?? .max) }
            return Array(pair.suffix(limit))
        }
    }

    public func markRead(reader: Int64, peer: Int64, upto: Int64) async throws -> (upto: Int64, unread: Int)? {
        state.withLock { s in
            guard let newest = s.messages.filter({ $0.from == peer && $0.to == reader }).map(\.id).max() else {
                return nil
            }
            let mark = max(s.reads[[reader, peer]] ?? 0, min(upto, newest))
            s.reads[[reader, peer]] = mark
            return (mark, Self.unread(s, reader, peer))
        }
    }

    private static func unread(_ s: State, _ reader: Int64, _ peer: Int64) -> Int {
        let upto = s.reads[[reader, peer]] ?? 0
        return s.messages.filter { $0.from == peer && $0.to == reader && $0.id > upto }.count
    }
}
