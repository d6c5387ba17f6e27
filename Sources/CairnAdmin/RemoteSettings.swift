// Live settings across nodes. With several nodes on one shared store, an admin's change through one node is
// committed there and put in force in that node's memory; every other node holds its own values in memory. After a
// committed change is put in force, Administration tells this port; CairnNodes announces it, and what other nodes
// announce comes back here (`reread`): the node reads every stored override again, off the loop, and puts in force
// what differs from memory (a stored value, or the default where none is stored any more), each changed setting's
// feature hearing it once. The same read makes up for a missed announcement (with the catch-up reads). A read never
// puts back a value older than a local change: one begins only while no local change is being written, and one
// that a local change overlapped (put, or begun, while it read) is read again.
// Reads asked for while one is under way make one more read after it. A single node has no port. Loop thread only.
package import CairnCore

/// Where settings changed here go for the other nodes.
public protocol RemoteSettings: AnyObject {
    /// Admins' settings changed here (committed, and in force here).
    func settingsChanged()
}

/// What reading the overrides again is doing (`AdminSettings.rereads`).
struct SettingsRereads {
    /// What a read answers: how many settings changed, or why the store could not be read.
    typealias Done = (Result<Int, DomainError>) -> Void
    /// Reads every stored override off the loop and answers on the loop (set by Administration with a store).
    var read: ((@escaping (Result<[String: String], DomainError>) -> Void) -> Void)?
    /// A read is under way.
    var reading = false
    /// Those waiting for the next read to begin (and end).
    var asked: [Done] = []
}

extension AdminSettings {
    /// Reads the stored overrides again and puts in force what differs from memory; `done` learns how many settings
    /// changed, or why the read failed (memory then stays as it was). With no store, nothing changes.
    package func reread(_ done: @escaping (Result<Int, DomainError>) -> Void) {
        guard rereads.read != nil else { return done(.success(0)) }
        rereads.asked.append(done)
        startReread()
    }

    /// Begins the read asked for, unless one is under way (this one follows it) or a local change is being written
    /// (it follows that, `oneAtATime`).
    func startReread() {
        guard !rereads.asked.isEmpty, !rereads.reading, !writing, let read = rereads.read else { return }
        rereads.reading = true
        let answering = rereads.asked
        rereads.asked = []
        let began = generation
        read { [unowned self] result in
            self.rereads.reading = false
            if case .success = result, self.generation != began || self.writing {
                // A local change was put, or began to be written, while the store was read: what was read may be
                // older than memory. Read again once that change is in force.
                self.rereads.asked = answering + self.rereads.asked
            } else {
                let outcome = result.map { self.putStored($0) }
                for done in answering { done(outcome) }
            }
            self.startReread()
        }
    }
}

extension Administration {
    /// The stored overrides read off the loop, answered on the loop; nil without a store.
    static func storedSettingsReader(
        store: (any AdminStore)?, work: LoopWork
    ) -> ((@escaping (Result<[String: String], DomainError>) -> Void) -> Void)? {
        guard let store else { return nil }
        return { done in
            work.run(
                { () async throws(DomainError) -> [String: String] in
                    try await LoopWork.storage { try await store.adminSettings() }
                }, then: done)
        }
    }
}
