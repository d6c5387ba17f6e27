// Chat between friends (seed 003's chat and message screens). Sending requires a friendship at the moment of
// sending; the message is committed before the answer and then pushed to every connection of the recipient and to
// the sender's other connections (so a second device shows it too). Reading history, listing conversations and
// marking read only touch the caller's own conversations and need no friendship: a former friend's messages stay
// readable. Marking read is pushed to the reader's other connections so unread badges agree across devices.
//
// Chat keeps nothing in memory: every op is one store call.
package import CairnAdmin
public import CairnCore
import CairnErrorCodes
import CairnSessions
package import CairnSocial

/// A conversation as listed: the peer's account (when it still exists), the last message and the unread count.
public struct ConversationEntry: Sendable {
    /// The conversation.
    public var conversation: ChatConversation
    /// The peer's account.
    public var peer: User?
}

/// The chat ops. Loop thread only.
public final class Chat {
    private let store: any ChatStore
    private let users: any SocialStore
    private let work: LoopWork
    private let clock: any Clock
    private let social: Social
    private let configuration: HubConfiguration
    /// The longest message in bytes: the built-in default (4,000; no configuration option sets it) at start, then
    /// the live setting `chat_text_limit`.
    private var textLimit: Int
    package var events: (any HubEvents)?

    package init(
        store: any ChatStore, users: any SocialStore, work: LoopWork, clock: any Clock, social: Social,
        configuration: HubConfiguration
    ) {
        self.store = store
        self.users = users
        self.work = work
        self.clock = clock
        self.social = social
        self.configuration = configuration
        self.textLimit = configuration.chatTextLimit
    }

    /// Registers the live setting `chat_text_limit` (the configured limit is its default).
    package func register(in settings: AdminSettings) {
        settings.registerInteger(
            "chat_text_limit", range: 1...65_536, default: Int64(configuration.chatTextLimit),
            help: "Longest chat message in bytes (UTF-8); longer ones are refused."
        ) { [unowned self] limit in self.textLimit = Int(limit) }
    }

    /// Sends a message to a friend.
    public func send(_ caller: Caller, to: Int64, text: String, _ done: @escaping Outcome<ChatMessage>) {
        let me = caller.user.id
        guard to != me else { return done(.failure(.badRequest("you cannot message yourself"))) }
        guard !text.trimmingWhitespace().isEmpty else {
            return done(.failure(.badRequest("field 'text' must not be empty")))
        }
        guard text.utf8.count <= textLimit else {
            return done(.failure(.badRequest("field 'text' must be at most \(textLimit) bytes (UTF-8)")))
        }
        guard social.areFriends(me, to) else {
            return done(
                .failure(
                    DomainError(
                        .notFriends,
                        "you can only message friends; user \(to) is not your friend")))
        }
        let store = self.store
        let now = clock.now()
        let sender = caller.connection
        work.run(
            { () async throws(DomainError) -> ChatMessage in
                try await LoopWork.storage { try await store.saveMessage(from: me, to: to, text: text, at: now) }
            },
            then: { result in
                done(result)
                guard case .success(let sent) = result else { return }
                self.events?.publish(.chatMessage(sent), toUsers: [to], excluding: nil)
                self.events?.publish(.chatMessage(sent), toUsers: [me], excluding: sender)
            })
    }

    /// The caller's conversations, most recent first.
    public func conversations(_ caller: Caller, _ done: @escaping Outcome<[ConversationEntry]>) {
        let store = self.store
        let users = self.users
        let me = caller.user.id
        let limit = configuration.chatListLimit
        work.run(
            { () async throws(DomainError) -> [ConversationEntry] in
                let conversations = try await LoopWork.storage { try await store.conversations(of: me, limit: limit) }
                let found = try await LoopWork.storage { try await users.users(ids: conversations.map(\.peer)) }
                let byID = Dictionary(found.map { ($0.id, $0) }, uniquingKeysWith: { a, _ in a })
                return conversations.map { ConversationEntry(conversation: $0, peer: byID[$0.peer]) }
            }, then: done)
    }

    /// A page of the conversation with `peer`, oldest first; the second value is true when older ones exist.
    public func history(
        _ caller: Caller, with peer: Int64, before: Int64?, limit: Int64?,
        _ done: @escaping Outcome<(messages: [ChatMessage], more: Bool)>
    ) {
        let limit = limit ?? Int64(configuration.chatHistoryDefault)
        guard peer != caller.user.id else { return done(.failure(.badRequest("field 'with' must be another user"))) }
        guard limit >= 1 && limit <= Int64(configuration.chatHistoryMax) else {
            return done(.failure(.badRequest("field 'limit' must be between 1 and \(configuration.chatHistoryMax)")))
        }
        if let before, before <= 0 { return done(.failure(.badRequest("field 'before' must be a message id"))) }
        let store = self.store
        let me = caller.user.id
        let count = Int(limit)
        work.run(
            { () async throws(DomainError) -> [ChatMessage] in
                // One more than asked tells whether an older page exists.
                try await LoopWork.storage {
                    try await store.history(of: me, with: peer, before: before, limit: count + 1)
                }
            },
            then: { result in
                done(result.map { messages in (Array(messages.suffix(count)), messages.count > count) })
            })
    }

    /// Marks the conversation with `peer` read up to a message.
    public func markRead(
        _ caller: Caller, with peer: Int64, upto: Int64,
        _ done: @escaping Outcome<(upto: Int64, unread: Int)>
    ) {
        let me = caller.user.id
        guard peer != me else { return done(.failure(.badRequest("field 'with' must be another user"))) }
        guard upto > 0 else { return done(.failure(.badRequest("field 'upto' must be a message id"))) }
        let store = self.store
        let reader = caller.connection
        work.run(
            { () async throws(DomainError) -> (upto: Int64, unread: Int) in
                guard
                    let mark = try await LoopWork.storage({
                        try await store.markRead(reader: me, peer: peer, upto: upto)
                    })
                else {
                    throw DomainError(.notFound, "user \(peer) has sent you no messages")
                }
                return mark
            },
            then: { result in
                done(result)
                guard case .success(let mark) = result else { return }
                self.events?.publish(
                    .chatRead(with: peer, upto: mark.upto, unread: mark.unread), toUsers: [me],
                    excluding: reader)
            })
    }
}
